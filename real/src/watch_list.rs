//! The watches a run's servers list at its horizon: ZooKeeper's `wchc` four-letter word (the
//! watches of each session), asked of every server of the connect string, since each server
//! knows only the watches of its own clients. A library's contenders report no requests, so
//! this is the only view of what they wait on; the report's "Who waits for whom" reads it.
//!
//! ZooKeeper 3.8's `wchc` lists the data tree's data watches, which are those left by
//! `getData` and `exists` (also on a missing node); it does not list child watches
//! (`getChildren`). A server that does not allow `wchc` (its `4lw.commands.whitelist`, on a
//! server of the user's) answers one line saying so; then nothing is recorded and the run says
//! so once on standard error, since it is not an error of the run.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Once;

use coordination::zk::{Path, SessionId};
use trace::{EventKind, ServerWatch};

use crate::local::four_letter_word;

/// The [`EventKind::WatchSnapshot`] of every server of `connect_string`
/// (`host:port[,host:port…][/chroot]`) that answers: the watches on `root` (a lock path) and
/// below it, as the tree snapshot reads them (a client library's own watches elsewhere, such as
/// Curator's on `/zookeeper/config`, are no wait of the recipe's). A server that cannot be
/// reached is left out: it is down, and its connections and their watches went with it (an
/// ensemble's killed leader); when none can be, `None`, and the run's read of the tree says why.
/// A server that answers but will not list its watches is the error: one line naming it.
pub(crate) fn watch_snapshot(
    connect_string: &str,
    root: &Path,
) -> Result<Option<EventKind>, String> {
    let mut watches = Vec::new();
    let mut answered = false;
    for addr in servers(connect_string)? {
        let Ok(answer) = four_letter_word(addr, "wchc") else {
            continue;
        };
        answered = true;
        watches.extend(parse(&answer).map_err(|why| format!("wchc of {addr}: {why}"))?);
    }
    watches.retain(|w| below(&w.path, root));
    watches.sort();
    watches.dedup();
    Ok(answered.then_some(EventKind::WatchSnapshot { watches }))
}

/// Says once per process, on standard error, that the servers' watches could not be read
/// (`why`) and what that costs.
pub(crate) fn say_unlisted(why: &str) {
    static SAID: Once = Once::new();
    SAID.call_once(|| {
        eprintln!(
            "note: the servers' watches were not read at the horizon ({why}): a report cannot \
             say what a contender waits on"
        );
    });
}

/// Whether `path` is `root` or below it.
fn below(path: &Path, root: &Path) -> bool {
    path == root || path.ancestors().contains(root)
}

/// The addresses of the servers of `connect_string`.
fn servers(connect_string: &str) -> Result<Vec<SocketAddr>, String> {
    let hosts = connect_string.split('/').next().unwrap_or_default();
    (hosts.split(','))
        .map(|host| {
            let mut addrs = host
                .to_socket_addrs()
                .map_err(|e| format!("{host}: expected host:port ({e})"))?;
            addrs
                .next()
                .ok_or_else(|| format!("{host}: the name resolves to no address"))
        })
        .collect()
}

/// The watches in a `wchc` answer: a line `0x<session>` (hex), then a line `\t<path>` per
/// path that session watches; a blank line ends the answer. Any other line (a refusal, a
/// server not serving) is the error.
fn parse(answer: &str) -> Result<Vec<ServerWatch>, String> {
    let mut watches = Vec::new();
    let mut session = None;
    for line in answer.lines().filter(|line| !line.trim().is_empty()) {
        if let Some(hex) = line.strip_prefix("0x") {
            let id = u64::from_str_radix(hex.trim(), 16)
                .map_err(|_| format!("expected a session id in hex, found {line:?}"))?;
            session = Some(SessionId(id));
        } else if let (Some(text), Some(session)) = (line.strip_prefix('\t'), session) {
            let path = Path::new(text.trim()).map_err(|e| format!("{text:?}: {e}"))?;
            watches.push(ServerWatch { session, path });
        } else {
            return Err(format!(
                "expected a session's watches, found {:?}",
                line.trim()
            ));
        }
    }
    Ok(watches)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(session: u64, path: &str) -> ServerWatch {
        ServerWatch {
            session: SessionId(session),
            path: Path::new(path).unwrap(),
        }
    }

    #[test]
    fn a_wchc_answer_is_read_as_each_sessions_watched_paths() {
        let answer = "0x1000461fe3f0001\n\t/l/x\n\t/l/nope\n0x2a\n\t/l/y\n\n";
        assert_eq!(
            parse(answer),
            Ok(vec![
                watch(0x0100_0461_fe3f_0001, "/l/x"),
                watch(0x0100_0461_fe3f_0001, "/l/nope"),
                watch(0x2a, "/l/y"),
            ])
        );
        assert_eq!(parse("\n"), Ok(Vec::new()), "no watch at all");
    }

    #[test]
    fn a_refusal_or_a_stray_line_is_one_line_saying_what_came() {
        let refused = "wchc is not executed because it is not in the whitelist.\n";
        assert_eq!(
            parse(refused),
            Err(
                "expected a session's watches, found \"wchc is not executed because it is not \
                 in the whitelist.\""
                    .to_owned()
            )
        );
        assert!(parse("0xzz\n").unwrap_err().contains("session id in hex"));
        assert!(parse("\t/l/x\n").is_err(), "a path before any session");
    }

    #[test]
    fn only_the_lock_paths_subtree_is_kept() {
        let root = Path::new("/locks/m").unwrap();
        let kept = ["/locks/m", "/locks/m/leases/lease-1"];
        let left = ["/zookeeper/config", "/locks/mm", "/locks"];
        assert!(kept.iter().all(|p| below(&Path::new(p).unwrap(), &root)));
        assert!(!left.iter().any(|p| below(&Path::new(p).unwrap(), &root)));
    }

    #[test]
    fn every_server_of_a_connect_string_is_asked_and_a_chroot_is_not_a_server() {
        let addrs = servers("127.0.0.1:2181,127.0.0.1:2182/app").unwrap();
        let ports: Vec<u16> = addrs.iter().map(SocketAddr::port).collect();
        assert_eq!(ports, [2181, 2182]);
        assert!(
            servers("127.0.0.1")
                .unwrap_err()
                .contains("expected host:port")
        );
    }
}
