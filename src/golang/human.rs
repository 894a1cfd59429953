//! k8s.io/apimachinery `pkg/util/duration`: [`human_duration`]
//! (`HumanDuration`, the AGE column of `kubectl get`: `45s`, `3m10s`,
//! `3h20m`, `2d3h`, `2y1d`) and [`short_human_duration`]
//! (`ShortHumanDuration`: one unit only, `3h`).
//!
//! Both tolerate a clock skew of up to two seconds (printed as `0s`) and
//! print `<invalid>` for a larger negative duration.

use super::duration::GoDuration;

const SECOND: i64 = 1_000_000_000;
const MINUTE: i64 = 60 * SECOND;
const HOUR: i64 = 60 * MINUTE;

/// Go's `int(d.Seconds())`, `int(d.Minutes())`, `int(d.Hours())`: the
/// quotient truncated toward zero. Go goes through a float64, which is exact
/// here: an `i64` of nanoseconds holds fewer than 2^53 seconds.
fn truncated(d: GoDuration, unit: i64) -> i64 {
    d.as_nanos() / unit
}

/// The skew check both functions start with: `Some` text for a negative
/// duration, `None` to go on.
fn negative(seconds: i64) -> Option<&'static str> {
    if seconds < -1 {
        Some("<invalid>")
    } else if seconds < 0 {
        Some("0s")
    } else {
        None
    }
}

/// apimachinery's `duration.HumanDuration`: about two or three significant
/// figures, as kubectl prints ages.
pub fn human_duration(d: GoDuration) -> String {
    let seconds = truncated(d, SECOND);
    if let Some(text) = negative(seconds) {
        return text.to_owned();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let nanos = d.as_nanos();
    let minutes = nanos / MINUTE;
    if minutes < 10 {
        let s = (nanos / SECOND) % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    } else if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = nanos / HOUR;
    if hours < 8 {
        let m = minutes % 60;
        if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        }
    } else if hours < 48 {
        format!("{hours}h")
    } else if hours < 24 * 8 {
        let h = hours % 24;
        if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        }
    } else if hours < 24 * 365 * 2 {
        format!("{}d", hours / 24)
    } else if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        }
    } else {
        format!("{}y", hours / 24 / 365)
    }
}

/// apimachinery's `duration.ShortHumanDuration`: the largest whole unit.
pub fn short_human_duration(d: GoDuration) -> String {
    let seconds = truncated(d, SECOND);
    if let Some(text) = negative(seconds) {
        return text.to_owned();
    }
    if seconds < 60 {
        return format!("{seconds}s");
    }
    let minutes = truncated(d, MINUTE);
    if minutes < 60 {
        return format!("{minutes}m");
    }
    let hours = truncated(d, HOUR);
    if hours < 24 {
        format!("{hours}h")
    } else if hours < 24 * 365 {
        format!("{}d", hours / 24)
    } else {
        format!("{}y", hours / 24 / 365)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;
    const S: i64 = SECOND;
    const M: i64 = MINUTE;
    const H: i64 = HOUR;
    const D: i64 = 24 * H;
    const Y: i64 = 365 * D;

    fn d(nanos: i64) -> GoDuration {
        GoDuration::from_nanos(nanos)
    }

    /// `TestHumanDuration` and `TestHumanDurationBoundaries` from
    /// kubernetes/apimachinery `pkg/util/duration/duration_test.go`.
    #[test]
    fn human_duration_matches_apimachinery() {
        let rows: &[(i64, &str)] = &[
            (S, "1s"),
            (70 * S, "70s"),
            (190 * S, "3m10s"),
            (70 * M, "70m"),
            (47 * H, "47h"),
            (49 * H, "2d1h"),
            ((8 * 24 + 2) * H, "8d"),
            (367 * D, "367d"),
            ((365 * 2 * 24 + 25) * H, "2y1d"),
            ((365 * 8 * 24 + 2) * H, "8y"),
            (-2 * S, "<invalid>"),
            (-2 * S + 1, "0s"),
            (0, "0s"),
            (S - MS, "0s"),
            (2 * M - MS, "119s"),
            (2 * M, "2m"),
            (2 * M + S, "2m1s"),
            (10 * M - MS, "9m59s"),
            (10 * M, "10m"),
            (10 * M + S, "10m"),
            (3 * H - MS, "179m"),
            (3 * H, "3h"),
            (3 * H + M, "3h1m"),
            (8 * H - MS, "7h59m"),
            (8 * H, "8h"),
            (8 * H + 59 * M, "8h"),
            (2 * D - MS, "47h"),
            (2 * D, "2d"),
            (2 * D + H, "2d1h"),
            (8 * D - MS, "7d23h"),
            (8 * D, "8d"),
            (8 * D + 23 * H, "8d"),
            (2 * Y - MS, "729d"),
            (2 * Y, "2y"),
            (2 * Y + 23 * H, "2y"),
            (2 * Y + 23 * H + 59 * M, "2y"),
            (2 * Y + D - MS, "2y"),
            (2 * Y + D, "2y1d"),
            (3 * Y, "3y"),
            (4 * Y, "4y"),
            (5 * Y, "5y"),
            (6 * Y, "6y"),
            (7 * Y, "7y"),
            (8 * Y - MS, "7y364d"),
            (8 * Y, "8y"),
            (8 * Y + 364 * D, "8y"),
            (9 * Y, "9y"),
        ];
        for &(nanos, want) in rows {
            assert_eq!(
                human_duration(d(nanos)),
                want,
                "HumanDuration({})",
                d(nanos)
            );
        }
    }

    /// `TestShortHumanDurationBoundaries` from kubernetes/apimachinery
    /// `pkg/util/duration/duration_test.go`.
    #[test]
    fn short_human_duration_matches_apimachinery() {
        let rows: &[(i64, &str)] = &[
            (-2 * S, "<invalid>"),
            (-2 * S + 1, "0s"),
            (0, "0s"),
            (S - MS, "0s"),
            (S, "1s"),
            (2 * S - MS, "1s"),
            (M - MS, "59s"),
            (M, "1m"),
            (2 * M - MS, "1m"),
            (H - MS, "59m"),
            (H, "1h"),
            (2 * H - MS, "1h"),
            (D - MS, "23h"),
            (D, "1d"),
            (2 * D - MS, "1d"),
            (Y - MS, "364d"),
            (Y, "1y"),
            (2 * Y - MS, "1y"),
            (2 * Y, "2y"),
        ];
        for &(nanos, want) in rows {
            assert_eq!(
                short_human_duration(d(nanos)),
                want,
                "ShortHumanDuration({})",
                d(nanos)
            );
        }
    }
}
