//! Ages as kubectl prints them: apimachinery's `HumanDuration` of a whole
//! number of seconds (`45s`, `5m3s`, `3h20m`, `2d3h`), and `… ago`. Shared by
//! `doctor`'s reports and `serve`'s refusals.

use crate::golang::{self, GoDuration};

/// An age as kubectl prints one (apimachinery's `HumanDuration`): `45s`,
/// `5m3s`, `3h20m`, `2d3h`. A negative age (clock skew) reads `0s`.
pub fn age(seconds: i64) -> String {
    let nanos = i128::from(seconds.max(0)) * 1_000_000_000;
    golang::human_duration(GoDuration::from_nanos_saturating(nanos))
}

/// `5m ago`.
pub fn ago(seconds: i64) -> String {
    format!("{} ago", age(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kubectl prints `3h20m` and `2d3h` where `doctor` used to print `3h`
    /// and `2d`: ages go through apimachinery's `HumanDuration`.
    #[test]
    fn durations_read_like_kubectl() {
        let rows: &[(i64, &str)] = &[
            (5, "5s"),
            (45, "45s"),
            (119, "119s"),
            (303, "5m3s"),
            (300, "5m"),
            (3000, "50m"),
            (4 * 3600, "4h"),
            (3 * 3600 + 20 * 60, "3h20m"),
            (47 * 3600, "47h"),
            (2 * 86_400 + 3 * 3600, "2d3h"),
            (3 * 86_400, "3d"),
            (400 * 86_400, "400d"),
            (800 * 86_400, "2y70d"),
        ];
        for &(seconds, want) in rows {
            assert_eq!(age(seconds), want, "{seconds}s");
        }
        assert_eq!(ago(-4), "0s ago");
    }
}
