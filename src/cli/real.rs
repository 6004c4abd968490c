//! `splitbrain real <scenario|file.json>` runs a scenario on a real ZooKeeper — one the user
//! runs (`--connect`), or a standalone server or ensemble the harness starts from Debian's
//! `zookeeper` package (`--start-local`, `--ensemble N`) and always stops — and writes each
//! run's trace (`source: "real"`) and HTML report. It exits 0 only when the scenario's
//! expectations are met over the runs. With `--seeds A..B` it sweeps instead, one run per seed
//! ([`sweep`]).

pub mod matrix;
pub(crate) mod sweep;

mod library;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ::scenarios::fault::{DEFAULT_RESTART_DOWN_MS, Fault, ScheduledFault};
use ::scenarios::scenario::{Scenario, SeedRange};
use ::trace::EventKind;
use coordination::recipes::Call;
use real::ClientLauncher;
use real::CuratorPlacement;
use real::contender::Library;
use real::curator::fifo::out_of_order_grants;
use real::local::Settings;
use real::target::Target;
use real::wakeups::DeletedWatches;
use splitbrain::files::{write_atomic, write_json};
use splitbrain::run::Outcome as RunOutcome;
use std::net::SocketAddr;

use library::{Choice, Selection};

use super::{
    CatalogArgs, Failure, Outcome, UNMET, find, outcome_json, report_html, violation_line,
};

/// Arguments of `real`.
#[derive(clap::Args, Clone, Debug)]
#[command(group(clap::ArgGroup::new("server").required(true).args(["connect", "start_local"])))]
#[command(group(clap::ArgGroup::new("placement").args(["contenders", "in_place"])))]
pub struct Args {
    /// The scenario to run: a name of the catalog (see `splitbrain scenarios`) or a scenario
    /// file (`*.json`).
    scenario: String,
    #[command(flatten)]
    server: ServerArgs,
    /// With --ensemble: also SIGKILL the ensemble's leader this many ms into each run and
    /// start it again on its data 2 s later — a `restart_server` added to the scenario's
    /// faults, refused like any fault that overlaps another restart, and in the trace like
    /// any fault.
    #[arg(long, value_name = "MS", requires = "ensemble")]
    kill_leader_at: Option<u64>,
    /// The seed whose fault schedule (and hold and think times) the runs use.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How many times to run the scenario with that seed (real runs differ from one another).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: u32,
    /// Sweep instead: one run per seed of `A..B` (B excluded), each under its seed's fault
    /// schedule (fixed, request-triggered and drawn faults), as `--seed` runs one; writes
    /// summary.json and index.html, and keeps only the first violating runs' traces. A seed
    /// whose schedule draws a fault with no real counterpart is refused and counted.
    #[arg(long, value_name = "A..B", conflicts_with_all = ["seed", "runs", "curator", "contenders"])]
    seeds: Option<SeedRange>,
    /// With --seeds: keep the trace and report of the first K violating runs of each
    /// property, and nothing of the other runs.
    #[arg(long, value_name = "K", default_value_t = 3, requires = "seeds")]
    keep: usize,
    /// With --seeds and --start-local: make this many runs at once, each on servers of its
    /// own (the runs' timing then competes for the machine's cores).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "seeds", conflicts_with = "connect", value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
    /// Print JSON: per run, the object `replay --json` prints (plus `"run"` and `"target"`);
    /// an array of them with --runs above 1; with --seeds, the sweep's summary.
    #[arg(long)]
    json: bool,
    /// Where to write each run's trace and HTML report (with --seeds, the summary too).
    #[arg(long, value_name = "DIR", default_value = "splitbrain-out/real")]
    out: PathBuf,
    /// Also run N Java processes with Apache Curator 5's own counterpart of the scenario's
    /// recipe on its lock path, beside its clients (needs Debian's libcurator-*-java):
    /// InterProcessMutex for `mutex`, InterProcessSemaphoreMutex for `semaphore-mutex`,
    /// InterProcessSemaphoreV2 (the scenario's max_leases) for `semaphore`,
    /// InterProcessReadWriteLock for `read-write-lock`, LeaderLatch for `leader-latch`,
    /// LeaderSelector for `leader-selector`; other recipes are refused. The run then also
    /// checks that grants follow the queue across languages, and counts the waiters each
    /// release wakes from the server's `mntr`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=32))]
    curator: Option<u16>,
    /// Run Curator's own recipe (as for --curator) in place of the scenario's clients: one
    /// Java process per client, each through its own proxy, so that the scenario's network
    /// faults cut Curator's own client off; a pause stops a Java process (SIGSTOP, then
    /// SIGCONT), an expire_session ends its session from the executor, and a crash SIGKILLs it
    /// and starts another in its place.
    #[arg(long, conflicts_with = "curator")]
    curator_in_place: bool,
    /// Run a recipe library's own contenders, each a process driven over the contender
    /// protocol: `curator` (Apache Curator 5, as for --curator), `kazoo` (Kazoo's Lock,
    /// Semaphore, ReadLock/WriteLock or Election, in the Python SPLITBRAIN_PYTHON names,
    /// else python3; in place only), `zookeeper-async` (the Rust crate's shared_lock or
    /// LeaderLatch, in this binary; in place only), `zookeeper-client` (the Rust crate's
    /// Client::lock with Curator's node names, in this binary) or the path of a program of
    /// yours that speaks the protocol. With --contenders N beside the scenario's clients, or --in-place.
    #[arg(long, value_name = "LIBRARY", value_parser = Choice::parse, requires = "placement", conflicts_with_all = ["curator", "curator_in_place"])]
    library: Option<Choice>,
    /// With --library: run N contenders beside the scenario's clients, on its lock path.
    #[arg(long, value_name = "N", requires = "library", value_parser = clap::value_parser!(u16).range(1..=32))]
    contenders: Option<u16>,
    /// With --library: run one contender in place of each of the scenario's clients, each
    /// through its own proxy, under every fault of the scenario (as for --curator-in-place).
    #[arg(long, requires = "library", conflicts_with = "contenders")]
    in_place: bool,
    #[command(flatten)]
    catalog: CatalogArgs,
}

/// Which ZooKeeper runs go to: one the user runs, or servers started for each run. `real` and
/// `real-matrix` take the same flags; each requires `--connect` or `--start-local`.
#[derive(clap::Args, Clone, Debug)]
#[group(skip)]
pub struct ServerArgs {
    /// Run against the ZooKeeper at these addresses (`127.0.0.1:2181[,host:port…]`). It must
    /// accept a session within the scenario's session timeout (at least 1 s).
    #[arg(long, value_name = "HOST:PORT[,…]")]
    connect: Option<String>,
    /// Start a ZooKeeper from Debian's `zookeeper` package on 127.0.0.1 (free ports, a
    /// temporary directory, the scenario's tick) for each run, and stop it afterwards.
    #[arg(long)]
    start_local: bool,
    /// With --start-local: start an ensemble of this many servers instead of a standalone
    /// server (`restart_server` then kills and restarts the leader).
    #[arg(long, value_name = "N", requires = "start_local", value_parser = clap::value_parser!(u32).range(2..=7))]
    ensemble: Option<u32>,
}

impl ServerArgs {
    /// The flags, as `real` takes them.
    fn flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        if let Some(connect) = &self.connect {
            flags.extend(["--connect".to_owned(), connect.clone()]);
        }
        if self.start_local {
            flags.push("--start-local".to_owned());
        }
        if let Some(servers) = self.ensemble {
            flags.extend(["--ensemble".to_owned(), servers.to_string()]);
        }
        flags
    }

    /// How many servers the harness starts for each run (`None` with `--connect`).
    fn local_servers(&self) -> Option<u16> {
        let servers = self.ensemble.unwrap_or(1);
        self.start_local
            .then(|| u16::try_from(servers).unwrap_or(u16::MAX))
    }

    /// What the servers are: `standalone`, `ensemble-N`, or `--connect`'s addresses.
    fn target(&self) -> String {
        match (&self.connect, self.ensemble) {
            (Some(connect), _) => connect.clone(),
            (None, Some(servers)) => format!("ensemble-{servers}"),
            (None, None) => "standalone".to_owned(),
        }
    }
}

/// Runs the command.
pub fn run(args: Args) -> Outcome {
    let scenario = load(&args)?;
    if let Some(seeds) = args.seeds {
        return sweep::run(&args, &scenario, seeds);
    }
    if let Some(refused) = refusal(&args, &scenario, args.seed) {
        return Err(Failure(refused));
    }
    let prepared = contenders(&args, &scenario)?;
    let contenders = prepared
        .as_ref()
        .map(|(library, at)| (library.as_ref(), *at));
    let mut outcomes = Vec::new();
    let mut printed = Vec::new();
    let mut out_of_order_runs = 0;
    for run in 1..=args.runs {
        let (outcome, interop) = run_once(&args, &scenario, run, contenders)?;
        let (trace, report) = write_outputs(&args, &scenario, run, &outcome)?;
        if args.json {
            let mut json = outcome_json(&outcome, &trace, Some(&report));
            json["run"] = run.into();
            json["target"] = outcome.trace.meta.settings["target"].clone();
            if let (Some(interop), Some((library, _))) = (&interop, contenders) {
                json[library.name().to_lowercase()] = interop.json();
            }
            printed.push(json);
        } else {
            print_run(&args, run, &outcome, &trace, &report);
            if let Some(interop) = &interop {
                interop.print();
            }
        }
        out_of_order_runs += usize::from(interop.is_some_and(|i| !i.out_of_order.is_empty()));
        outcomes.push(outcome);
    }
    let mut unmet = unmet(&scenario, &outcomes);
    if out_of_order_runs > 0 {
        unmet.push(format!(
            "grants out of queue order in {out_of_order_runs} of {} run(s)",
            outcomes.len()
        ));
    }
    if args.json {
        let json = match printed.len() {
            1 => printed.remove(0),
            _ => serde_json::Value::Array(printed),
        };
        say!("{}", serde_json::to_string_pretty(&json)?);
    } else if unmet.is_empty() {
        say!("expectations met over {} run(s)", outcomes.len());
    } else {
        say!("expectations not met: {}", unmet.join("; "));
    }
    Ok(if unmet.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(UNMET)
    })
}

/// Why seed `seed`'s run of `scenario` cannot be made as `args` ask, if it cannot: one line
/// naming the first fault of its schedule with no real counterpart, or what the chosen
/// library's contenders cannot run.
fn refusal(args: &Args, scenario: &Scenario, seed: u64) -> Option<String> {
    let schedule = scenario.fault_schedule(seed);
    real::faults::refusal(scenario, seed, &schedule, args.server.local_servers())
        .or_else(|| Selection::of(args, scenario)?.refusal(scenario, &schedule, seed))
}

/// A library's contenders ready to run ([`Selection::prepare`]), and where they run.
type Prepared = (Box<dyn Library>, CuratorPlacement);

/// The contenders `args` ask for, if any, ready to run.
fn contenders(args: &Args, scenario: &Scenario) -> Result<Option<Prepared>, Failure> {
    Selection::of(args, scenario)
        .map(|selection| Ok((selection.prepare()?, selection.placement)))
        .transpose()
}

/// These arguments for a run of `seed` (a sweep's run).
fn with_seed(args: &Args, seed: u64) -> Args {
    Args {
        seed,
        ..args.clone()
    }
}

/// `real` as a command of its own, to parse its arguments from words ([`parse_args`]).
#[derive(clap::Parser)]
#[command(name = "splitbrain real")]
struct Real {
    #[command(flatten)]
    args: Args,
}

/// `real`'s arguments read from `words` (what follows `splitbrain real` on a command line), as
/// the command line reads them.
pub(crate) fn parse_args(words: &[String]) -> Result<Args, clap::Error> {
    use clap::Parser;
    let argv = std::iter::once("real").chain(words.iter().map(String::as_str));
    Real::try_parse_from(argv).map(|real| real.args)
}

/// The scenario: a file when the argument names one (or ends in `.json`), else a name of the
/// catalog.
pub(crate) fn load(args: &Args) -> Result<Scenario, Failure> {
    let path = Path::new(&args.scenario);
    if args.scenario.ends_with(".json") || path.is_file() {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            Failure(format!(
                "{file}: expected a readable scenario file, found an error: {e}"
            ))
        })?;
        return with_leader_kill(Scenario::from_json(&file, &text)?, args);
    }
    let catalog = args.catalog.load()?;
    with_leader_kill(find(&catalog, &args.scenario)?.clone(), args)
}

/// `scenario` with the restart of the leader that `--kill-leader-at` asks for, if it does.
fn with_leader_kill(mut scenario: Scenario, args: &Args) -> Result<Scenario, Failure> {
    let Some(at_ms) = args.kill_leader_at else {
        return Ok(scenario);
    };
    if at_ms >= scenario.horizon_ms {
        return Err(Failure(format!(
            "--kill-leader-at: expected a time before the scenario's horizon ({} ms), found \
             {at_ms} ms",
            scenario.horizon_ms
        )));
    }
    let down_ms = DEFAULT_RESTART_DOWN_MS;
    let fault = Fault::RestartServer { down_ms };
    scenario.faults.push(ScheduledFault::at(at_ms, fault));
    Ok(scenario)
}

/// One run on a server of its own (started and stopped here with --start-local), with a
/// library's `contenders`, beside the scenario's clients or in their place, when given.
fn run_once(
    args: &Args,
    scenario: &Scenario,
    run: u32,
    contenders: Option<(&dyn Library, CuratorPlacement)>,
) -> Result<(RunOutcome, Option<Interop>), Failure> {
    let target = match &args.server.connect {
        Some(connect) => Target::connect(connect.clone()),
        None => Target::start_local(
            args.server.ensemble.unwrap_or(1),
            Settings::of(&scenario.server),
        )?,
    };
    // Wake-ups are counted (best effort: a server of the user's may refuse `mntr`) in runs
    // with contenders beside the clients, on a single server.
    let beside = contenders.is_some_and(|(_, placement)| placement == CuratorPlacement::Beside);
    let server = standalone_addr(&target).filter(|_| beside);
    let before = server.and_then(|server| DeletedWatches::read(server).ok());
    let launcher = client_launcher()?;
    let result = match contenders {
        Some((library, placement)) => {
            real::run_with_contenders(scenario, args.seed, &target, &launcher, library, placement)
        }
        None => real::run(scenario, args.seed, &target, &launcher),
    };
    let woken = match (server, before, &result) {
        (Some(server), Some(before), Ok(_)) => DeletedWatches::read(server)
            .ok()
            .map(|after| after.since(before)),
        _ => None,
    };
    target.stop();
    let trace = match result {
        Ok(trace) => trace,
        Err(failure) => {
            let Some(partial) = failure.trace else {
                return Err(Failure(connect_failure(args, failure.message)));
            };
            let path = file(args, scenario, run, "partial.trace.json");
            write_json(&path, &partial).map_err(|e| cannot_write(&path, "trace", &e))?;
            return Err(Failure(format!(
                "run {run}: {} (partial trace: {})",
                failure.message,
                path.display()
            )));
        }
    };
    let violations = ::properties::verdict::violations(&trace)?;
    let interop = beside.then(|| Interop {
        out_of_order: out_of_order_grants(&trace.events),
        woken,
        releases: releases(&trace),
    });
    Ok((RunOutcome { trace, violations }, interop))
}

/// The address of the target's server, when it is one server (`mntr` counts one server's
/// watches).
fn standalone_addr(target: &Target) -> Option<SocketAddr> {
    target.connect_string().parse().ok()
}

/// The release calls of a trace (a latch's close calls), of every client.
fn releases(trace: &::trace::Trace) -> usize {
    (trace.events.iter())
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Call {
                    call: Call::Release { .. } | Call::Close { .. }
                }
            )
        })
        .count()
}

/// What a run with contenders beside the clients adds to a run's outcome.
struct Interop {
    /// Grants out of queue order, one line each.
    out_of_order: Vec<String>,
    /// The `NodeDeleted` watches the server fired during the run (on a single server that
    /// answers `mntr`).
    woken: Option<DeletedWatches>,
    /// The release (or close) calls of the run, of both languages.
    releases: usize,
}

impl Interop {
    fn print(&self) {
        match self.out_of_order.first() {
            None => say!("  grants in queue order across languages"),
            Some(first) => say!(
                "  {} grant(s) out of queue order, first: {first}",
                self.out_of_order.len()
            ),
        }
        let Some(woken) = self.woken else {
            say!("  server: NodeDeleted watches not counted (needs one server that answers mntr)");
            return;
        };
        say!(
            "  server: {} NodeDeleted watch notification(s) over {} release(s), at most {} per \
             deletion",
            woken.fired,
            self.releases,
            woken.most
        );
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "out_of_order_grants": self.out_of_order,
            "releases": self.releases,
            "node_deleted_watches": self.woken.map(|w| serde_json::json!({
                "deletions": w.deletions,
                "fired": w.fired,
                "most_per_deletion": w.most,
            })),
        })
    }
}

/// Client processes are this binary, re-executed as `splitbrain real-client`.
pub(super) fn client_launcher() -> Result<ClientLauncher, Failure> {
    this_binary_as("real-client")
}

/// Client processes running splitbrain's own programs are this binary, re-executed as
/// `splitbrain real-program-client`.
pub(super) fn program_launcher() -> Result<ClientLauncher, Failure> {
    this_binary_as("real-program-client")
}

/// This binary, re-executed with the subcommand `command`.
fn this_binary_as(command: &str) -> Result<ClientLauncher, Failure> {
    Ok(ClientLauncher::new(
        this_binary("client processes")?,
        [command],
    ))
}

/// This binary, to start `what` with.
fn this_binary(what: &str) -> Result<PathBuf, Failure> {
    super::this_executable()
        .map_err(|e| Failure(format!("cannot find this program to start {what}: {e}")))
}

/// A failure before the run, naming `--connect` when its address is what failed.
fn connect_failure(args: &Args, message: String) -> String {
    match &args.server.connect {
        Some(connect) if message.starts_with(connect.as_str()) => format!("--connect {message}"),
        _ => message,
    }
}

/// `DIR/<scenario>.seed-N[.run-K].<suffix>`.
fn file(args: &Args, scenario: &Scenario, run: u32, suffix: &str) -> PathBuf {
    let run = if args.runs > 1 {
        format!(".run-{run}")
    } else {
        String::new()
    };
    let name = format!("{}.seed-{}{run}.{suffix}", scenario.name, args.seed);
    args.out.join(name)
}

fn cannot_write(path: &Path, what: &str, error: &std::io::Error) -> Failure {
    Failure(format!(
        "{}: cannot write the {what}: {error}",
        path.display()
    ))
}

/// Writes the run's trace and report; their paths.
fn write_outputs(
    args: &Args,
    scenario: &Scenario,
    run: u32,
    outcome: &RunOutcome,
) -> Result<(PathBuf, PathBuf), Failure> {
    let trace = file(args, scenario, run, "trace.json");
    write_json(&trace, &outcome.trace).map_err(|e| cannot_write(&trace, "trace", &e))?;
    let report = file(args, scenario, run, "html");
    let html = report_html(outcome, &trace, None);
    write_atomic(&report, html.as_bytes()).map_err(|e| cannot_write(&report, "report", &e))?;
    Ok((trace, report))
}

fn print_run(args: &Args, run: u32, outcome: &RunOutcome, trace: &Path, report: &Path) {
    let meta = &outcome.trace.meta;
    say!(
        "{} seed {} run {run}/{} on {}: {} fault(s), {} events, {} violation(s)",
        meta.scenario,
        meta.seed,
        args.runs,
        meta.settings["target"].as_str().unwrap_or("?"),
        meta.fault_schedule.len(),
        outcome.trace.events.len(),
        outcome.violations.len()
    );
    for violation in &outcome.violations {
        say!("  {}", violation_line(violation));
    }
    say!("trace: {}", trace.display());
    say!("report: {}", report.display());
}

/// The scenario's expectations the runs do not meet, one phrase each: a property expected
/// to hold that some run violates, or one expected to be violated that no run violates.
fn unmet(scenario: &Scenario, outcomes: &[RunOutcome]) -> Vec<String> {
    let runs = outcomes.len() as u64;
    (scenario.recipe.properties().iter())
        .filter_map(|&property| {
            let violating = outcomes.iter().filter(|o| o.violates(property)).count() as u64;
            (scenario.expectation(property)).unmet(property, violating, runs, "runs")
        })
        .collect()
}
