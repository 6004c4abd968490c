//! The time from a holder's expiry to the next waiter's acquisition, on the simulator and on
//! a real server, in one scenario run on both ([`handover_scenario`]): c0 holds a mutex, c1
//! waits behind it, and c0's session is expired (on the real server as Curator's test
//! utilities do it: a second connection on the session, closed). Timed from the start of
//! the `expire_session` fault to c1's `Acquired`: the simulated server expires the session
//! at that instant; on the real server the second connection's handshake and close come
//! first (a few ms on loopback, counted in: it is how Curator's users expire a session).

use coordination::framework::FrameworkConfig;
use coordination::ids::ClientSlot;
use coordination::recipes::Notice;
use coordination::zk::Path;
use real::ClientLauncher;
use recipe_table::recipes::RecipeKind;
use scenarios::fault::{Fault, ScheduledFault};
use scenarios::scenario::{Scenario, ServerSettings, Span, Workload};
use serde::Serialize;
use sim::Sim;
use splitbrain::run::{RunError, guarded};
use splitbrain::sweep;
use trace::{EventKind, Trace};

use super::{Plan, progress, start_server};
use crate::cli::Failure;

/// When c0's session is expired, ms into the run (c0 holds, c1 waits by then).
const EXPIRE_AT_MS: u64 = 1_500;

/// The hand-over, measured on both.
#[derive(Debug, Serialize)]
pub struct Handover {
    /// The simulator's runs.
    pub sim: Times,
    /// The real server's runs.
    pub real: Times,
    /// Real runs that failed or showed no hand-over, with the first one's reason.
    pub real_failed: u64,
    /// Why the first real run failed, if one did.
    pub real_failure: Option<String>,
    /// Whether the real median lies outside the simulator's range.
    pub differs: bool,
}

/// Hand-over times of some runs, ms.
#[derive(Debug, Default, Serialize)]
pub struct Times {
    /// Each run's time, ms, in run order.
    pub ms: Vec<f64>,
}

impl Times {
    fn sorted(&self) -> Vec<f64> {
        let mut sorted = self.ms.clone();
        sorted.sort_by(f64::total_cmp);
        sorted
    }

    fn median(&self) -> Option<f64> {
        let sorted = self.sorted();
        sorted.get(sorted.len() / 2).copied()
    }

    fn summary(&self) -> String {
        let sorted = self.sorted();
        match (sorted.first(), sorted.last(), self.median()) {
            (Some(min), Some(max), Some(median)) => {
                let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
                format!("{mean:.1} / {median:.1} / {min:.1}–{max:.1} ms")
            }
            _ => "–".into(),
        }
    }
}

/// The scenario run on both with `seed`: two clients on a mutex (T = 1 s, tick 100 ms), c1
/// queued behind c0, c0's session expired while it holds; its lock path is the seed's own,
/// so that real runs made at once on one server never contend.
pub fn handover_scenario(seed: u64) -> Scenario {
    Scenario {
        name: "handover".into(),
        description: "c0 holds, c1 waits, c0's session is expired: how soon does c1 hold?".into(),
        recipe: RecipeKind::Mutex.into(),
        recipe_settings: Default::default(),
        lock_path: Path::new(&format!("/locks/handover-{seed}")).expect("a valid path"),
        clients: 2,
        workload: Workload {
            acquisitions: 1,
            hold_ms: Span::fixed(30_000),
            think_ms: Span::fixed(0),
            acquire_timeout_ms: None,
            fenced: true,
            stagger_ms: 300,
            reentrant: 1,
        },
        server: ServerSettings::standalone(100, 1_000, 1_000),
        framework: FrameworkConfig::default(),
        horizon_ms: 4_000,
        faults: vec![ScheduledFault::at(
            EXPIRE_AT_MS,
            Fault::ExpireSession { client: 0 },
        )],
        random_faults: Vec::new(),
        seeds: Default::default(),
        properties: Default::default(),
    }
}

/// ms from the start of c0's expiry to c1's first acquisition after it.
fn handover_ms(trace: &Trace) -> Option<f64> {
    let expiring = trace.events.iter().find_map(|e| match e.kind {
        EventKind::FaultStart {
            fault: Fault::ExpireSession { .. },
        } => Some(e.t),
        _ => None,
    })?;
    let acquired = trace.events.iter().find_map(|e| match e.kind {
        EventKind::Notice {
            notice: Notice::Acquired { .. },
        } if e.client == Some(ClientSlot(1)) && e.t >= expiring => Some(e.t),
        _ => None,
    })?;
    Some((acquired - expiring) as f64 / 1e6)
}

/// Measures the hand-over on the simulator (seeds 0..seeds) and on a local server (runs
/// with seeds 0..runs, in parallel on one server).
pub fn measure(plan: &Plan, launcher: &ClientLauncher) -> Result<Handover, Failure> {
    let mut sim = Times::default();
    let mut failed = None;
    let simulate = |&seed: &u64| {
        let scenario = handover_scenario(seed);
        let run = Sim::from_scenario(&scenario, seed, scenario.faults.clone());
        guarded(|| run.run().map_err(|e| RunError::Settings(e.to_string())))
    };
    sweep::in_order(
        0..plan.seeds,
        sweep::default_workers(),
        simulate,
        |seed, trace| match trace.map(|t| handover_ms(&t)) {
            Ok(Some(ms)) => sim.ms.push(ms),
            Ok(None) => {
                failed = failed
                    .take()
                    .or(Some(format!("handover seed {seed}: no hand-over")))
            }
            Err(e) => failed = failed.take().or(Some(format!("handover seed {seed}: {e}"))),
        },
    );
    if let Some(failed) = failed {
        return Err(Failure(failed));
    }
    let server = start_server(handover_scenario(0).server.tick_ms)?;
    let mut handover = Handover {
        sim,
        real: Times::default(),
        real_failed: 0,
        real_failure: None,
        differs: false,
    };
    let total = plan.runs as usize;
    let mut done = 0;
    let run_real = |&seed: &u64| {
        let scenario = handover_scenario(seed);
        let trace = real::run(&scenario, seed, &server, launcher).map_err(|f| f.message)?;
        handover_ms(&trace).ok_or_else(|| "no hand-over in the trace".to_owned())
    };
    sweep::in_order(0..plan.runs, plan.parallel, run_real, |seed, ms| {
        done += 1;
        progress("hand-over, real server", done, total, 5);
        match ms {
            Ok(ms) => handover.real.ms.push(ms),
            Err(why) => {
                eprintln!("fidelity: hand-over run {seed} failed: {why}");
                handover.real_failed += 1;
                handover
                    .real_failure
                    .get_or_insert(format!("seed {seed}: {why}"));
            }
        }
    });
    server.stop();
    let sorted = handover.sim.sorted();
    handover.differs = match (handover.real.median(), sorted.first(), sorted.last()) {
        (Some(median), Some(min), Some(max)) => median < *min || median > *max,
        _ => false,
    };
    Ok(handover)
}

/// The row, as Markdown.
pub fn markdown(handover: &Handover) -> String {
    let failed = match handover.real_failed {
        0 => String::new(),
        n => format!(" ({n} failed)"),
    };
    format!(
        "From the start of a holder's expiry to the next waiter's acquisition, mean / \
         median / range: {} simulator seeds, {} real run(s).\n\n\
         | scenario | simulator | real server | differs |\n\
         | --- | --- | --- | --- |\n\
         | c0 holds, c1 waits, c0's session expired (T = 1 s) | {} | {}{failed} | {} |\n",
        handover.sim.ms.len(),
        handover.real.ms.len(),
        handover.sim.summary(),
        handover.real.summary(),
        if handover.differs { "**yes**" } else { "no" },
    )
}
