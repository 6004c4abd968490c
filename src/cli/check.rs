//! `splitbrain check <recipe> --clients N` model-checks a recipe exhaustively with stateright:
//! every interleaving of clients, server operations and faults within the budgets. Each
//! property's verdict is compared with the recipe's declared expectation (exit 0 only when all
//! are met); each counterexample is minimized and written as a trace in the simulator's
//! format. `--path 0/3/1` replays one action path instead; `--explore` serves stateright's
//! Explorer on 127.0.0.1.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use coordination::framework::{ErrorPolicy, FrameworkConfig, OnLost};
use coordination::recipes::TimeoutScope;
use coordination::retry::RetryPolicy;
use model::check::{Options, Outcome as CheckOutcome, check, shows};
use model::predicates::Kind;
use model::replay::{actions_from_indices, indices_of, states, trace};
use model::{Action, Budgets, Checked, LockModel, ModelSpec};
use recipe_table::family::RecipeSettings;
use recipe_table::recipes::{RecipeDef, RecipeKind, Testable, Visitor};
use splitbrain::files::{evidence_paths, write_trace_and_report};
use stateright::Model;
use trace::Trace;

use super::{Failure, Outcome, UNMET};

/// Arguments of `check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The recipe, by its name in the recipe table (`splitbrain recipes` lists them).
    #[arg(value_parser = recipe_parser())]
    recipe: RecipeKind,
    /// Number of clients, each with its own session.
    #[arg(long, default_value_t = 2)]
    clients: u16,
    /// Workload cycles per client: ask for a hold (acquire, start), use it, give it back.
    #[arg(long, default_value_t = Budgets::default().cycles)]
    cycles: u8,
    /// Session expiries (of a paused or cut-off client) over the whole run.
    #[arg(long, default_value_t = Budgets::default().expiries)]
    expiries: u8,
    /// Client crashes (the process restarts; its old session lives on until it expires).
    #[arg(long, default_value_t = Budgets::default().crashes)]
    crashes: u8,
    /// Connection losses, with the request in flight applied or not.
    #[arg(long, default_value_t = Budgets::default().connection_losses)]
    connection_losses: u8,
    /// Failed connection attempts of a client not yet (re)connected (each fails the requests
    /// queued while it was cut off).
    #[arg(long, default_value_t = Budgets::default().failed_attempts)]
    failed_attempts: u8,
    /// Sweeps of the server that delete the empty containers (that have had children), over
    /// the whole run; a recipe then meets a lock directory created anew.
    #[arg(long, default_value_t = Budgets::default().reaps)]
    reaps: u8,
    /// Cuts of a client's server, a follower, off from the leader, over the whole run: the
    /// follower keeps the client connected and answers its reads from the tree it had (its
    /// writes held) while the leader expires its session, until it gives up on the leader.
    #[arg(long, default_value_t = Budgets::default().follower_cuts)]
    follower_cuts: u8,
    /// The resource accepts stale tokens (shows lost updates).
    #[arg(long)]
    unfenced: bool,
    /// Each cycle makes the lock revocable and asks the holder to give way first; a holder
    /// asked cuts its hold short (Curator's revocation). `mutex` only: other recipes answer
    /// the revocation calls with `Failed`, which the workload takes as a refused acquire.
    #[arg(long)]
    revocable: bool,
    /// `leader-latch`: each cycle waits in `Await` after `Start` and leads only when it
    /// answers `true`, then asks `HasLeadership` before writing (Curator's canonical use).
    #[arg(long)]
    awaits: bool,
    /// Each acquire carries a timeout, which may expire at any point.
    #[arg(long)]
    timeouts: bool,
    /// `multi-lock`: what an acquire's timeout bounds, `each-lock` (Curator's: each lock's
    /// acquire in turn) or `whole` (one timer for the whole acquire).
    #[arg(long, default_value = "each-lock", value_parser = PossibleValuesParser::new(TimeoutScope::NAMES).map(|name| setting::<TimeoutScope>(&name)))]
    timeout_scope: TimeoutScope,
    /// `semaphore`: leases out at once at most.
    #[arg(long, default_value_t = RecipeSettings::default().max_leases)]
    max_leases: u32,
    /// `read-write-lock`: clients `0..writers` write, the others read.
    #[arg(long, default_value_t = RecipeSettings::default().writers)]
    writers: u16,
    /// The framework's error policy (Curator's `ConnectionStateErrorPolicy`): `standard`
    /// (SUSPENDED ends holds and leadership) or `session-based` (only LOST does).
    #[arg(long, default_value = "standard", value_parser = PossibleValuesParser::new(ErrorPolicy::NAMES).map(|name| setting::<ErrorPolicy>(&name)))]
    error_policy: ErrorPolicy,
    /// What a lock hold becomes at LOST: `curator` (kept, its node too, until released) or
    /// `release` (ended, its node deleted at once).
    #[arg(long, default_value = "curator", value_parser = PossibleValuesParser::new(OnLost::NAMES).map(|name| setting::<OnLost>(&name)))]
    on_lost: OnLost,
    /// LOST after this percent of the session timeout disconnected (Curator's
    /// `sessionExpirationPercent`, 1..=100). The model fires the LOST timer at any point, so
    /// this changes no state; it is recorded in the traces.
    #[arg(long, default_value_t = FrameworkConfig::default().lost_after_percent, value_parser = clap::value_parser!(u32).range(1..=100))]
    session_expiration_percent: u32,
    /// The framework's retry policy (Curator's `RetryPolicy`): `exponential-backoff`
    /// (`ExponentialBackoffRetry`, the default), `n-times` (`RetryNTimes`) or `forever`
    /// (`RetryForever`). The model fires retry sleeps at any point; the count bounds the states.
    #[arg(long, default_value = RetryPolicy::DEFAULT.name(), value_parser = PossibleValuesParser::new(RetryPolicy::NAMES))]
    retry_policy: String,
    /// Retries before an operation fails (`exponential-backoff`: at most 29; ignored by
    /// `forever`).
    #[arg(long, default_value_t = RetryPolicy::DEFAULT.limit_and_sleep_ms().0.unwrap_or(0))]
    max_retries: u32,
    /// The (base) sleep before a retry, in ms (recorded in traces; the model ignores it).
    #[arg(long, default_value_t = RetryPolicy::DEFAULT.limit_and_sleep_ms().1)]
    retry_sleep_ms: u32,
    /// How long a call made while not connected waits for a connection before its first
    /// attempt, in ms (Curator's `connectionTimeoutMs`; recorded in traces: the model fires
    /// the timer at any point).
    #[arg(long, default_value_t = FrameworkConfig::DEFAULT_CONNECTION_TIMEOUT_MS, value_parser = clap::value_parser!(u32).range(1..=600_000))]
    connection_timeout_ms: u32,
    /// Checker threads (state counts under symmetry are exact with 1).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Explore without symmetry reduction.
    #[arg(long)]
    no_symmetry: bool,
    /// Explore every interleaving (no partial-order reduction).
    #[arg(long)]
    no_reduction: bool,
    /// Stop after this many seconds (the result is then incomplete).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// Replay this action path (`0/3/1`: stateright's replay key) and write its trace.
    #[arg(long, value_name = "PATH")]
    path: Option<String>,
    /// Directory for traces and reports.
    #[arg(long, value_name = "DIR", default_value = "splitbrain-out/check")]
    out: PathBuf,
    /// Serve stateright's Explorer on 127.0.0.1:<--port> (runs until interrupted).
    #[arg(long)]
    explore: bool,
    /// The Explorer's port.
    #[arg(long, default_value_t = 3000)]
    port: u16,
    /// Print JSON: `{"recipe", "clients", "budgets", "states", "unique_states", "max_depth",
    /// "seconds", "states_per_second", "complete", "properties": [{"name", "kind",
    /// "expectation", "verdict", "met", "counterexample_steps", "report"}], "all_met"}`.
    #[arg(long)]
    json: bool,
}

impl Args {
    fn config(&self) -> ModelSpec {
        ModelSpec {
            clients: self.clients,
            budgets: Budgets {
                cycles: self.cycles,
                expiries: self.expiries,
                crashes: self.crashes,
                connection_losses: self.connection_losses,
                failed_attempts: self.failed_attempts,
                reaps: self.reaps,
                follower_cuts: self.follower_cuts,
            },
            fenced: !self.unfenced,
            settings: RecipeSettings {
                max_leases: self.max_leases,
                writers: self.writers,
                revocable: self.revocable,
                awaits: self.awaits,
                timeout_scope: self.timeout_scope,
            },
            timeouts: self.timeouts,
            framework: FrameworkConfig {
                error_policy: self.error_policy,
                on_lost: self.on_lost,
                lost_after_percent: self.session_expiration_percent,
                retry: self.retry(),
                connection_timeout_ms: self.connection_timeout_ms,
            },
        }
    }

    /// The retry policy the flags name (clap has checked the name).
    fn retry(&self) -> RetryPolicy {
        RetryPolicy::named(&self.retry_policy, self.max_retries, self.retry_sleep_ms)
            .expect("one of the policy names")
    }

    /// The command line that reruns this check (for trace names and output).
    fn command(&self) -> String {
        let config = self.config();
        let fencing = if config.fenced { "" } else { " --unfenced" };
        let defaults = RecipeSettings::default();
        let mut settings = String::new();
        if config.settings.max_leases != defaults.max_leases {
            settings += &format!(" --max-leases {}", config.settings.max_leases);
        }
        if config.settings.writers != defaults.writers {
            settings += &format!(" --writers {}", config.settings.writers);
        }
        if config.settings.revocable {
            settings += " --revocable";
        }
        if config.settings.awaits {
            settings += " --awaits";
        }
        if config.settings.timeout_scope != defaults.timeout_scope {
            settings += &format!(
                " --timeout-scope {}",
                name_of(config.settings.timeout_scope)
            );
        }
        if config.timeouts {
            settings += " --timeouts";
        }
        let framework = FrameworkConfig::default();
        if config.framework.error_policy != framework.error_policy {
            settings += &format!(" --error-policy {}", name_of(config.framework.error_policy));
        }
        if config.framework.on_lost != framework.on_lost {
            settings += &format!(" --on-lost {}", name_of(config.framework.on_lost));
        }
        if config.framework.lost_after_percent != framework.lost_after_percent {
            let percent = config.framework.lost_after_percent;
            settings += &format!(" --session-expiration-percent {percent}");
        }
        let retry = config.framework.retry;
        if retry != framework.retry {
            let (limit, sleep_ms) = retry.limit_and_sleep_ms();
            settings += &format!(" --retry-policy {}", retry.name());
            if let Some(limit) = limit {
                settings += &format!(" --max-retries {limit}");
            }
            settings += &format!(" --retry-sleep-ms {sleep_ms}");
        }
        let timeout_ms = config.framework.connection_timeout_ms;
        if timeout_ms != framework.connection_timeout_ms {
            settings += &format!(" --connection-timeout-ms {timeout_ms}");
        }
        format!(
            "splitbrain check {} --clients {} {}{fencing}{settings}",
            self.recipe, config.clients, config.budgets
        )
    }
}

/// Runs the command.
pub fn run(args: Args) -> Outcome {
    if args.clients == 0 {
        return Err(Failure(
            "--clients: expected at least 1 client, found 0".into(),
        ));
    }
    let limit = RetryPolicy::MAX_EXPONENTIAL_RETRIES;
    if matches!(args.retry(), RetryPolicy::ExponentialBackoff { max_retries, .. } if max_retries > limit)
    {
        return Err(Failure(format!(
            "--max-retries: expected at most {limit} for exponential-backoff (Curator's limit), found {}",
            args.max_retries
        )));
    }
    args.recipe.visit(Run { args: &args })
}

/// A framework setting named as scenario files name it (`session-based`, `release`); the
/// parser has already checked that `name` is one of its names.
fn setting<T: serde::de::DeserializeOwned>(name: &str) -> T {
    serde_json::from_value(serde_json::Value::from(name)).expect("one of the setting's names")
}

/// The name scenario files give a framework setting's value.
fn name_of<T: serde::Serialize>(value: T) -> String {
    let json = serde_json::to_value(value).expect("a setting serializes");
    json.as_str()
        .expect("a setting serializes as its name")
        .to_owned()
}

/// The recipe argument: one of the table's names.
fn recipe_parser() -> impl TypedValueParser<Value = RecipeKind> {
    PossibleValuesParser::new(RecipeKind::NAMES)
        .map(|name| name.parse().expect("a name of the recipe table"))
}

/// Runs the command for the recipe of the table the arguments name.
struct Run<'a> {
    args: &'a Args,
}

impl Visitor for Run<'_> {
    type Output = Outcome;

    fn visit<R: Testable>(self, def: &'static RecipeDef<R>) -> Outcome {
        run_for(def, self.args)
    }
}

fn run_for<R: Testable>(def: &'static RecipeDef<R>, args: &Args) -> Outcome {
    if args.explore {
        return explore(def, args);
    }
    if let Some(path) = &args.path {
        return replay(def, args, path);
    }
    let options = Options {
        threads: args.threads,
        symmetry: !args.no_symmetry,
        timeout: args.timeout.map(Duration::from_secs),
        paths: true,
        reduction: !args.no_reduction,
    };
    let outcome = check(def, args.config(), options);
    let model = LockModel::new(def, args.config());
    let mut written = Vec::new();
    for verdict in &outcome.verdicts {
        if let Some(path) = &verdict.path {
            let stem = format!("{}.c{}.{}", def.name, args.clients, verdict.property);
            let files = write_files(&model, path, &args.out, &stem, &args.command())?;
            written.push((verdict.property, files));
        }
    }
    if args.json {
        let summary = outcome.summary(|property| {
            written
                .iter()
                .find(|(p, _)| *p == property)
                .map(|(_, files)| files.report.display().to_string())
        });
        say!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print(args, &outcome, &written);
    }
    Ok(if outcome.all_met() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(UNMET)
    })
}

/// What was written for one path.
struct Written {
    /// The trace, in the simulator's format.
    trace: PathBuf,
    /// The HTML report.
    report: PathBuf,
    /// The path's action indices (`--path`).
    indices: String,
}

/// Writes the trace of `path` and its HTML report (explained by the trace checkers'
/// violations) to `<out>/<stem>.trace.json` and `<out>/<stem>.report.html`.
fn write_files<R: Testable>(
    model: &LockModel<R>,
    path: &[Action],
    out: &Path,
    stem: &str,
    command: &str,
) -> Result<Written, Failure> {
    let trace: Trace = trace(model, path, command)?;
    let (trace_file, report) = evidence_paths(out, stem);
    let violations = properties::verdict::violations(&trace)?;
    write_trace_and_report(&trace, &violations, (&trace_file, &report), None).map_err(Failure)?;
    Ok(Written {
        trace: trace_file,
        report,
        indices: indices_of(model, path)?,
    })
}

fn print(args: &Args, outcome: &CheckOutcome, written: &[(Checked, Written)]) {
    let config = &outcome.config;
    say!("{}", args.command());
    say!(
        "  {}, {}, {} thread(s){}",
        if args.no_symmetry {
            "no symmetry reduction"
        } else {
            "symmetry reduction"
        },
        if args.no_reduction {
            "every interleaving"
        } else {
            "partial-order reduction"
        },
        args.threads.max(1),
        if config.fenced {
            ""
        } else {
            ", unfenced resource"
        }
    );
    say!(
        "  {} states, {} unique, max depth {}, {:.2} s, {:.0} states/s, {}",
        outcome.states,
        outcome.unique_states,
        outcome.max_depth,
        outcome.seconds,
        outcome.states_per_second(),
        if outcome.complete {
            "complete"
        } else {
            "INCOMPLETE (timeout)"
        }
    );
    for verdict in &outcome.verdicts {
        let found = if verdict.holds { "holds" } else { "violated" };
        let expected = format!("{:?}", verdict.expectation).to_lowercase();
        let met = if verdict.met() { "met" } else { "NOT MET" };
        say!(
            "  {:<24} {:<9} expected {:<8} {:<8} {met}",
            verdict.property.name(),
            format!("{:?}", verdict.property.kind()).to_lowercase(),
            expected,
            found
        );
        if let Some((_, files)) = written.iter().find(|(p, _)| *p == verdict.property) {
            let steps = verdict.path.as_ref().map_or(0, Vec::len);
            let what = if verdict.holds {
                "example"
            } else {
                "counterexample"
            };
            say!(
                "      {what}: {steps} steps, report {}, trace {}",
                files.report.display(),
                files.trace.display()
            );
            say!("      replay: {} --path {}", args.command(), files.indices);
        }
    }
    say!(
        "{}",
        if outcome.all_met() {
            "all expectations met"
        } else {
            "some expectations NOT met"
        }
    );
}

/// Replays one action path: writes its trace and says what it shows.
fn replay<R: Testable>(def: &'static RecipeDef<R>, args: &Args, path: &str) -> Outcome {
    let model = LockModel::new(def, args.config());
    let actions = actions_from_indices(&model, path)?;
    let stem = format!("{}.c{}.path", def.name, args.clients);
    let files = write_files(&model, &actions, &args.out, &stem, &args.command())?;
    let visited = states(&model, &actions)?;
    say!("{} --path {path}", args.command());
    for (step, action) in actions.iter().enumerate() {
        say!("  {:>3}. {}", step + 1, model.format_action(action));
    }
    for property in Checked::of(def.family) {
        if let Some(at) = visited.iter().position(|s| shows(&model, property, s)) {
            let what = match property.kind() {
                Kind::Always => "violated",
                Kind::Sometimes => "met",
            };
            say!("  {property}: {what} after step {at}");
        }
    }
    say!("  report: {}", files.report.display());
    say!("  trace: {}", files.trace.display());
    Ok(ExitCode::SUCCESS)
}

/// Serves stateright's Explorer on 127.0.0.1 until the process is interrupted.
fn explore<R: Testable>(def: &'static RecipeDef<R>, args: &Args) -> Outcome {
    let address = format!("127.0.0.1:{}", args.port);
    // Explorer panics on a port in use; find out first, with a clear error.
    drop(TcpListener::bind(&address).map_err(|e| {
        Failure(format!(
            "--port {}: cannot listen on {address}: {e}",
            args.port
        ))
    })?);
    eprintln!(
        "{}: Explorer on http://{address}/ (Ctrl-C to stop)",
        args.command()
    );
    let _checker = LockModel::new(def, args.config())
        .checker()
        .threads(args.threads.max(1))
        .serve(address.as_str());
    loop {
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rerun_command_echoes_every_budget_and_setting() {
        let args = Args {
            recipe: RecipeKind::Mutex,
            clients: 3,
            cycles: 1,
            expiries: 1,
            crashes: 0,
            connection_losses: 2,
            failed_attempts: 1,
            reaps: 2,
            follower_cuts: 1,
            unfenced: true,
            revocable: true,
            awaits: true,
            timeouts: true,
            timeout_scope: TimeoutScope::Whole,
            max_leases: 3,
            writers: 1,
            error_policy: ErrorPolicy::SessionBased,
            on_lost: OnLost::Release,
            session_expiration_percent: 80,
            retry_policy: "n-times".into(),
            max_retries: 1,
            retry_sleep_ms: 500,
            connection_timeout_ms: 5_000,
            threads: 1,
            no_symmetry: false,
            no_reduction: false,
            timeout: None,
            path: None,
            out: "splitbrain-out/check".into(),
            explore: false,
            port: 3000,
            json: false,
        };
        assert_eq!(
            args.command(),
            "splitbrain check mutex --clients 3 --cycles 1 --expiries 1 --crashes 0 \
             --connection-losses 2 --failed-attempts 1 --reaps 2 --follower-cuts 1 --unfenced --max-leases 3 --revocable --awaits --timeout-scope whole \
             --timeouts --error-policy session-based --on-lost release --session-expiration-percent 80 \
             --retry-policy n-times --max-retries 1 --retry-sleep-ms 500 --connection-timeout-ms 5000"
        );
    }
}
