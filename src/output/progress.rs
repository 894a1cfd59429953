//! Progress on long waits: an indicatif spinner on stderr, shown only when
//! stderr is a terminal, so pipes and CI logs stay clean; and a step counter
//! for scans whose total grows as work is found.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A spinner with a message; hidden when stderr is not a terminal.
pub fn spinner(message: impl Into<String>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.set_message(message.into());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A bar counting finished steps out of a total that grows as work is
/// discovered; hidden when stderr is not a terminal.
pub fn counter(message: impl Into<String>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {msg} [{bar:20}] {pos}/{len} ({elapsed})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message.into());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}
