//! How log events read on a user's terminal. At the default verbosity an
//! interactive command (`serve`, `doctor`, …) shows only warnings and
//! errors, and says them as its own lines do — `Warning: …`, `Error: …`,
//! the event's fields after the message in parentheses — not as a log
//! (no time, level column or spans), so that they read like the `Kinds:`,
//! `Tunnel:` and `Warning:` lines serve prints beside them. Logs that are
//! kept (the tunnel agent's, the guard's, `serve --in-cluster`'s) and any
//! `-v`/`RUST_LOG` run keep tracing's full lines.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The console's event format (see the module's documentation).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ConsoleEvents;

impl<S, N> FormatEvent<S, N> for ConsoleEvents
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut line = Line::default();
        event.record(&mut line);
        let (label, colour) = label(*event.metadata().level());
        if writer.has_ansi_escapes() {
            write!(writer, "\x1b[{colour}m{label}:\x1b[0m ")?;
        } else {
            write!(writer, "{label}: ")?;
        }
        writeln!(writer, "{}", line.text())
    }
}

/// The word that starts an event of `level`, and its ANSI colour.
fn label(level: Level) -> (&'static str, &'static str) {
    match level {
        Level::ERROR => ("Error", "31"),
        Level::WARN => ("Warning", "33"),
        Level::INFO => ("Info", "32"),
        Level::DEBUG => ("Debug", "34"),
        Level::TRACE => ("Trace", "35"),
    }
}

/// An event's message and its other fields, in the order recorded.
#[derive(Debug, Default)]
struct Line {
    message: String,
    fields: Vec<(&'static str, String)>,
}

impl Line {
    /// `message (name=value, …)`, or the message alone.
    fn text(&self) -> String {
        let mut text = self.message.clone();
        if !self.fields.is_empty() {
            let fields: Vec<String> = self
                .fields
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            let _ = write!(text, " ({})", fields.join(", "));
        }
        text
    }
}

impl Visit for Line {
    fn record_str(&mut self, field: &Field, value: &str) {
        if is_log_metadata(field) {
            return;
        }
        if field.name() == "message" {
            value.clone_into(&mut self.message);
        } else {
            self.fields.push((field.name(), value.to_owned()));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if is_log_metadata(field) {
            return;
        }
        let text = format!("{value:?}");
        if field.name() == "message" {
            self.message = text;
        } else {
            self.fields.push((field.name(), text));
        }
    }
}

/// Whether `field` is where an event bridged from the `log` crate came
/// from (`log.target`, `log.file`, …), which tracing's own format hides.
fn is_log_metadata(field: &Field) -> bool {
    field.name().starts_with("log.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// What `events` print through the console format.
    fn printed(ansi: bool, events: impl FnOnce()) -> String {
        let out = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(ansi)
            .event_format(ConsoleEvents)
            .with_max_level(Level::TRACE)
            .with_writer(move || Sink(sink.clone()))
            .finish();
        tracing::subscriber::with_default(subscriber, events);
        String::from_utf8(out.lock().unwrap().clone()).unwrap()
    }

    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn events_read_as_the_commands_own_lines_with_their_fields_after_the_message() {
        let text = printed(false, || {
            let error = "connection refused";
            tracing::warn!(lease = "team/kubectl-cozy-3f2a", %error, "renew the session Lease (retrying every second)");
            tracing::error!("kind definitions change refused: bad.yaml:2:9: unclosed bracket '['");
            let span = tracing::info_span!("request", method = "GET");
            let _entered = span.enter();
            tracing::info!(after = ?std::time::Duration::from_millis(1500), "tunnel connected");
        });
        assert_eq!(
            text,
            "Warning: renew the session Lease (retrying every second) (lease=team/kubectl-cozy-3f2a, error=connection refused)\n\
             Error: kind definitions change refused: bad.yaml:2:9: unclosed bracket '['\n\
             Info: tunnel connected (after=1.5s)\n"
        );
    }

    #[test]
    fn a_colour_terminal_gets_the_label_coloured() {
        let text = printed(true, || tracing::warn!("careful"));
        assert_eq!(text, "\x1b[33mWarning:\x1b[0m careful\n");
    }
}
