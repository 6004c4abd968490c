//! The fault injector: carries out a fault schedule on simulated time, recording each fault's
//! start and end in the trace.
//!
//! - `pause`: madsim's pause/resume of the client node (it runs nothing and sends nothing;
//!   what arrives meanwhile waits in its mailbox). Overlapping pauses of one client keep it
//!   paused until the last of them ends.
//! - `partition`, `isolate`, `delay`, `drop`: rules in the wire's link table (a lost datagram
//!   is retransmitted as TCP does, see [`crate::wire`]). `heal` removes them all and ends
//!   each one.
//! - `expire_session`: the server expires the client's newest session now.
//! - `crash`: madsim restarts the client node; its driver starts over with a new session,
//!   and the old one expires on the server.
//! - `isolate_from_peers`: the selector is resolved to a server of the ensemble when the
//!   fault starts (the trace records the fault with the server it named), whose messages to
//!   and from its peers are lost from then on (`sim/src/links.rs`); a selector that names no
//!   server (a client attached to none) starts and ends at once.
//! - `cut_from_server`: the selector (by default the client's own server) is resolved as for
//!   `isolate_from_peers`; what passes between that client and that server is lost from then
//!   on, both ways (`sim/src/links.rs`), so the client's connection to it falls silent and
//!   its read timeout sends it to the next server of its list.
//! - `crash_server`: the selector is resolved as for `isolate_from_peers`; that server's
//!   machine goes down (its node stops; its connections and what is sent to it are lost,
//!   its log and applied state stay) and starts again `down_ms` later, LOOKING (see
//!   `sim/src/server/election.rs`); overlapping crashes of one server are one downtime.
//! - `pause_server`: the selector is resolved as for `isolate_from_peers`; madsim pauses that
//!   server's node for `pause_ms` (a JVM's GC pause: it runs nothing, its clients and peers
//!   notice by silence, what they send waits in its mailbox and is processed on resume).
//! - `split_servers`: the groups are resolved when the fault starts (random halves drawn
//!   from the run's seeded source; the trace records the groups as `resolved`), and every
//!   link between servers of different groups is cut as `isolate_from_peers` cuts one
//!   server's (`sim/src/links.rs`).
//! - `slow_server_links`: the selector, if any, is resolved as for `isolate_from_peers`; each
//!   message on a slowed link between servers is delivered a drawn delay late, plus a
//!   retransmission timeout per loss, after the link's previous one (`sim/src/links.rs`,
//!   `Wire::post`).
//! - `restart_server`: the server process exits (every connection closed at once) and its
//!   host refuses connections for `down_ms`; then madsim restarts the server node (state
//!   kept, see [`crate::server`]).
//!
//! Instantaneous faults record their start and end at the same instant. A network fault with
//! an `on_request` is armed at its time and starts at its client's request, a `crash_server`
//! with one at the leader's proposal of a matching write (`sim/src/trigger.rs`); each ends
//! its `for_ms` (`down_ms`) after that.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::channel::mpsc::{UnboundedSender, unbounded};
use futures::{FutureExt, StreamExt, select_biased};
use madsim::rand::Rng;
use madsim::runtime::Handle;
use madsim::task::NodeId;
use madsim::time::{Instant, sleep_until};
use scenarios::fault::{Fault, Node, ScheduledFault};
use trace::EventKind;

use crate::links::{Effect, End, Links, Rule, SlowLinks};
use crate::net::Network;
use crate::pauses::Pauses;
use crate::recorder::Recorder;
use crate::server::Control;
use crate::servers::Servers;
use crate::trigger::Armed;

/// Carries out a run's fault schedule on what it acts on.
pub struct Injector {
    /// The simulation's handle, to pause, kill and restart nodes.
    pub handle: Handle,
    /// The clients' nodes, by slot.
    pub client_nodes: Vec<NodeId>,
    /// The servers.
    pub servers: Servers,
    /// The run's network, whose link table the network faults change.
    pub network: Network,
    /// Where each fault's start and end is recorded.
    pub recorder: Recorder,
}

/// What the injector keeps of the faults under way.
#[derive(Default)]
struct UnderWay {
    /// The faults whose selectors were resolved when they started, as recorded.
    resolved: BTreeMap<usize, Fault>,
    /// Each client's pauses under way.
    pauses: BTreeMap<u16, Pauses>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// Ends come first at a tie, so that back-to-back faults do not overlap.
    End,
    Start,
    /// A fault that starts at a request is armed (see `sim/src/trigger.rs`).
    Arm,
}

impl Injector {
    /// Runs `schedule` (times from `start`) to its last step, and on until every fault armed
    /// to start at a request has started and ended.
    pub async fn run(self, start: Instant, schedule: Vec<ScheduledFault>) {
        let mut under_way = UnderWay::default();
        let mut timeline: BTreeSet<(Instant, Step, usize)> = BTreeSet::new();
        for (index, scheduled) in schedule.iter().enumerate() {
            let at = start + Duration::from_millis(scheduled.at_ms);
            if scheduled.on_request.is_some() {
                timeline.insert((at, Step::Arm, index));
                continue;
            }
            timeline.insert((at, Step::Start, index));
            if let Some(lasts) = scheduled.fault.duration_ms() {
                timeline.insert((at + Duration::from_millis(lasts), Step::End, index));
            }
        }
        let (started_tx, mut started) = unbounded();
        let mut armed = 0;
        loop {
            let next = timeline.first().copied();
            if next.is_none() && armed == 0 {
                return;
            }
            let due = async move {
                match next {
                    Some((at, ..)) => sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            select_biased! {
                index = started.next() => {
                    let index: usize = index.expect("the injector holds a sender");
                    armed -= 1;
                    let fault = &schedule[index].fault;
                    if fault.starts_at_proposal() {
                        self.start(index, fault, &schedule, &mut under_way);
                    }
                    if let Some(lasts) = schedule[index].fault.duration_ms() {
                        let end = self.network.time().now() + Duration::from_millis(lasts);
                        timeline.insert((end, Step::End, index));
                    }
                }
                () = due.fuse() => {
                    let (_, step, index) = timeline.pop_first().expect("a step was due");
                    let fault = &schedule[index].fault;
                    match step {
                        Step::Start => self.start(index, fault, &schedule, &mut under_way),
                        Step::End => {
                            let fault = under_way.resolved.get(&index).unwrap_or(fault).clone();
                            self.end(index, &fault, &mut under_way);
                        }
                        Step::Arm => {
                            self.arm(index, &schedule[index], started_tx.clone());
                            armed += 1;
                        }
                    }
                }
            }
        }
    }

    /// Arms fault `index`, which starts at a request (see `sim/src/trigger.rs`): a cut at its
    /// client's, a server's crash at the leader's proposal of any client's; `started` is told
    /// when it fires (a cut has started then, a crash is started on that word).
    fn arm(&self, index: usize, scheduled: &ScheduledFault, started: UnboundedSender<usize>) {
        let Some(trigger) = scheduled.on_request.clone() else {
            unreachable!("armed: it has an on_request");
        };
        let client = scheduled.fault.requesting_client();
        debug_assert!(client.is_some() || scheduled.fault.starts_at_proposal());
        self.network.triggers().arm(Armed {
            index,
            fault: scheduled.fault.clone(),
            client,
            trigger,
            rules: network_rules(&scheduled.fault),
            recorder: self.recorder.clone(),
            started,
        });
    }

    fn record(&self, kind: EventKind) {
        self.recorder.record(None, kind);
    }

    fn start(
        &self,
        index: usize,
        fault: &Fault,
        schedule: &[ScheduledFault],
        under_way: &mut UnderWay,
    ) {
        if let Some(fault) = self.resolved(fault) {
            self.record(EventKind::FaultStart {
                fault: fault.clone(),
            });
            match fault {
                Fault::IsolateFromPeers {
                    resolved: Some(server),
                    ..
                } => self.links().cut_from_peers(index, server),
                Fault::LagServer {
                    resolved: Some(server),
                    lag_ms,
                    ..
                } => (self.links()).lag_from_peers(index, server, Duration::from_millis(lag_ms)),
                Fault::CutFromServer {
                    client,
                    resolved: Some(server),
                    ..
                } => self.links().cut_client_from(index, client, server),
                Fault::CrashServer {
                    resolved: Some(server),
                    ..
                } => {
                    self.servers.crash(server, &self.handle);
                }
                Fault::PauseServer {
                    resolved: Some(server),
                    ..
                } => self.servers.pause(server, index, &self.handle),
                Fault::SplitServers {
                    resolved: Some(ref groups),
                    ..
                } => self.links().split_peers(index, groups.clone()),
                Fault::SlowServerLinks {
                    server, resolved, ..
                } if server.is_none() || resolved.is_some() => {
                    let slow = fault.slowness().expect("slow links");
                    let slow = SlowLinks {
                        server: resolved,
                        slow,
                    };
                    self.links().slow_peer_links(index, slow);
                }
                _ => return self.record(EventKind::FaultEnd { fault }),
            }
            under_way.resolved.insert(index, fault);
            return;
        }
        self.record(EventKind::FaultStart {
            fault: fault.clone(),
        });
        let rules = match *fault {
            Fault::Pause { client, .. } => {
                if under_way.pauses.entry(client).or_default().start(index) {
                    self.handle.pause(self.client_nodes[client as usize]);
                }
                Vec::new()
            }
            Fault::Partition { .. }
            | Fault::Isolate { .. }
            | Fault::Delay { .. }
            | Fault::Drop { .. } => network_rules(fault),
            Fault::Heal => {
                let healed = self.links().clear();
                for healed in healed {
                    let fault = (under_way.resolved.get(&healed))
                        .unwrap_or(&schedule[healed].fault)
                        .clone();
                    self.record(EventKind::FaultEnd { fault });
                }
                return self.end(index, fault, under_way);
            }
            Fault::ExpireSession { client } => {
                self.servers.control(Control::ExpireClient(client));
                return self.end(index, fault, under_way);
            }
            Fault::IsolateFromPeers { .. }
            | Fault::LagServer { .. }
            | Fault::CutFromServer { .. }
            | Fault::CrashServer { .. }
            | Fault::PauseServer { .. }
            | Fault::SplitServers { .. }
            | Fault::SlowServerLinks { .. } => {
                unreachable!("started above")
            }
            Fault::Crash { client } => {
                self.restart(self.client_nodes[client as usize]);
                return self.end(index, fault, under_way);
            }
            Fault::RestartServer { .. } => {
                if self.links().take_down(Node::Server) {
                    self.servers.control(Control::Exit);
                }
                return;
            }
        };
        let mut links = self.links();
        for rule in rules {
            links.add(index, rule);
        }
    }

    /// A fault on the servers of the ensemble, as it starts now: one addressed to a server by
    /// a selector with the server it names, a split with its groups (random halves drawn from
    /// the run's seeded source), slow links between every server as they are; `None` for any
    /// other fault.
    fn resolved(&self, fault: &Fault) -> Option<Fault> {
        match fault {
            Fault::SplitServers { .. } => {
                let servers = self.servers.nodes().len() as u16;
                let mut rng = madsim::rand::thread_rng();
                Some(fault.split_resolved(servers, |min, max| rng.gen_range(min..=max)))
            }
            Fault::SlowServerLinks { server: None, .. } => Some(fault.clone()),
            _ => {
                let server = fault.server_selector()?;
                Some(fault.resolved_to(self.servers.resolve(server)))
            }
        }
    }

    fn links(&self) -> std::sync::MutexGuard<'_, Links> {
        self.network.links()
    }

    /// Kills the node (which also closes its sockets, so the restarted node can bind them
    /// again) and runs its init again.
    fn restart(&self, node: NodeId) {
        self.handle.kill(node);
        self.handle.restart(node);
    }

    fn end(&self, index: usize, fault: &Fault, under_way: &mut UnderWay) {
        let ended = match *fault {
            Fault::Pause { client, .. } => {
                if under_way.pauses.entry(client).or_default().end(index) {
                    self.handle.resume(self.client_nodes[client as usize]);
                }
                true
            }
            Fault::Partition { .. }
            | Fault::Isolate { .. }
            | Fault::IsolateFromPeers { .. }
            | Fault::LagServer { .. }
            | Fault::SplitServers { .. }
            | Fault::SlowServerLinks { .. }
            | Fault::CutFromServer { .. }
            | Fault::Delay { .. }
            | Fault::Drop { .. } => {
                // False when a heal ended it already.
                self.links().remove(index)
            }
            Fault::RestartServer { .. } => {
                // Overlapping restarts are one downtime: the server starts at the last end.
                let node = (self.servers.standalone_node())
                    .expect("validated: only a standalone server restarts");
                if self.links().bring_up(Node::Server) {
                    self.restart(node);
                }
                true
            }
            Fault::CrashServer { resolved, .. } => {
                // None: it named no server, and ended as it started.
                if let Some(server) = resolved {
                    self.servers.recover(server, &self.handle);
                }
                resolved.is_some()
            }
            Fault::PauseServer { resolved, .. } => {
                if let Some(server) = resolved {
                    self.servers.resume(server, index, &self.handle);
                }
                resolved.is_some()
            }
            Fault::Heal | Fault::ExpireSession { .. } | Fault::Crash { .. } => true,
        };
        if ended {
            self.record(EventKind::FaultEnd {
                fault: fault.clone(),
            });
        }
    }
}

fn rule(from: End, to: End, effect: Effect) -> Rule {
    Rule { from, to, effect }
}

/// The link-table rules of a network fault (`partition`, `isolate`, `delay`, `drop`); none
/// for any other.
fn network_rules(fault: &Fault) -> Vec<Rule> {
    match *fault {
        Fault::Partition { a, b, oneway, .. } => {
            let mut rules = vec![rule(End::Is(a), End::Is(b), Effect::Cut)];
            if !oneway {
                rules.push(rule(End::Is(b), End::Is(a), Effect::Cut));
            }
            rules
        }
        Fault::Isolate { node, .. } => vec![
            rule(End::Is(node), End::Any, Effect::Cut),
            rule(End::Any, End::Is(node), Effect::Cut),
        ],
        Fault::Delay {
            from,
            to,
            min_ms,
            max_ms,
            ..
        } => {
            let effect = Effect::Delay {
                min: Duration::from_millis(min_ms),
                max: Duration::from_millis(max_ms),
            };
            vec![rule(End::Is(from), End::Is(to), effect)]
        }
        Fault::Drop {
            from, to, percent, ..
        } => vec![rule(End::Is(from), End::Is(to), Effect::Drop { percent })],
        _ => Vec::new(),
    }
}
