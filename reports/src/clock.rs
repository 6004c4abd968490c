//! What a trace's `t` means and how to print it: nanoseconds for simulated and real runs,
//! the step index for a model-checker path.

use trace::Source;

/// Nanoseconds in a second.
const NS_PER_S: u64 = 1_000_000_000;

/// Prints instants and durations of one trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Clock {
    steps: bool,
}

impl Clock {
    /// The clock of a trace from `source`.
    pub(crate) fn new(source: Source) -> Clock {
        Clock {
            steps: source == Source::Model,
        }
    }

    /// An instant as the story and banner print it: `t=12.000s`, or `step 12`.
    pub(crate) fn at(self, t: u64) -> String {
        if self.steps {
            format!("step {t}")
        } else {
            format!("t={}", seconds(t, 3))
        }
    }

    /// An instant in the event table, precise to the microsecond: `12.000150s`, or `12`.
    pub(crate) fn precise(self, t: u64) -> String {
        if self.steps {
            t.to_string()
        } else {
            seconds(t, 6)
        }
    }

    /// A span of trace time: `1.850s`, or `3 steps`.
    pub(crate) fn duration(self, d: u64) -> String {
        if self.steps {
            format!("{d} step{}", if d == 1 { "" } else { "s" })
        } else {
            seconds(d, 3)
        }
    }

    /// An axis label, with no more digits than the tick step needs.
    pub(crate) fn tick(self, t: u64, step: u64) -> String {
        if self.steps {
            return t.to_string();
        }
        let mut digits = 0;
        let mut unit = NS_PER_S;
        while unit > step.max(1) && digits < 9 {
            unit /= 10;
            digits += 1;
        }
        seconds(t, digits)
    }
}

/// Nanoseconds as seconds with `digits` decimals (truncated, so that an instant never
/// prints as later than it was) and an `s` suffix.
fn seconds(ns: u64, digits: u32) -> String {
    let whole = ns / NS_PER_S;
    if digits == 0 {
        return format!("{whole}s");
    }
    let frac = (ns % NS_PER_S) / 10u64.pow(9 - digits);
    format!("{whole}.{frac:0width$}s", width = digits as usize)
}

/// Milliseconds (the fault vocabulary's unit) as a duration in seconds.
pub(crate) fn millis(ms: u64) -> String {
    seconds(ms.saturating_mul(1_000_000), 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_time_prints_in_seconds() {
        let clock = Clock::new(Source::Sim);
        assert_eq!(clock.at(12_000_000_000), "t=12.000s");
        assert_eq!(clock.at(18_123_456_789), "t=18.123s");
        assert_eq!(clock.precise(18_123_456_789), "18.123456s");
        assert_eq!(clock.duration(1_850_000_000), "1.850s");
        assert_eq!(clock.tick(2_500_000_000, 500_000_000), "2.5s");
        assert_eq!(clock.tick(2_000_000_000, 1_000_000_000), "2s");
        assert_eq!(clock.tick(2_050_000_000, 50_000_000), "2.05s");
    }

    #[test]
    fn model_time_prints_in_steps() {
        let clock = Clock::new(Source::Model);
        assert_eq!(clock.at(7), "step 7");
        assert_eq!(clock.duration(1), "1 step");
        assert_eq!(clock.duration(3), "3 steps");
        assert_eq!(clock.tick(4, 2), "4");
    }

    #[test]
    fn fault_durations_print_in_seconds() {
        assert_eq!(millis(8_000), "8.000s");
        assert_eq!(millis(250), "0.250s");
    }
}
