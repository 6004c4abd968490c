//! When a real count differs from the simulator's share beyond noise: a two-sided binomial
//! test of the real runs against the simulator's share, at 5 % (`splitbrain fidelity`'s, and
//! any fidelity table's, such as `examples/client-lock`'s).

/// The significance level below which a real count is called different.
const LEVEL: f64 = 0.05;

/// True when `real` successes in `runs` real runs are unlikely (below 5 %, either
/// tail) if each run succeeded with the simulator's share `sim` out of `sim_runs`.
pub fn differs(real: u64, runs: u64, sim: u64, sim_runs: u64) -> bool {
    if runs == 0 || sim_runs == 0 {
        return false;
    }
    let p = sim as f64 / sim_runs as f64;
    let at_least = (real..=runs).map(|k| binomial(runs, k, p)).sum::<f64>();
    let at_most = (0..=real).map(|k| binomial(runs, k, p)).sum::<f64>();
    at_least < LEVEL || at_most < LEVEL
}

/// P(X = k) for X ~ Binomial(n, p).
fn binomial(n: u64, k: u64, p: f64) -> f64 {
    let choose = (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64);
    choose * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32)
}

/// `k/n (x %)`.
pub fn share(k: u64, n: u64) -> String {
    match n {
        0 => "–".into(),
        _ => format!("{k}/{n} ({:.0} %)", 100.0 * k as f64 / n as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_the_share_makes_likely_agrees_and_an_unlikely_one_differs() {
        assert!(!differs(5, 10, 100, 200));
        assert!(!differs(0, 3, 20, 200));
        assert!(differs(0, 10, 150, 200));
        assert!(differs(10, 10, 100, 200));
        assert!(differs(1, 10, 0, 200));
        assert!(!differs(0, 10, 0, 200));
        assert!(!differs(10, 10, 200, 200));
    }

    #[test]
    fn shares_print_as_counts_and_percentages() {
        assert_eq!(share(3, 10), "3/10 (30 %)");
        assert_eq!(share(0, 0), "–");
    }
}
