//! The network faults in force: cut, delayed and lossy links between the server and the
//! clients (and between one client and one server of an ensemble), the links between the
//! servers of an ensemble that are cut (one server's, or those between groups), late or slow,
//! and the nodes whose process is down (their host answers with a reset). The wire consults
//! this table for every datagram it sends; the fault injector adds and removes rules.

use std::collections::BTreeMap;
use std::time::Duration;

use madsim::rand::{GlobalRng, Rng};
use scenarios::fault::{Node, grouped_together, slow_link_delay_ms};

/// Which end of a link a rule applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Any node.
    Any,
    /// This node.
    Is(Node),
}

impl End {
    fn matches(self, node: Node) -> bool {
        match self {
            End::Any => true,
            End::Is(n) => n == node,
        }
    }
}

/// What a rule does to datagrams from `from` to `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Every datagram is lost.
    Cut,
    /// Every datagram is held back a uniformly drawn extra delay within `[min, max]`.
    Delay {
        /// Smallest extra delay.
        min: Duration,
        /// Largest extra delay.
        max: Duration,
    },
    /// Each datagram is lost with probability `percent` / 100.
    Drop {
        /// Loss probability in percent.
        percent: u8,
    },
}

/// One rule on the directed link `from → to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Sender.
    pub from: End,
    /// Receiver.
    pub to: End,
    /// What happens to the datagrams.
    pub effect: Effect,
}

/// Slow and lossy links between the servers of an ensemble (a `slow_server_links` fault):
/// those of one server, or all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowLinks {
    /// The server whose links are slow; every link between servers when `None`.
    pub server: Option<u16>,
    /// The smallest and largest extra delay of a message in ms, and the loss probability of
    /// each transmission in percent ([`slow_link_delay_ms`]'s).
    pub slow: (u64, u64, u8),
}

/// What happens to one datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It is lost.
    Lost,
    /// It is sent after this extra delay (zero: at once).
    Send(Duration),
    /// It reaches a host whose process is down, whose reset comes back after this extra
    /// delay (a reset lost on the way back makes the datagram [`Verdict::Lost`]).
    Refused(Duration),
}

/// The rules in force, each tagged with the id of the fault that installed it, and the nodes
/// that are down (with how many faults keep each down), with the handle on the run's seeded
/// source that lossy and delayed links draw from.
pub struct Links {
    rules: Vec<(usize, Rule)>,
    /// The servers of an ensemble cut off from their peers, each with its fault's id.
    peer_cuts: Vec<(usize, u16)>,
    /// The servers of an ensemble that hear their peers late, each with its lag and its
    /// fault's id.
    peer_lags: Vec<(usize, u16, Duration)>,
    /// The splits of an ensemble's servers into groups, each with its fault's id.
    peer_splits: Vec<(usize, Vec<Vec<u16>>)>,
    /// The slow links between servers, each with its fault's id.
    peer_slows: Vec<(usize, SlowLinks)>,
    /// The clients cut off from one server of an ensemble: fault id, client, server.
    client_cuts: Vec<(usize, u16, u16)>,
    down: BTreeMap<Node, usize>,
    rng: GlobalRng,
}

impl Links {
    /// No rules and every node up; lossy and delayed links will draw from `rng`.
    pub fn new(rng: GlobalRng) -> Links {
        Links {
            rules: Vec::new(),
            peer_cuts: Vec::new(),
            peer_lags: Vec::new(),
            peer_splits: Vec::new(),
            peer_slows: Vec::new(),
            client_cuts: Vec::new(),
            down: BTreeMap::new(),
            rng,
        }
    }

    /// Installs `rule` on behalf of fault `fault`.
    pub fn add(&mut self, fault: usize, rule: Rule) {
        self.rules.push((fault, rule));
    }

    /// Cuts server `server` of an ensemble off from its peers on behalf of fault `fault`.
    pub fn cut_from_peers(&mut self, fault: usize, server: u16) {
        self.peer_cuts.push((fault, server));
    }

    /// Splits the servers of an ensemble into `groups` on behalf of fault `fault`: the links
    /// between groups are cut.
    pub fn split_peers(&mut self, fault: usize, groups: Vec<Vec<u16>>) {
        self.peer_splits.push((fault, groups));
    }

    /// Slows links between servers of an ensemble on behalf of fault `fault`.
    pub fn slow_peer_links(&mut self, fault: usize, slow: SlowLinks) {
        self.peer_slows.push((fault, slow));
    }

    /// Whether servers `a` and `b` of an ensemble reach each other: neither is cut off from
    /// its peers, and every split in force has them in one group.
    pub fn peers_linked(&self, a: u16, b: u16) -> bool {
        !(self.peer_cuts.iter()).any(|&(_, cut)| cut == a || cut == b)
            && (self.peer_splits.iter()).all(|(_, groups)| grouped_together(groups, a, b))
    }

    /// The extra delay of one message from server `from` to server `to` of an ensemble on
    /// the slow links in force: for each slow fault on the link, a delay and the
    /// retransmissions of its losses, drawn from the seeded source (none drawn when no slow
    /// fault is on the link).
    pub fn peer_link_delay(&mut self, from: u16, to: u16) -> Duration {
        let Links {
            peer_slows, rng, ..
        } = self;
        let ms = (peer_slows.iter())
            .filter(|(_, slow)| {
                slow.server
                    .is_none_or(|server| server == from || server == to)
            })
            .map(|(_, slow)| slow_link_delay_ms(slow.slow, |min, max| rng.gen_range(min..=max)))
            .sum();
        Duration::from_millis(ms)
    }

    /// Cuts client `client` off from server `server` of an ensemble, both ways.
    pub fn cut_client_from(&mut self, fault: usize, client: u16, server: u16) {
        self.client_cuts.push((fault, client, server));
    }

    /// Whether a datagram between client `client` and server `server` of an ensemble is cut.
    pub fn client_cut_from(&self, client: u16, server: u16) -> bool {
        (self.client_cuts.iter()).any(|&(_, c, s)| (c, s) == (client, server))
    }

    /// Makes what server `server` of an ensemble hears from its peers reach it `lag` late,
    /// on behalf of fault `fault`.
    pub fn lag_from_peers(&mut self, fault: usize, server: u16, lag: Duration) {
        self.peer_lags.push((fault, server, lag));
    }

    /// How late what its peers send reaches server `server` of an ensemble now: the longest
    /// lag in force on it, zero when none is.
    pub fn peer_lag(&self, server: u16) -> Duration {
        (self.peer_lags.iter())
            .filter(|&&(_, lagging, _)| lagging == server)
            .map(|&(_, _, lag)| lag)
            .max()
            .unwrap_or_default()
    }

    fn len(&self) -> usize {
        self.rules.len()
            + self.peer_cuts.len()
            + self.peer_lags.len()
            + self.peer_splits.len()
            + self.peer_slows.len()
            + self.client_cuts.len()
    }

    /// Removes the rules, peer cuts, lags, splits, slow links and client cuts of fault
    /// `fault`; true when it had any.
    pub fn remove(&mut self, fault: usize) -> bool {
        let before = self.len();
        self.rules.retain(|(id, _)| *id != fault);
        self.peer_cuts.retain(|(id, _)| *id != fault);
        self.peer_lags.retain(|(id, ..)| *id != fault);
        self.peer_splits.retain(|(id, _)| *id != fault);
        self.peer_slows.retain(|(id, _)| *id != fault);
        self.client_cuts.retain(|(id, ..)| *id != fault);
        self.len() != before
    }

    /// Removes every rule, peer cut, lag, split, slow link and client cut; returns the ids of
    /// the faults that had some, in order (the rules' faults first, then the cuts', the lags',
    /// the splits', the slow links', the client cuts').
    pub fn clear(&mut self) -> Vec<usize> {
        let rules = self.rules.drain(..).map(|(id, _)| id);
        let mut ids: Vec<usize> = rules
            .chain(self.peer_cuts.drain(..).map(|(id, _)| id))
            .chain(self.peer_lags.drain(..).map(|(id, ..)| id))
            .chain(self.peer_splits.drain(..).map(|(id, _)| id))
            .chain(self.peer_slows.drain(..).map(|(id, _)| id))
            .chain(self.client_cuts.drain(..).map(|(id, ..)| id))
            .collect();
        ids.dedup();
        ids
    }

    /// One more fault keeps `node`'s process down: while it is down, what reaches it is
    /// refused. True when it was up (overlapping restarts make one longer downtime).
    pub fn take_down(&mut self, node: Node) -> bool {
        let holds = self.down.entry(node).or_default();
        *holds += 1;
        *holds == 1
    }

    /// One fault fewer keeps `node` down; true when it is up again.
    pub fn bring_up(&mut self, node: Node) -> bool {
        match self.down.get_mut(&node) {
            Some(holds) if *holds > 1 => {
                *holds -= 1;
                false
            }
            Some(_) => {
                self.down.remove(&node);
                true
            }
            None => false,
        }
    }

    /// Decides the fate of one datagram from `from` to `to`, drawing from the seeded source
    /// for lossy and delayed links (one draw per matching rule, in installation order; none
    /// when no rule matches); a datagram that reaches a node that is down is refused, its
    /// reset subject to the way back.
    pub fn verdict(&mut self, from: Node, to: Node) -> Verdict {
        match self.link(from, to) {
            Verdict::Send(there) if self.down.contains_key(&to) => match self.link(to, from) {
                Verdict::Send(back) => Verdict::Refused(there + back),
                _ => Verdict::Lost,
            },
            verdict => verdict,
        }
    }

    /// What the rules do to one datagram from `from` to `to`.
    fn link(&mut self, from: Node, to: Node) -> Verdict {
        let Links { rules, rng, .. } = self;
        let mut delay = Duration::ZERO;
        for (_, rule) in rules.iter() {
            if !(rule.from.matches(from) && rule.to.matches(to)) {
                continue;
            }
            match rule.effect {
                Effect::Cut => return Verdict::Lost,
                Effect::Drop { percent } => {
                    if rng.gen_range(0..100u8) < percent {
                        return Verdict::Lost;
                    }
                }
                Effect::Delay { min, max } => delay += rng.gen_range(min..=max),
            }
        }
        Verdict::Send(delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use madsim::rand::thread_rng;
    use madsim::runtime::Runtime;

    const S: Node = Node::Server;
    const C0: Node = Node::Client(0);
    const C1: Node = Node::Client(1);

    fn rule(from: End, to: End, effect: Effect) -> Rule {
        Rule { from, to, effect }
    }

    /// Runs `check` with a link table drawing from the simulator's seeded RNG.
    fn with_links<R: Send + 'static>(
        seed: u64,
        check: impl FnOnce(Links) -> R + Send + 'static,
    ) -> R {
        let rt = Runtime::with_seed_and_config(seed, madsim::Config::default());
        rt.block_on(async move { check(Links::new(thread_rng())) })
    }

    #[test]
    fn a_clear_table_sends_everything_without_a_draw() {
        let next_draw = |ask: bool| {
            with_links(3, move |mut links| {
                if ask {
                    assert_eq!(links.verdict(C0, S), Verdict::Send(Duration::ZERO));
                }
                links.add(0, rule(End::Any, End::Any, Effect::Drop { percent: 50 }));
                assert!(links.remove(0));
                assert!(links.take_down(S));
                assert!(links.bring_up(S));
                if ask {
                    assert_eq!(links.verdict(S, C0), Verdict::Send(Duration::ZERO));
                }
                thread_rng().r#gen::<u64>()
            })
        };
        assert_eq!(
            next_draw(true),
            next_draw(false),
            "the verdicts drew nothing"
        );
    }

    #[test]
    fn a_one_way_cut_loses_one_direction_only() {
        with_links(1, a_one_way_cut);
    }

    fn a_one_way_cut(mut links: Links) {
        links.add(0, rule(End::Is(C0), End::Is(S), Effect::Cut));
        assert_eq!(links.verdict(C0, S), Verdict::Lost);
        assert_eq!(links.verdict(S, C0), Verdict::Send(Duration::ZERO));
        assert_eq!(links.verdict(C1, S), Verdict::Send(Duration::ZERO));
        assert!(links.remove(0));
        assert!(!links.remove(0));
        assert_eq!(links.verdict(C0, S), Verdict::Send(Duration::ZERO));
    }

    #[test]
    fn delays_stay_in_range_and_drops_lose_about_their_share() {
        with_links(2, delays_and_drops);
    }

    fn delays_and_drops(mut links: Links) {
        let (min, max) = (Duration::from_millis(5), Duration::from_millis(9));
        links.add(3, rule(End::Any, End::Is(C1), Effect::Delay { min, max }));
        links.add(4, rule(End::Is(S), End::Any, Effect::Drop { percent: 50 }));
        let mut lost = 0;
        for _ in 0..1000 {
            match links.verdict(S, C1) {
                Verdict::Lost => lost += 1,
                Verdict::Send(d) => assert!(min <= d && d <= max, "{d:?}"),
                Verdict::Refused(_) => panic!("no node is down"),
            }
        }
        assert!((400..600).contains(&lost), "lost {lost} of 1000");
        assert_eq!(links.clear(), [3, 4]);
        assert_eq!(links.verdict(S, C1), Verdict::Send(Duration::ZERO));
    }

    #[test]
    fn a_node_that_is_down_refuses_unless_a_cut_loses_the_datagram_or_its_reset() {
        with_links(3, refusals);
    }

    fn refusals(mut links: Links) {
        assert!(links.take_down(S));
        assert!(!links.take_down(S), "already down");
        assert!(!links.bring_up(S), "still down for the other fault");
        assert_eq!(links.verdict(C0, S), Verdict::Refused(Duration::ZERO));
        links.add(1, rule(End::Is(S), End::Is(C0), Effect::Cut));
        assert_eq!(links.verdict(C0, S), Verdict::Lost, "reset lost");
        links.add(2, rule(End::Is(C1), End::Is(S), Effect::Cut));
        assert_eq!(links.verdict(C1, S), Verdict::Lost, "datagram lost");
        assert!(links.bring_up(S));
        assert!(!links.bring_up(S), "not down");
        links.clear();
        assert_eq!(links.verdict(C0, S), Verdict::Send(Duration::ZERO));
    }
}
