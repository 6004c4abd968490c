//! How long rendering takes: the GC-pause split brain (~100 events) and a 10,000-event run.
//! `cargo bench -p splitbrain-reports` prints the numbers and writes them to
//! `target/bench-results/reports-render.txt`.

#[path = "../tests/report/fixtures.rs"]
mod fixtures;

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use recipe_table::property::Violation;
use reports::{ReportOptions, render, write_atomic};
use trace::Trace;

/// Renders `trace` `rounds` times; returns the fastest and the median time and the size.
fn measure(trace: &Trace, violations: &[Violation], rounds: usize) -> (Duration, Duration, usize) {
    let options = ReportOptions::default();
    let mut times = Vec::with_capacity(rounds);
    let mut size = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        let html = render(black_box(trace), black_box(violations), &options);
        times.push(start.elapsed());
        size = html.len();
    }
    times.sort();
    (times[0], times[rounds / 2], size)
}

fn main() {
    let small = fixtures::gc_pause(true);
    let long = fixtures::long_run(10_000);
    let mut report = String::from("splitbrain-reports render benchmark (release)\n");
    for (name, (trace, violations), rounds) in
        [("gc-pause-fenced", &small, 200), ("long-run", &long, 20)]
    {
        let (fastest, median, size) = measure(trace, violations, rounds);
        let line = format!(
            "{name}: {} events, {} violations, {size} bytes; render fastest {:.2} ms, median {:.2} ms over {rounds} rounds",
            trace.events.len(),
            violations.len(),
            fastest.as_secs_f64() * 1e3,
            median.as_secs_f64() * 1e3,
        );
        println!("{line}");
        writeln!(report, "{line}").expect("writing to a String cannot fail");
    }
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let out = tmp
        .parent()
        .unwrap_or(tmp)
        .join("bench-results")
        .join("reports-render.txt");
    match write_atomic(&out, &report) {
        Ok(()) => println!("written to {}", out.display()),
        Err(error) => eprintln!("could not write the results: {error}"),
    }
}
