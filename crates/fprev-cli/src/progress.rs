//! Progress bars on stderr: the library tells observers how far a reveal
//! or a sweep is, and these draw it (indicatif hides them when stderr is
//! not a terminal).

use std::time::{Duration, Instant};

use fprev::reveal::{Progress, Watcher};
use fprev::workflow;
use indicatif::{HumanDuration, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Counts the summands a reveal has placed, drawn only once the reveal has
/// run for [`RevealBar::DELAY`]: most reveals end sooner, and a bar that
/// flashes for a moment only distracts. A timer shows it then, even before
/// the first summand is placed (a long first pivot), and ticks its spinner
/// and clock from there.
#[derive(Default)]
pub(crate) struct RevealBar {
    bar: Option<ProgressBar>,
    started: Option<Instant>,
    shown: bool,
}

impl RevealBar {
    /// How long a reveal runs before the bar appears.
    pub(crate) const DELAY: Duration = Duration::from_secs(1);
}

/// Shows `bar` after [`RevealBar::DELAY`] unless it has finished by then.
fn show_later(bar: ProgressBar) {
    std::thread::spawn(move || {
        std::thread::sleep(RevealBar::DELAY);
        if !bar.is_finished() {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(200));
        }
    });
}

impl Watcher for RevealBar {
    fn started(&mut self, n: usize) {
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
        self.bar = Some(bar);
        self.started = Some(Instant::now());
    }

    fn placed(&mut self, p: &Progress) {
        let Some(bar) = &self.bar else { return };
        if p.placed as u64 > bar.position() {
            bar.set_position(p.placed as u64);
        }
        if !self.shown && self.started.is_some_and(|s| s.elapsed() >= Self::DELAY) {
            self.shown = true;
        }
        if self.shown {
            // An estimate only once a hundredth is placed: the first pivot's
            // queries come before any summand has its place.
            let eta = if bar.position() * 100 >= bar.length().unwrap_or(0) {
                format!(", about {} left", HumanDuration(bar.eta()))
            } else {
                String::new()
            };
            bar.set_message(format!("{} queries in {} calls{eta}", p.queries, p.calls));
        }
    }

    fn finished(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Counts the reveals of a sweep, naming the size being revealed.
#[derive(Default)]
pub(crate) struct SweepBar {
    bar: Option<ProgressBar>,
}

impl Watcher for SweepBar {}

impl workflow::Observer for SweepBar {
    fn revealing(&mut self, n: usize, done: usize, total: usize) {
        let bar = self.bar.get_or_insert_with(|| {
            let bar = ProgressBar::new(total as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} sweeping [{bar:30}] {pos}/{len} reveals, {msg} ({elapsed})",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            bar
        });
        bar.set_message(format!("n = {n}"));
        bar.set_position(done as u64);
    }

    fn sizes_done(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Counts the cases of an invariance study, naming the setting being
/// revealed; the notes of each case are logged, not said.
#[derive(Default)]
pub(crate) struct StudyBar {
    bar: Option<ProgressBar>,
}

impl Watcher for StudyBar {}

impl workflow::Observer for StudyBar {
    fn note(&mut self, note: workflow::Note) {
        tracing::info!("{}", fprev_present::note::Said(&note));
    }

    fn studying(&mut self, setting: &fprev::invariance::Setting, done: usize, total: usize) {
        let bar = self.bar.get_or_insert_with(|| {
            let bar = ProgressBar::new(total as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} studying [{bar:30}] {pos}/{len} cases, {msg} ({elapsed}, about \
                     {eta} left)",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            bar
        });
        bar.set_message(setting.to_string());
        bar.set_position(done as u64);
    }

    fn process(&mut self, setting: &fprev::invariance::Setting, done: usize, total: usize) {
        eprintln!(
            "fprev: {}",
            fprev_present::invariance::process(setting, done, total)
        );
    }
}

impl Drop for StudyBar {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
