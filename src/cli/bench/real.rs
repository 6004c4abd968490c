//! `splitbrain bench --real`: our `Mutex` beside Curator's `InterProcessMutex` (and the
//! naive herd lock) on one local standalone ZooKeeper started from Debian's package, at each
//! contender count, the two libraries alternated run by run; then our `LeaderLatch` beside
//! Curator's. Each run is [`real::bench::Bench::measure`]; this module picks the runs, reads
//! the server's watch counts around each (`mntr`), takes medians and writes
//! `bench-real.json` and `bench-real.md`.

use std::time::Duration;

use coordination::zk::Path as ZkPath;
use real::ClientLauncher;
use real::bench::{Bench, Contestant, Sample};
use real::curator::Curator;
use real::local::{Settings, Standalone};
use real::wakeups::DeletedWatches;
use serde::Serialize;
use splitbrain::files::{write_atomic, write_json};

use super::figures::median;
use super::results::{Machine, commit};
use super::storage::Storage;
use crate::cli::Failure;

/// Participants of each latch run.
const LATCH_PARTICIPANTS: u16 = 3;

/// How much `bench --real` runs.
#[derive(Clone, Debug, Serialize)]
pub struct RealSizes {
    /// Contender counts.
    pub contenders: Vec<u16>,
    /// Acquisitions per run, all contenders together.
    pub acquisitions: u32,
    /// Runs of each contestant at each count (medians are reported).
    pub runs: usize,
    /// Leaderships per latch participant per run.
    pub leaderships: u32,
    /// ZooKeeper's tick, ms.
    pub tick_ms: u64,
    /// Every contender's session timeout, ms.
    pub session_timeout_ms: u64,
    /// Where the server keeps its transaction log, in the order measured (tmpfs first).
    pub storages: Vec<Storage>,
}

/// The figures of one contestant at one count, medians of the runs.
#[derive(Clone, Debug, Serialize)]
pub struct Figures {
    /// Who.
    pub contestant: Contestant,
    /// Acquisitions per second.
    pub acquisitions_per_s: f64,
    /// Median acquire latency, ms.
    pub p50_ms: f64,
    /// 99th percentile acquire latency, ms.
    pub p99_ms: f64,
    /// Contenders' CPU per acquisition, ms.
    pub cpu_ms_per_acquisition: f64,
    /// Watch events the contenders' sessions delivered per release (`None`: Curator's,
    /// which keeps them inside).
    pub client_watches_per_release: Option<f64>,
    /// `NodeDeleted` watches the server fired per release (`mntr`).
    pub server_watches_per_release: f64,
    /// Every run's figures.
    pub runs: Vec<RunFigures>,
}

/// One run's figures.
#[derive(Clone, Debug, Serialize)]
pub struct RunFigures {
    /// Acquisitions (releases).
    pub acquisitions: u64,
    /// Acquisitions per second.
    pub acquisitions_per_s: f64,
    /// Median acquire latency, ms.
    pub p50_ms: f64,
    /// 99th percentile acquire latency, ms.
    pub p99_ms: f64,
    /// CPU per acquisition, ms.
    pub cpu_ms_per_acquisition: f64,
    /// Watch events the sessions delivered (ours only).
    pub client_watches: Option<u64>,
    /// `NodeDeleted` watches the server fired.
    pub server_watches: u64,
}

/// Every contestant at one contender count.
#[derive(Clone, Debug, Serialize)]
pub struct CountRow {
    /// Contenders, each with its own session.
    pub contenders: u16,
    /// Ours, Curator's, the naive herd lock's.
    pub figures: Vec<Figures>,
}

/// Leader latch failovers of one library, medians of the runs.
#[derive(Clone, Debug, Serialize)]
pub struct Failover {
    /// Who.
    pub contestant: Contestant,
    /// Median failover, ms.
    pub p50_ms: f64,
    /// 99th percentile failover, ms.
    pub p99_ms: f64,
    /// Failovers measured in all.
    pub failovers: usize,
}

/// Everything one `splitbrain bench --real` measured.
#[derive(Clone, Debug, Serialize)]
pub struct RealResults {
    /// The machine.
    pub machine: Machine,
    /// The commit.
    pub commit: String,
    /// `quick` or `full`.
    pub mode: &'static str,
    /// `/proc/loadavg` before and after (the machine may be shared).
    pub load_average: [String; 2],
    /// How much ran.
    pub sizes: RealSizes,
    /// Everything measured on each storage, in the order measured.
    pub storages: Vec<StorageResults>,
}

/// Everything measured against one server, whose transaction log is on one storage.
#[derive(Clone, Debug, Serialize)]
pub struct StorageResults {
    /// Where the log was.
    pub storage: Storage,
    /// The directory the server's data directory was made in.
    pub directory: String,
    /// The locks at each count.
    pub locks: Vec<CountRow>,
    /// The latches.
    pub failover: Vec<Failover>,
}

/// Runs the benchmark with `sizes` and writes its results into `out`.
pub fn run(sizes: RealSizes, quick: bool, out: &std::path::Path) -> Result<(), Failure> {
    let failure = |e: &dyn std::fmt::Display| Failure(format!("bench --real: {e}"));
    let directories = (sizes.storages.iter())
        .map(|storage| storage.directory().map(|directory| (*storage, directory)))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| failure(&e))?;
    let load_before = load_average();
    let curator = Curator::compile(0).map_err(|e| failure(&e))?;
    let exe = crate::cli::this_executable().map_err(|e| failure(&e))?;
    let launcher = ClientLauncher::new(exe, ["bench-client"]);
    let mut storages = Vec::new();
    for (storage, directory) in directories {
        eprintln!(
            "bench --real: the transaction log on {} ({})",
            storage.name(),
            directory.display()
        );
        let settings = Settings {
            tick_time: Duration::from_millis(sizes.tick_ms),
            max_session_timeout: None,
            ..Settings::default()
        };
        let mut server = Standalone::start_in(settings, &directory).map_err(|e| failure(&e))?;
        let bench = Bench {
            connect_string: server.connect_string(),
            session_timeout_ms: sizes.session_timeout_ms,
            launcher: &launcher,
            curator: &curator,
        };
        let measured = measure_all(&bench, &server, &sizes);
        server.stop();
        let (locks, failover) = measured?;
        storages.push(StorageResults {
            storage,
            directory: directory.display().to_string(),
            locks,
            failover,
        });
    }
    let results = RealResults {
        machine: Machine::this(),
        commit: commit(),
        mode: if quick { "quick" } else { "full" },
        load_average: [load_before, load_average()],
        sizes,
        storages,
    };
    let (json, markdown) = (out.join("bench-real.json"), out.join("bench-real.md"));
    std::fs::create_dir_all(out).map_err(|e| failure(&format!("{}: {e}", out.display())))?;
    write_json(&json, &results).map_err(|e| failure(&format!("{}: {e}", json.display())))?;
    let table = results.markdown();
    write_atomic(&markdown, table.as_bytes())
        .map_err(|e| failure(&format!("{}: {e}", markdown.display())))?;
    say!("{table}");
    say!("wrote {} and {}", json.display(), markdown.display());
    Ok(())
}

/// Every lock run, then every latch run.
fn measure_all(
    bench: &Bench<'_>,
    server: &Standalone,
    sizes: &RealSizes,
) -> Result<(Vec<CountRow>, Vec<Failover>), Failure> {
    let mut locks = Vec::new();
    for &count in &sizes.contenders {
        let cycles = sizes.acquisitions.div_ceil(u32::from(count));
        let mut runs: [(Contestant, Vec<RunFigures>); 3] = [
            (Contestant::OurMutex, Vec::new()),
            (Contestant::CuratorMutex, Vec::new()),
            (Contestant::NaiveHerd, Vec::new()),
        ];
        for run in 0..sizes.runs {
            // A/B alternated: ours first in even runs, Curator's in odd ones.
            let order = if run % 2 == 0 { [0, 1, 2] } else { [1, 0, 2] };
            for index in order {
                let (who, figures) = &mut runs[index];
                eprintln!(
                    "bench --real: {}, {count} contenders, run {}/{}",
                    who.name(),
                    run + 1,
                    sizes.runs
                );
                let path = lock_path(*who, count, run)?;
                figures.push(measure_lock(bench, server, *who, count, cycles, &path)?);
            }
        }
        locks.push(CountRow {
            contenders: count,
            figures: runs
                .into_iter()
                .map(|(who, runs)| figures_of(who, runs))
                .collect(),
        });
    }
    let mut failover = Vec::new();
    let mut latches = [
        (Contestant::OurLatch, Vec::new()),
        (Contestant::CuratorLatch, Vec::new()),
    ];
    for run in 0..sizes.runs {
        let order = if run % 2 == 0 { [0, 1] } else { [1, 0] };
        for index in order {
            let (who, samples) = &mut latches[index];
            eprintln!(
                "bench --real: {}, {LATCH_PARTICIPANTS} participants, run {}/{}",
                who.name(),
                run + 1,
                sizes.runs
            );
            let path = lock_path(*who, LATCH_PARTICIPANTS, run)?;
            let sample = bench
                .measure(*who, LATCH_PARTICIPANTS, sizes.leaderships, &path)
                .map_err(|e| Failure(format!("bench --real: {e}")))?;
            samples.push(sample);
        }
    }
    for (who, samples) in latches {
        failover.push(Failover {
            contestant: who,
            p50_ms: median(
                &samples
                    .iter()
                    .map(|s| quantile_ms(&s.failovers, 0.5))
                    .collect::<Vec<_>>(),
            ),
            p99_ms: median(
                &samples
                    .iter()
                    .map(|s| quantile_ms(&s.failovers, 0.99))
                    .collect::<Vec<_>>(),
            ),
            failovers: samples.iter().map(|s| s.failovers.len()).sum(),
        });
    }
    Ok((locks, failover))
}

/// A fresh path per run, so that no run sees another's nodes.
fn lock_path(who: Contestant, count: u16, run: usize) -> Result<ZkPath, Failure> {
    let name = format!("/bench/{who:?}-{count}-{run}").to_lowercase();
    ZkPath::new(&name).map_err(|e| Failure(format!("bench --real: {name}: {e:?}")))
}

/// One lock run, with the server's `NodeDeleted` watches counted around it.
fn measure_lock(
    bench: &Bench<'_>,
    server: &Standalone,
    who: Contestant,
    count: u16,
    cycles: u32,
    path: &ZkPath,
) -> Result<RunFigures, Failure> {
    let failure = |e: &dyn std::fmt::Display| Failure(format!("bench --real: {e}"));
    let before = DeletedWatches::read(server.client_addr()).map_err(|e| failure(&e))?;
    let sample = bench
        .measure(who, count, cycles, path)
        .map_err(|e| failure(&e))?;
    let after = DeletedWatches::read(server.client_addr()).map_err(|e| failure(&e))?;
    Ok(run_figures(&sample, after.since(before).fired))
}

fn run_figures(sample: &Sample, server_watches: u64) -> RunFigures {
    let acquisitions = sample.cycles.max(1) as f64;
    RunFigures {
        acquisitions: sample.cycles,
        acquisitions_per_s: sample.cycles as f64 / sample.wall.as_secs_f64().max(1e-9),
        p50_ms: quantile_ms(&sample.latencies, 0.5),
        p99_ms: quantile_ms(&sample.latencies, 0.99),
        cpu_ms_per_acquisition: sample.cpu.as_secs_f64() * 1e3 / acquisitions,
        client_watches: sample.watched,
        server_watches,
    }
}

fn figures_of(who: Contestant, runs: Vec<RunFigures>) -> Figures {
    let of = |figure: fn(&RunFigures) -> f64| median(&runs.iter().map(figure).collect::<Vec<_>>());
    let per_release =
        |watches: u64, run: &RunFigures| watches as f64 / run.acquisitions.max(1) as f64;
    let client: Vec<f64> = (runs.iter())
        .filter_map(|run| Some(per_release(run.client_watches?, run)))
        .collect();
    Figures {
        contestant: who,
        acquisitions_per_s: of(|r| r.acquisitions_per_s),
        p50_ms: of(|r| r.p50_ms),
        p99_ms: of(|r| r.p99_ms),
        cpu_ms_per_acquisition: of(|r| r.cpu_ms_per_acquisition),
        client_watches_per_release: (!client.is_empty()).then(|| median(&client)),
        server_watches_per_release: median(
            &runs
                .iter()
                .map(|run| per_release(run.server_watches, run))
                .collect::<Vec<_>>(),
        ),
        runs,
    }
}

/// The `q` quantile of `values` (nearest rank), in ms; 0 for none.
fn quantile_ms(values: &[Duration], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort();
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1)) - 1;
    sorted.get(rank).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// `/proc/loadavg`'s first three fields, or "unknown".
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

impl RealResults {
    /// The results as Markdown: a title line; per storage the lock table, the watch table and
    /// the latch table; and the throughput targets, judged on tmpfs, each said met or not.
    pub fn markdown(&self) -> String {
        use std::fmt::Write as _;
        let s = &self.sizes;
        let m = &self.machine;
        let mut text = format!(
            "`splitbrain bench --real{}` at {} on {} ({} cores); load average {} before, {} \
             after; ZooKeeper 3.8 standalone, tick {} ms, session timeout {} ms, {} \
             acquisitions per run, medians of {} runs.\n",
            if self.mode == "quick" { " --quick" } else { "" },
            self.commit,
            m.cpu,
            m.cores,
            self.load_average[0],
            self.load_average[1],
            s.tick_ms,
            s.session_timeout_ms,
            s.acquisitions,
            s.runs,
        );
        for storage in &self.storages {
            let _ = write!(
                text,
                "\n### The transaction log on {} (`{}`)\n\n{}",
                storage.storage.name(),
                storage.directory,
                storage.markdown(s.leaderships)
            );
        }
        if let Some(judged) = self.judged() {
            let _ = writeln!(
                text,
                "\nTargets, judged with the log on {}:\n",
                judged.storage.name()
            );
            for (target, met) in judged.targets() {
                let _ = writeln!(
                    text,
                    "- {target}: {}",
                    if met { "met" } else { "**not met**" }
                );
            }
        }
        text
    }

    /// The results the targets are judged on: tmpfs's, where the disk's `fsync` does not
    /// hide the clients' own costs; the first storage's when tmpfs was not measured.
    pub fn judged(&self) -> Option<&StorageResults> {
        (self.storages.iter())
            .find(|s| s.storage == Storage::Tmpfs)
            .or(self.storages.first())
    }
}

impl StorageResults {
    /// The lock table, the watch table and the latch table.
    fn markdown(&self, leaderships: u32) -> String {
        use std::fmt::Write as _;
        let mut text = String::from(
            "| contenders | ours acq/s | Curator acq/s | ours / Curator | ours p50 / p99 ms | \
             Curator p50 / p99 ms | ours CPU ms/acq | Curator CPU ms/acq | naive herd acq/s |\n\
             | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        );
        for row in &self.locks {
            let [ours, curator, naive] = [0, 1, 2].map(|i| &row.figures[i]);
            let _ = writeln!(
                text,
                "| {} | {:.0} | {:.0} | {:.2}× | {:.1} / {:.1} | {:.1} / {:.1} | {:.3} | {:.3} | {:.0} |",
                row.contenders,
                ours.acquisitions_per_s,
                curator.acquisitions_per_s,
                ratio(ours.acquisitions_per_s, curator.acquisitions_per_s),
                ours.p50_ms,
                ours.p99_ms,
                curator.p50_ms,
                curator.p99_ms,
                ours.cpu_ms_per_acquisition,
                curator.cpu_ms_per_acquisition,
                naive.acquisitions_per_s,
            );
        }
        text.push_str(
            "\nWatch notifications per release (client: events our sessions delivered; server: \
             `NodeDeleted` watches fired, `mntr`):\n\n\
             | contenders | ours client / server | Curator server | naive herd client / server |\n\
             | --- | --- | --- | --- |\n",
        );
        for row in &self.locks {
            let [ours, curator, naive] = [0, 1, 2].map(|i| &row.figures[i]);
            let client = |f: &Figures| {
                f.client_watches_per_release
                    .map_or("–".into(), |w| format!("{w:.2}"))
            };
            let _ = writeln!(
                text,
                "| {} | {} / {:.2} | {:.2} | {} / {:.2} |",
                row.contenders,
                client(ours),
                ours.server_watches_per_release,
                curator.server_watches_per_release,
                client(naive),
                naive.server_watches_per_release,
            );
        }
        let _ = write!(
            text,
            "\nLeaderLatch failover (leader's `close` → next leader told), {LATCH_PARTICIPANTS} \
             participants, {leaderships} leaderships each per run:\n\n\
             | latch | p50 ms | p99 ms | failovers |\n| --- | --- | --- | --- |\n",
        );
        for latch in &self.failover {
            let _ = writeln!(
                text,
                "| {} | {:.1} | {:.1} | {} |",
                latch.contestant.name(),
                latch.p50_ms,
                latch.p99_ms,
                latch.failovers
            );
        }
        text
    }

    /// The throughput targets, each with whether these results meet it.
    pub fn targets(&self) -> Vec<(String, bool)> {
        let pairs = || {
            self.locks
                .iter()
                .map(|row| (row.contenders, &row.figures[0], &row.figures[1]))
        };
        let all =
            |test: &dyn Fn(u16, &Figures, &Figures) -> bool| pairs().all(|(c, o, k)| test(c, o, k));
        vec![
            (
                "ours ≥ Curator acq/s at every count, ≥ 1.3× at 10 and 20".into(),
                all(&|c, o, k| {
                    let need = if c >= 10 { 1.3 } else { 1.0 };
                    ratio(o.acquisitions_per_s, k.acquisitions_per_s) >= need
                }),
            ),
            (
                "ours p99 ≤ 2/3 of Curator's at every count".into(),
                all(&|_, o, k| o.p99_ms <= k.p99_ms * 2.0 / 3.0),
            ),
            (
                "ours CPU per acquisition ≤ 1/3 of Curator's at every count".into(),
                all(&|_, o, k| o.cpu_ms_per_acquisition <= k.cpu_ms_per_acquisition / 3.0),
            ),
            (
                "ours ≤ 1 watch notification per release (client and server)".into(),
                all(&|_, o, _| {
                    o.server_watches_per_release <= 1.0
                        && o.client_watches_per_release.is_none_or(|w| w <= 1.0)
                }),
            ),
        ]
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    a / b.max(f64::MIN_POSITIVE)
}
