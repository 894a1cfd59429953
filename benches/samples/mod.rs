//! Latencies of one subject, their percentiles, and the ratio of a
//! percentile of two subjects measured in the same rounds, with a 95 %
//! interval: what the server and clients benchmarks hold their targets to.

use std::time::Duration;

/// Latencies of one subject.
#[derive(Default)]
pub struct Samples {
    /// Each sample in ms, in the order taken.
    pub ms: Vec<f64>,
}

impl Samples {
    /// Adds one latency.
    pub fn push(&mut self, d: Duration) {
        self.ms.push(d.as_secs_f64() * 1e3);
    }

    /// The samples, fastest first.
    pub fn sorted(&self) -> Vec<f64> {
        let mut v = self.ms.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    /// Nearest-rank percentile, ms.
    pub fn pct(&self, p: f64) -> f64 {
        let v = self.sorted();
        if v.is_empty() {
            return f64::NAN;
        }
        let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
        v[rank.clamp(1, v.len()) - 1]
    }

    /// The median, ms.
    pub fn p50(&self) -> f64 {
        self.pct(50.0)
    }

    /// The 99th percentile, ms.
    pub fn p99(&self) -> f64 {
        self.pct(99.0)
    }

    /// The mean, ms.
    pub fn mean(&self) -> f64 {
        self.ms.iter().sum::<f64>() / self.ms.len() as f64
    }
}

/// The ratio of one percentile of two sets of samples, and its 95 %
/// interval.
pub struct PercentileRatio {
    /// The ratio of the two percentiles.
    pub value: f64,
    /// Its 95 % interval, low and high.
    pub interval: (f64, f64),
}

/// Resamplings of [`percentile_ratio`]'s bootstrap.
const BOOTSTRAP_RESAMPLES: usize = 2_000;

/// The `p`th percentile of `a` over that of `b`, where `a.ms[i]` and
/// `b.ms[i]` were measured in the same round (interleaved, so that both
/// saw the same moment of the machine), with a 95 % interval by a paired
/// bootstrap: rounds are drawn with replacement, both samples of a round
/// together, and the ratio is recomputed for each draw; the interval is
/// the 2.5th to 97.5th percentile of those ratios. On a machine whose
/// upstream stalls now and then, a p99 rests on the few slowest rounds,
/// and this interval says how far another run could move it: a target is
/// met only when the whole interval is under it.
pub fn percentile_ratio(a: &Samples, b: &Samples, p: f64) -> PercentileRatio {
    let value = a.pct(p) / b.pct(p);
    let n = a.ms.len().min(b.ms.len());
    if n == 0 {
        return PercentileRatio {
            value,
            interval: (f64::NAN, f64::NAN),
        };
    }
    // splitmix64, seeded the same way each run: the interval is a property
    // of the samples, not of the draw.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next_index = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    };
    let rank = (((p / 100.0) * n as f64).ceil() as usize).clamp(1, n) - 1;
    let (mut xa, mut xb) = (vec![0.0; n], vec![0.0; n]);
    let mut ratios = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        for (x, y) in xa.iter_mut().zip(xb.iter_mut()) {
            let i = next_index();
            *x = a.ms[i];
            *y = b.ms[i];
        }
        let (_, pa, _) = xa.select_nth_unstable_by(rank, f64::total_cmp);
        let pa = *pa;
        let (_, pb, _) = xb.select_nth_unstable_by(rank, f64::total_cmp);
        ratios.push(pa / *pb);
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((q * ratios.len() as f64) as usize).min(ratios.len() - 1)];
    PercentileRatio {
        value,
        interval: (at(0.025), at(0.975)),
    }
}
