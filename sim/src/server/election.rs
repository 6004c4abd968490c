//! Leader election in a simulated ensemble (`sim/src/server/member.rs`), after ZooKeeper
//! 3.8's `QuorumPeer`, `FastLeaderElection`, `Leader` and `Learner`.
//!
//! - **Failure detection.** A follower goes LOOKING syncLimit ticks after it last heard its
//!   leader, at that instant (`Learner`'s read timeout on the leader's socket). A leader checks
//!   on every other ping, once a tick (`Leader.lead()`'s `tickSkip`), that it hears a quorum of
//!   followers, and goes LOOKING when it does not: up to a tick after the followers it stopped
//!   hearing gave up on it, a window in which it still serves its clients. A server that goes
//!   LOOKING drops its clients and serves none until it follows or leads again. A follower's
//!   LOOKING vote tells its leader that it left (ZooKeeper's follower closes its socket to
//!   the leader), so a leader resumed from a pause steps down at its next check. A crashed
//!   server is a machine that went down (no reset closes its peers' links), so its peers
//!   notice it by that silence too; a restarted one starts LOOKING.
//! - **The vote.** A LOOKING server sends its vote — its epoch, its last logged entry's epoch
//!   and its log's length (ZooKeeper's last zxid), its id — to every peer every tick/2. Once
//!   it has heard fresh votes (within a tick) from a quorum including itself and
//!   [`ELECTION_MS`] has passed since it started looking, the best vote wins: the server that
//!   holds it leads the next epoch, and tells every peer. A LOOKING server that hears a
//!   leader (elected now, or leading already: the answer to its vote) follows it.
//! - **Synchronisation.** A follower sends the leader its join; the leader answers with its
//!   whole log and how far it is committed, which the follower's log becomes (entries a
//!   deposed leader logged but no quorum took are discarded there; committed ones are in
//!   every elected leader's log, since its vote was the best of a quorum). The follower
//!   serves once synced; the leader serves once a quorum has taken its log (which commits
//!   the entries it inherited) and then re-arms every session it holds with a full timeout
//!   (`SessionTrackerImpl` started afresh by the new leader's `ZooKeeperServer`).
//!
//! Not modelled: initLimit (a new leader waits syncLimit ticks for its quorum to join),
//! FLE's logical clocks and rounds (a vote is fresh for a tick), and the leader's proposal of
//! its epoch to the followers (`NEWEPOCH`, `ACKEPOCH`), folded into the join.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::time::Duration;

use coordination::zk::SessionId;
use frontend::FrontEnd;
use madsim::rand::Rng;
use madsim::time::Instant;

use super::member::{Entry, Member, Peer};
use super::sync_limit::SyncLimitCheck;
use super::{Out, State};
use crate::settings::tick;

/// How long an election takes from a server's going LOOKING to the winner's leading, in ms
/// (drawn from the run's seed for each server that goes LOOKING): FLE's exchange of
/// notifications over a LAN (a few round trips of a few ms), then `finalizeWait`
/// (`FastLeaderElection.finalizeWait`, 200 ms without a better vote before deciding), then
/// the new leader's epoch handshake with its followers (`FOLLOWERINFO`, `LEADERINFO`,
/// `ACKEPOCH`, a few round trips): 200 ms at the least. The upper end, 400 ms, is an
/// estimate (not measured here) leaving room for those round trips and a JVM's scheduling.
pub const ELECTION_MS: RangeInclusive<u64> = 200..=400;

/// A server's standing in an election, compared as FLE compares votes: the higher epoch,
/// then the later last entry (its epoch, then the log's length), then the higher id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Vote {
    /// The epoch of the leader it last followed or led.
    pub(super) epoch: u32,
    /// Its last logged entry's epoch.
    pub(super) last: u32,
    /// How many entries it has logged.
    pub(super) logged: usize,
    /// Its id.
    pub(super) sid: u16,
}

/// What a server of an ensemble is doing.
pub(super) enum Role {
    /// LOOKING: it decides no earlier than `decide`, on the fresh votes it heard (with when).
    Looking {
        decide: Instant,
        votes: BTreeMap<u16, (Vote, Instant)>,
    },
    /// Following `leader`; `synced` once it took the leader's log.
    Following { leader: u16, synced: bool },
    /// Leading since `since`, checking its quorum on every other ping (`tick_skip`: whether
    /// the next ping skips the check, as `Leader.lead()`'s loop counts ticks), deciding on
    /// `prep` (its committed state with every change it proposed since), with per follower
    /// what it acknowledged (`None`: sent the log, not acknowledged yet), and per session the
    /// server that owns it (where the session was opened or last revalidated).
    Leading {
        since: Instant,
        tick_skip: bool,
        prep: Box<FrontEnd>,
        followers: BTreeMap<u16, Option<Acked>>,
        owners: BTreeMap<SessionId, u16>,
    },
}

impl Role {
    /// Leading from `since`, deciding on `prep`, with `followers` (no session owned yet).
    pub(super) fn leading(
        since: Instant,
        prep: Box<FrontEnd>,
        followers: BTreeMap<u16, Option<Acked>>,
    ) -> Self {
        Role::Leading {
            since,
            tick_skip: true,
            prep,
            followers,
            owners: BTreeMap::new(),
        }
    }
}

/// A follower that has acknowledged its leader's log: how much of it, and the check that it
/// keeps up, which starts with that acknowledgement.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Acked {
    /// How many entries of the log it acknowledged.
    pub(super) logged: usize,
    /// Whether it acknowledges the proposals sent since in time.
    pub(super) check: SyncLimitCheck,
}

impl State {
    /// Goes LOOKING: drops its clients (the returned resets) and starts an election that
    /// decides no earlier than a drawn [`ELECTION_MS`] from now.
    pub(super) fn look(&mut self) -> Vec<Out> {
        let now = self.time.now();
        let drawn = madsim::rand::thread_rng().gen_range(ELECTION_MS);
        self.member().role = Role::Looking {
            decide: now + Duration::from_millis(drawn),
            votes: BTreeMap::new(),
        };
        self.stop_serving()
    }

    /// A LOOKING peer's vote: counted while looking, answered with the epoch while leading.
    /// A leader's follower that looks has left it (ZooKeeper's follower closes its socket to
    /// the leader, whose `LearnerHandler` ends): it counts toward the leader's quorum again
    /// once it joins. A vote from the leader this server follows is not its leader's word
    /// (that server is back from a crash, looking): it does not keep this server following,
    /// which only syncLimit of the leader's silence ends.
    pub(super) fn on_looking(&mut self, from: u16, vote: Vote) {
        let now = self.time.now();
        let member = self.member();
        if member.leader() != Some(from) {
            member.heard.insert(from, now);
        }
        let (me, epoch) = (member.id, member.epoch);
        match &mut member.role {
            Role::Looking { votes, .. } => {
                votes.insert(from, (vote, now));
                self.elect();
            }
            Role::Leading { followers, .. } => {
                followers.remove(&from);
                member.post(from, Peer::Leading { from: me, epoch });
            }
            Role::Following { .. } => {}
        }
    }

    /// A peer leads: a LOOKING server follows it and asks to join.
    pub(super) fn on_leading(&mut self, from: u16, _epoch: u32) {
        let now = self.time.now();
        let member = self.member();
        member.heard.insert(from, now);
        if let Role::Looking { .. } = member.role {
            member.role = Role::Following {
                leader: from,
                synced: false,
            };
            let me = member.id;
            member.post(from, Peer::Join { from: me });
        }
    }

    /// A follower joins this leader: it gets the log and how far it is committed; the check
    /// that it keeps up starts once it acknowledges that log.
    pub(super) fn on_join(&mut self, from: u16) {
        let now = self.time.now();
        let member = self.member();
        let Role::Leading { followers, .. } = &mut member.role else {
            return;
        };
        followers.insert(from, None);
        member.heard.insert(from, now);
        let sync = Peer::Sync {
            from: member.id,
            epoch: member.epoch,
            log: member.log.clone(),
            committed: member.committed,
        };
        member.post(from, sync);
    }

    /// The leader this server joins sends its log: this server's log becomes it, and it
    /// serves, applying what is committed.
    pub(super) fn on_sync(
        &mut self,
        from: u16,
        epoch: u32,
        log: Vec<Entry>,
        committed: usize,
        out: &mut Vec<Out>,
    ) {
        let now = self.time.now();
        let member = self.member();
        let Role::Following {
            leader,
            synced: false,
        } = member.role
        else {
            return;
        };
        if leader != from {
            return;
        }
        debug_assert!(
            member.applied <= log.len(),
            "a leader's log holds every committed entry"
        );
        member.role = Role::Following {
            leader,
            synced: true,
        };
        member.epoch = epoch;
        member.log = log;
        member.committed = member.committed.max(committed).min(member.log.len());
        member.serving = true;
        member.heard.insert(leader, now);
        let (me, logged) = (member.id, member.log.len());
        member.post(
            leader,
            Peer::Ack {
                from: me,
                epoch,
                logged,
            },
        );
        self.catch_up(out);
    }

    /// A follower acknowledges the log up to `logged`: the leader commits what a quorum has.
    /// Its first acknowledgement (of the log it joined with) starts its [`SyncLimitCheck`].
    pub(super) fn on_ack(&mut self, from: u16, epoch: u32, logged: usize, out: &mut Vec<Out>) {
        let now = self.time.now();
        let member = self.member();
        if member.epoch != epoch {
            return;
        }
        let Role::Leading { followers, .. } = &mut member.role else {
            return;
        };
        let Some(acked) = followers.get_mut(&from) else {
            return;
        };
        let acked = acked.get_or_insert_with(Acked::default);
        acked.logged = acked.logged.max(logged);
        acked.check.acked(logged);
        member.heard.insert(from, now);
        self.advance(out);
    }

    /// Every tick/2: the leader drops each follower that left a proposal unacknowledged for
    /// syncLimit ([`SyncLimitCheck`]) or went unheard that long and pings the others, and on
    /// every other ping (once a tick, as `Leader.lead()` counts ticks) checks that it hears a
    /// quorum; a LOOKING server sends its vote to every peer and decides if it can. A leader
    /// that lost its quorum goes LOOKING: up to a tick after the followers it stopped hearing
    /// timed out on it ([`State::read_timeout`]), a window in which it still serves its
    /// clients, and answers their sessions from its own tracker.
    pub(super) fn beat(&mut self) -> Vec<Out> {
        let now = self.time.now();
        let member = self.member();
        let sync_limit = member.sync_limit;
        let heard_within = |at: &Instant| now.duration_since(*at) < sync_limit;
        // A link silent for syncLimit is torn down first: a new one carries what follows.
        let silent: Vec<u16> = (member.heard.iter())
            .filter(|(_, at)| !heard_within(at))
            .map(|(&peer, _)| peer)
            .collect();
        for peer in silent {
            member.tear_down(peer);
        }
        member.drop_overdue(now);
        let me = member.id;
        let quorum = member.quorum();
        let heard = &member.heard;
        let alive = match &mut member.role {
            Role::Leading {
                since,
                tick_skip,
                followers,
                ..
            } => {
                let checks = !std::mem::replace(tick_skip, !*tick_skip);
                let synced = (followers.keys())
                    .filter(|f| heard.get(f).is_some_and(heard_within))
                    .count();
                let alive = !checks || heard_within(since) || synced + 1 >= quorum;
                member.post_commits();
                alive
            }
            Role::Following { .. } => true,
            Role::Looking { .. } => {
                let vote = member.vote();
                for peer in member.peers() {
                    member.post(peer, Peer::Looking { from: me, vote });
                }
                self.elect();
                true
            }
        };
        if alive { Vec::new() } else { self.look() }
    }

    /// A follower's read timeout on its leader's socket (`Learner`'s, syncLimit × tick, timed
    /// to the instant, not to a ping): one that has not heard its leader for that long goes
    /// LOOKING.
    pub(super) fn read_timeout(&mut self) -> Vec<Out> {
        let now = self.time.now();
        match self.member().read_deadline() {
            Some(deadline) if deadline <= now => self.look(),
            _ => Vec::new(),
        }
    }

    /// A LOOKING server past its decision time that has heard fresh votes from a quorum
    /// including itself leads the next epoch if its vote is the best.
    fn elect(&mut self) {
        let now = self.time.now();
        let fresh = tick(&self.settings);
        let member = self.member();
        let Role::Looking { decide, votes } = &member.role else {
            return;
        };
        if now < *decide {
            return;
        }
        let mine = member.vote();
        let heard: Vec<Vote> = (votes.values())
            .filter(|(_, at)| now.duration_since(*at) < fresh)
            .map(|(vote, _)| *vote)
            .chain([mine])
            .collect();
        let best = heard.iter().max().copied();
        if heard.len() < member.quorum() || best != Some(mine) {
            return;
        }
        let prep = Box::new(self.prepared());
        let member = self.member();
        member.epoch = mine.epoch + 1;
        member.role = Role::leading(now, prep, BTreeMap::new());
        let (me, epoch) = (member.id, member.epoch);
        for peer in member.peers() {
            member.post(peer, Peer::Leading { from: me, epoch });
        }
    }
}

impl Member {
    /// When a follower's read timeout on its leader ends unless it hears the leader before
    /// ([`State::read_timeout`]); `None` for a leader or a LOOKING server.
    pub(super) fn read_deadline(&self) -> Option<Instant> {
        let Role::Following { leader, .. } = self.role else {
            return None;
        };
        // Every peer is in `heard` from the start.
        (self.heard.get(&leader)).map(|&at| at + self.sync_limit)
    }

    /// A leader drops each follower that left a proposal unacknowledged for syncLimit
    /// ([`SyncLimitCheck`]), or that it has not heard for syncLimit since it acknowledged the
    /// leader's log (its `LearnerHandler`'s read timeout on the follower's socket):
    /// `LearnerHandler.shutdown()` closes the connection, so the leader proposes nothing more
    /// to it, and the follower reads the close after what was sent before it. The follower
    /// counts again once it joins.
    fn drop_overdue(&mut self, now: Instant) {
        let limit = self.sync_limit;
        let heard = &self.heard;
        let Role::Leading { followers, .. } = &mut self.role else {
            return;
        };
        let silent = |follower: &u16| {
            heard
                .get(follower)
                .is_none_or(|at| now.duration_since(*at) >= limit)
        };
        // Only a follower that acknowledged the log is checked.
        let overdue: Vec<u16> = (followers.iter())
            .filter_map(|(&follower, acked)| Some((follower, (*acked)?)))
            .filter(|(follower, acked)| acked.check.overdue(now, limit) || silent(follower))
            .map(|(follower, _)| follower)
            .collect();
        for follower in &overdue {
            followers.remove(follower);
        }
        let epoch = self.epoch;
        for follower in overdue {
            self.post(follower, Peer::Close { epoch });
        }
    }
}
