//! Reconnect delays: exponential backoff with jitter, so many clients that
//! lost the same agent do not return in lockstep.

use std::time::Duration;

/// Exponential backoff: `initial × multiplier^(attempt−1)`, capped at `max`,
/// then scaled by a random factor in `[1 − jitter, 1 + jitter]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// Delay before the first retry.
    pub initial: Duration,
    /// The largest delay (before jitter).
    pub max: Duration,
    /// Growth per attempt (≥ 1).
    pub multiplier: f64,
    /// Relative jitter, `0.0..=1.0`; 0.2 means ±20 %.
    pub jitter: f64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_millis(250),
            max: Duration::from_secs(15),
            multiplier: 2.0,
            jitter: 0.2,
        }
    }
}

impl Backoff {
    /// The delay before retry number `attempt` (1 for the first retry), with
    /// jitter drawn from `rng`.
    pub fn delay(&self, attempt: u32, rng: &mut fastrand::Rng) -> Duration {
        let base = self.base(attempt).as_secs_f64();
        let jitter = self.jitter.clamp(0.0, 1.0);
        let factor = 1.0 + jitter * (2.0 * rng.f64() - 1.0);
        Duration::from_secs_f64((base * factor).max(0.0))
    }

    /// The delay before retry number `attempt`, without jitter.
    pub fn base(&self, attempt: u32) -> Duration {
        let exp = attempt.saturating_sub(1).min(64) as i32;
        let grown = self.initial.as_secs_f64() * self.multiplier.max(1.0).powi(exp);
        let capped = grown.min(self.max.as_secs_f64());
        Duration::from_secs_f64(capped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_exponentially_to_the_cap() {
        let b = Backoff::default();
        let bases: Vec<u128> = (1..=9).map(|a| b.base(a).as_millis()).collect();
        assert_eq!(
            bases,
            vec![250, 500, 1000, 2000, 4000, 8000, 15000, 15000, 15000]
        );
        // Huge attempt numbers neither overflow nor exceed the cap.
        assert_eq!(b.base(u32::MAX), Duration::from_secs(15));
        assert_eq!(b.base(0), Duration::from_millis(250));
    }

    #[test]
    fn jitter_stays_within_bounds_and_varies() {
        let b = Backoff::default();
        let mut rng = fastrand::Rng::with_seed(7);
        let delays: Vec<Duration> = (0..200).map(|_| b.delay(3, &mut rng)).collect();
        for d in &delays {
            assert!(
                *d >= Duration::from_millis(800) && *d <= Duration::from_millis(1200),
                "{d:?}"
            );
        }
        let distinct: std::collections::BTreeSet<u128> =
            delays.iter().map(|d| d.as_micros()).collect();
        assert!(distinct.len() > 100, "jitter barely varies");
    }

    #[test]
    fn no_jitter_is_exact() {
        let b = Backoff {
            jitter: 0.0,
            ..Backoff::default()
        };
        let mut rng = fastrand::Rng::with_seed(1);
        assert_eq!(b.delay(2, &mut rng), Duration::from_millis(500));
    }
}
