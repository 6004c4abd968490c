//! A hunt's progress on stderr: seeds done, seeds per second and the time left. On a terminal
//! it is indicatif's bar; elsewhere (the log of a batch job, say) one line a minute, so that a
//! shard running for hours still says how far it is. Only what is shown depends on the clock,
//! never what is run or written.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How often a hunt whose stderr is not a terminal prints a progress line.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// Progress over a known number of seeds.
pub struct Progress {
    bar: ProgressBar,
    log: Option<Log>,
}

/// The state of the once-a-minute lines.
struct Log {
    /// The command, which begins each line.
    command: &'static str,
    total: u64,
    done: u64,
    started: Instant,
    next: Instant,
}

impl Progress {
    /// Progress of `command` over `total` seeds; nothing at all when `quiet` (`--json`).
    pub fn new(command: &'static str, total: u64, quiet: bool) -> Progress {
        if quiet {
            return Progress {
                bar: ProgressBar::hidden(),
                log: None,
            };
        }
        if !std::io::stderr().is_terminal() {
            let started = Instant::now();
            let next = started + LOG_EVERY;
            let log = Log {
                command,
                total,
                done: 0,
                started,
                next,
            };
            return Progress {
                bar: ProgressBar::hidden(),
                log: Some(log),
            };
        }
        let bar = ProgressBar::new(total);
        let template =
            "{bar:40} {human_pos}/{human_len} seeds · {per_sec} · {elapsed} elapsed · eta {eta}";
        bar.set_style(ProgressStyle::with_template(template).expect("a valid template"));
        Progress { bar, log: None }
    }

    /// One more seed done.
    pub fn inc(&mut self) {
        self.bar.inc(1);
        if let Some(log) = &mut self.log {
            log.done += 1;
            let now = Instant::now();
            if now >= log.next {
                log.next = now + LOG_EVERY;
                eprintln!("{}", log.line(now));
            }
        }
    }

    /// Prints `line` above the bar.
    pub fn println(&self, line: String) {
        if self.log.is_some() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Log {
    /// `hunt: 12000/100000 seeds, 210 seeds/s, 6m59s left`.
    fn line(&self, now: Instant) -> String {
        let seconds = now.duration_since(self.started).as_secs_f64();
        let rate = self.done as f64 / seconds.max(f64::MIN_POSITIVE);
        let left = (self.total - self.done) as f64 / rate.max(f64::MIN_POSITIVE);
        let left = Duration::from_secs_f64(left.min(1e9));
        let (minutes, secs) = (left.as_secs() / 60, left.as_secs() % 60);
        format!(
            "{}: {}/{} seeds, {rate:.0} seeds/s, {minutes}m{secs:02}s left",
            self.command, self.done, self.total
        )
    }
}
