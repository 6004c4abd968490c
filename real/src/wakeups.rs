//! Wake-ups counted on the server's side: ZooKeeper 3.8's `mntr` reports, per node deletion
//! that fired watches, how many watches it fired (`zk_{cnt,sum,max}_node_deleted_watch_count`,
//! the summary `WatchManager` adds to when it triggers `NodeDeleted` watches). A lock's
//! waiter watches its predecessor's node, so the watches a deletion fires are the waiters it
//! wakes, whichever client library set them.

use std::net::SocketAddr;

use crate::local::{HarnessError, four_letter_word};

/// The server's count of `NodeDeleted` watch notifications, since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeletedWatches {
    /// Deletions that fired at least one watch.
    pub deletions: u64,
    /// Watches they fired.
    pub fired: u64,
    /// The most watches one deletion fired.
    pub most: u64,
}

impl DeletedWatches {
    /// Reads the counts from `mntr` of the server at `addr`.
    pub fn read(addr: SocketAddr) -> Result<DeletedWatches, HarnessError> {
        parse(&four_letter_word(addr, "mntr")?)
            .map_err(|missing| HarnessError(format!("mntr of {addr}: expected {missing}")))
    }

    /// The counts of what happened between `before` and `self` (`most` is `self`'s: since
    /// the server started).
    pub fn since(self, before: DeletedWatches) -> DeletedWatches {
        DeletedWatches {
            deletions: self.deletions.saturating_sub(before.deletions),
            fired: self.fired.saturating_sub(before.fired),
            most: self.most,
        }
    }
}

/// The counts in `mntr`'s answer; the name of a missing line otherwise.
fn parse(mntr: &str) -> Result<DeletedWatches, &'static str> {
    let value = |name: &'static str| {
        mntr.lines()
            .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
            .ok_or(name)
    };
    Ok(DeletedWatches {
        deletions: value("zk_cnt_node_deleted_watch_count")?,
        fired: value("zk_sum_node_deleted_watch_count")?,
        most: value("zk_max_node_deleted_watch_count")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_node_deleted_watch_summary_is_read_from_mntr() {
        let mntr = "zk_version\t3.8.0\nzk_max_node_deleted_watch_count\t1\n\
                    zk_cnt_node_deleted_watch_count\t297\nzk_sum_node_deleted_watch_count\t297\n\
                    zk_sum_node_created_watch_count\t4\n";
        let counts = parse(mntr).unwrap();
        assert_eq!(
            counts,
            DeletedWatches {
                deletions: 297,
                fired: 297,
                most: 1
            }
        );
        let before = DeletedWatches {
            deletions: 7,
            fired: 9,
            most: 2,
        };
        assert_eq!(counts.since(before).fired, 288);
        assert_eq!(
            parse("zk_version\t3.8.0\n"),
            Err("zk_cnt_node_deleted_watch_count")
        );
    }
}
