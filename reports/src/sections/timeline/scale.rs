//! Trace time → horizontal pixels, and the axis ticks of a view.

/// Maps the interval `[from, to]` of trace time onto `[x0, x0 + width]` pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scale {
    /// The first instant shown.
    pub from: u64,
    /// The last instant shown.
    pub to: u64,
    /// The pixel of `from`.
    pub x0: f64,
    /// The pixels `[from, to]` spans.
    pub width: f64,
}

/// About how many ticks an axis gets.
const TICKS: u64 = 10;

impl Scale {
    /// A scale of `[from, to]` (widened to at least one unit) onto `width` pixels at `x0`.
    pub(crate) fn new(from: u64, to: u64, x0: f64, width: f64) -> Scale {
        Scale {
            from,
            to: to.max(from + 1),
            x0,
            width,
        }
    }

    /// The pixel of instant `t`, clamped to the view.
    pub(crate) fn x(&self, t: u64) -> f64 {
        let t = t.clamp(self.from, self.to);
        self.x0 + (t - self.from) as f64 / (self.to - self.from) as f64 * self.width
    }

    /// Whether `[start, end]` shows in the view at all.
    pub(crate) fn shows(&self, start: u64, end: u64) -> bool {
        start <= self.to && end >= self.from
    }

    /// The tick step: 1, 2 or 5 times a power of ten, giving about [`TICKS`] ticks.
    pub(crate) fn step(&self) -> u64 {
        let rough = ((self.to - self.from) / TICKS).max(1);
        let mut power = 1u64;
        while power.saturating_mul(10) <= rough {
            power *= 10;
        }
        [1, 2, 5, 10]
            .into_iter()
            .map(|m| power.saturating_mul(m))
            .find(|&step| step >= rough)
            .unwrap_or(power)
    }

    /// The ticks: every multiple of [`Scale::step`] inside the view.
    pub(crate) fn ticks(&self) -> impl Iterator<Item = u64> + '_ {
        let step = self.step();
        let first = self.from.div_ceil(step) * step;
        (0..)
            .map(move |i| first + i * step)
            .take_while(|&t| t <= self.to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_map_linearly_and_clamp() {
        let scale = Scale::new(10, 20, 100.0, 1000.0);
        assert_eq!(scale.x(10), 100.0);
        assert_eq!(scale.x(15), 600.0);
        assert_eq!(scale.x(25), 1100.0);
        assert_eq!(scale.x(0), 100.0);
    }

    #[test]
    fn ticks_are_round_and_inside() {
        let scale = Scale::new(0, 23_000_000_000, 0.0, 1000.0);
        assert_eq!(scale.step(), 5_000_000_000);
        let ticks: Vec<u64> = scale.ticks().collect();
        assert_eq!(ticks, [0, 5, 10, 15, 20].map(|s| s * 1_000_000_000));
        let steps = Scale::new(3, 9, 0.0, 100.0);
        assert_eq!(steps.step(), 1);
        assert_eq!(steps.ticks().count(), 7);
    }
}
