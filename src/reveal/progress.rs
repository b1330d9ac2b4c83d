//! A progress bar on stderr for reveals that take more than a second.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::oracle::Oracle;

/// Counts summands placed in the tree; draws only once a reveal has run for
/// [`Progress::DELAY`] (indicatif hides itself when stderr is not a terminal).
pub struct Progress {
    bar: Option<ProgressBar>,
    placed: Vec<bool>,
    started: Instant,
    shown: bool,
}

impl Progress {
    /// How long a reveal runs before the bar appears.
    pub const DELAY: Duration = Duration::from_secs(1);

    /// Progress over `n` summands; `enabled` false draws nothing.
    pub fn new(n: usize, enabled: bool) -> Self {
        let bar = enabled.then(|| {
            let bar = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} revealing [{bar:30}] {pos}/{len} summands placed, {msg} ({elapsed})",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            bar
        });
        Progress {
            bar,
            placed: vec![false; n],
            started: Instant::now(),
            shown: false,
        }
    }

    /// Notes that `leaf` has its place (as a pivot or a lone summand).
    pub fn place(&mut self, leaf: usize, oracle: &Oracle) {
        let Some(bar) = &self.bar else { return };
        if !std::mem::replace(&mut self.placed[leaf], true) {
            bar.inc(1);
        }
        if !self.shown && self.started.elapsed() >= Self::DELAY {
            self.shown = true;
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        if self.shown {
            let c = oracle.counters;
            bar.set_message(format!("{} queries in {} calls", c.queries, c.calls));
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
