//! The server's stage spans, timed (`BENCH_SPANS=1`): a tracing layer that
//! times every `debug` span of `kubectl_cozy` from its creation to its close
//! (its wall time, awaits included, as a stage of a request takes it), per
//! span name and field values, so a benchmark can print where a request's
//! time goes next to the time its client saw.
//!
//! Each span also gives a row `… (CPU while entered)`: the CPU time of the
//! thread that ran it while it was entered (summed over its polls for an
//! async span), from `CLOCK_THREAD_CPUTIME_ID`. Where it equals the span's
//! wall time, the stage was running, not waiting for a core.
//!
//! Each `request` span also gives a row `request method=… less send`: the
//! request's time less its upstream round trips (its `send` spans), taken
//! per request. That is what the server itself adds to a write, free of
//! kube-apiserver's own spread, so two builds can be told apart by a few
//! microseconds where the client's times differ by a few percent. The
//! pass-through proxy [`record`]s the same measure of itself
//! (`passthrough less send`), the floor of that row.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Subscriber, span};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Registry};

/// Durations (ms) of the spans closed since the last [`take`], by stage:
/// the span's name, then its fields (`convert to=app`).
static TIMES: Mutex<BTreeMap<String, Vec<f64>>> = Mutex::new(BTreeMap::new());

/// Whether stage times are taken (`BENCH_SPANS` is set).
pub static ON: LazyLock<bool> = LazyLock::new(|| std::env::var_os("BENCH_SPANS").is_some());

/// Installs the layer as the process's subscriber when `BENCH_SPANS` is
/// set; returns whether it did.
pub fn install() -> bool {
    if !*ON {
        return false;
    }
    Registry::default()
        .with(StageTimes.with_filter(EnvFilter::new("kubectl_cozy=debug")))
        .init();
    true
}

/// The stage times recorded since the last call (and forgets them).
pub fn take() -> BTreeMap<String, Vec<f64>> {
    std::mem::take(&mut *TIMES.lock().unwrap_or_else(|p| p.into_inner()))
}

/// Records one time of `stage` (ms), as a closed span would.
pub fn record(stage: &str, ms: f64) {
    TIMES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(stage.to_owned())
        .or_default()
        .push(ms);
}

/// Prints `times` (from [`take`]) as a Markdown table: n, p50, p99, mean.
pub fn print(title: &str, times: &BTreeMap<String, Vec<f64>>) {
    println!("\n#### {title}\n");
    println!("| stage (span) | n | p50 ms | p99 ms | mean ms |");
    println!("|---|---:|---:|---:|---:|");
    for (stage, ms) in times {
        let mut sorted = ms.clone();
        sorted.sort_by(f64::total_cmp);
        let pct = |p: f64| {
            let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
            sorted[rank.clamp(1, sorted.len()) - 1]
        };
        let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
        println!(
            "| {stage} | {} | {:.3} | {:.3} | {mean:.3} |",
            sorted.len(),
            pct(50.0),
            pct(99.0)
        );
    }
}

/// The layer.
struct StageTimes;

/// Kept with each open span.
struct Started {
    stage: String,
    at: Instant,
    /// The thread's CPU time when the span was last entered.
    entered_cpu: Option<Duration>,
    /// CPU time of the span's thread while it was entered, summed.
    cpu: Duration,
}

/// The calling thread's CPU time so far.
fn thread_cpu() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    #[expect(unsafe_code, reason = "clock_gettime has no safe wrapper")]
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now);
    }
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Kept with an open `request` span: the time (ms) its closed `send`
/// spans took.
#[derive(Default)]
struct Sent(f64);

/// Appends ` field=value` for every field of a span.
struct Fields<'a>(&'a mut String);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={value:?}", field.name());
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        let _ = write!(self.0, " {}={value}", field.name());
    }
}

impl<S> Layer<S> for StageTimes
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut stage = attrs.metadata().name().to_owned();
        attrs.record(&mut Fields(&mut stage));
        if let Some(span) = ctx.span(id) {
            let mut extensions = span.extensions_mut();
            if span.name() == "request" {
                extensions.insert(Sent::default());
            }
            extensions.insert(Started {
                stage,
                at: Instant::now(),
                entered_cpu: None,
                cpu: Duration::ZERO,
            });
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(started) = span.extensions_mut().get_mut::<Started>()
        {
            started.entered_cpu = Some(thread_cpu());
        }
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(started) = span.extensions_mut().get_mut::<Started>()
            && let Some(entered) = started.entered_cpu.take()
        {
            started.cpu += thread_cpu().saturating_sub(entered);
        }
    }

    fn on_close(&self, id: span::Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let extensions = span.extensions();
        let Some(started) = extensions.get::<Started>() else {
            return;
        };
        let ms = started.at.elapsed().as_secs_f64() * 1e3;
        record(&started.stage, ms);
        record(
            &format!("{} (CPU while entered)", started.stage),
            started.cpu.as_secs_f64() * 1e3,
        );
        match span.name() {
            "send" => {
                // Added to the request it was sent for.
                if let Some(request) = span.scope().skip(1).find(|s| s.name() == "request")
                    && let Some(sent) = request.extensions_mut().get_mut::<Sent>()
                {
                    sent.0 += ms;
                }
            }
            "request" => {
                if let Some(Sent(sent)) = extensions.get::<Sent>()
                    && *sent > 0.0
                {
                    record(&format!("{} less send", started.stage), ms - sent);
                }
            }
            _ => {}
        }
    }
}
