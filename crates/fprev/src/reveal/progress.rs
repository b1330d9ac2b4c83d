//! A progress bar on stderr for reveals that take more than a second.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::oracle::Oracle;

/// Counts summands placed in the tree; draws only once a reveal has run for
/// [`Progress::DELAY`] (indicatif hides itself when stderr is not a terminal).
/// A timer shows the bar then, even before the first summand is placed
/// (a long first pivot), and ticks its spinner and clock from there.
pub struct Progress {
    bar: Option<ProgressBar>,
    placed: Vec<bool>,
    started: Instant,
    shown: bool,
}

/// Shows `bar` after [`Progress::DELAY`] unless it has finished by then.
fn show_later(bar: ProgressBar) {
    std::thread::spawn(move || {
        std::thread::sleep(Progress::DELAY);
        if !bar.is_finished() {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(200));
        }
    });
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
            bar.set_message("asking the first pivot's queries");
            show_later(bar.clone());
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
        }
        if self.shown {
            let c = oracle.counters;
            // An estimate only once a hundredth is placed: the first pivot's
            // queries come before any summand has its place.
            let eta = if bar.position() * 100 >= bar.length().unwrap_or(0) {
                format!(", about {} left", indicatif::HumanDuration(bar.eta()))
            } else {
                String::new()
            };
            bar.set_message(format!("{} queries in {} calls{eta}", c.queries, c.calls));
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
