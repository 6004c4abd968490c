//! What a benchmark contender prints, Rust's and Curator's alike: one `<nanos> <word>` line
//! per call or outcome, stamped on `CLOCK_MONOTONIC` (`System.nanoTime()` in Java), printed
//! after its cycles so that printing is not measured; `<nanos> watched <n>` (Rust only: the
//! watch events its session delivered); and `<nanos> done`, the time its last cycle ended.

use std::time::Duration;

/// A call or an outcome of one cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mark {
    /// A lock: `acquire` called.
    Acquire,
    /// A lock: `acquire` returned (the lock is held).
    Acquired,
    /// A lock: `release` returned.
    Released,
    /// A latch: `start` called.
    Start,
    /// A latch: this participant was told it leads.
    Leader,
    /// A latch: `close` called.
    Close,
    /// A latch: `close` returned.
    Closed,
}

impl Mark {
    /// The mark's word on the line.
    pub fn word(self) -> &'static str {
        match self {
            Mark::Acquire => "acquire",
            Mark::Acquired => "acquired",
            Mark::Released => "released",
            Mark::Start => "start",
            Mark::Leader => "leader",
            Mark::Close => "close",
            Mark::Closed => "closed",
        }
    }

    fn of(word: &str) -> Option<Mark> {
        [
            Mark::Acquire,
            Mark::Acquired,
            Mark::Released,
            Mark::Start,
            Mark::Leader,
            Mark::Close,
            Mark::Closed,
        ]
        .into_iter()
        .find(|mark| mark.word() == word)
    }
}

/// One line of a contender's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// Connected; waiting for `go`.
    Ready,
    /// A call or an outcome.
    Mark(Mark),
    /// The watch events its session delivered during its cycles.
    Watched(u64),
    /// Every cycle done (the line's time is when the last one ended).
    Done,
}

/// The line `text` and the `CLOCK_MONOTONIC` time it carries; an error naming what was
/// expected otherwise.
pub fn parse(text: &str) -> Result<(Duration, Line), String> {
    let expected = || format!("expected `<nanos> <word> [count]`, found {text:?}");
    let mut words = text.split_whitespace();
    let nanos: u64 = (words.next().and_then(|w| w.parse().ok())).ok_or_else(expected)?;
    let line = match (words.next(), words.next(), words.next()) {
        (Some("ready"), None, _) => Line::Ready,
        (Some("done"), None, _) => Line::Done,
        (Some("watched"), Some(count), None) => {
            Line::Watched(count.parse().map_err(|_| expected())?)
        }
        (Some(word), None, _) => Line::Mark(Mark::of(word).ok_or_else(expected)?),
        _ => return Err(expected()),
    };
    Ok((Duration::from_nanos(nanos), line))
}

/// The line for `line` at `nanos`.
pub fn format(nanos: u64, line: Line) -> String {
    match line {
        Line::Ready => format!("{nanos} ready"),
        Line::Mark(mark) => format!("{nanos} {}", mark.word()),
        Line::Watched(count) => format!("{nanos} watched {count}"),
        Line::Done => format!("{nanos} done"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_reads_back_as_written_and_anything_else_is_refused() {
        let lines = [
            Line::Ready,
            Line::Mark(Mark::Acquire),
            Line::Mark(Mark::Acquired),
            Line::Mark(Mark::Released),
            Line::Mark(Mark::Start),
            Line::Mark(Mark::Leader),
            Line::Mark(Mark::Close),
            Line::Mark(Mark::Closed),
            Line::Watched(12),
            Line::Done,
        ];
        for line in lines {
            let text = format(1500, line);
            assert_eq!(parse(&text), Ok((Duration::from_nanos(1500), line)));
        }
        for bad in [
            "",
            "x acquire",
            "7 jump",
            "7 watched",
            "7 watched many",
            "7 done 3",
        ] {
            let error = parse(bad).unwrap_err();
            assert!(error.contains("expected `<nanos> <word>"), "{error}");
        }
    }
}
