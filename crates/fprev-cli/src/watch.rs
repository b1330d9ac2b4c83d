//! What a user sees while a workflow runs: its progress bars, and its notes
//! as `fprev: note:` and `fprev: warning:` lines on stderr.

use fprev::reveal::{self, Progress};
use fprev::workflow::{self, Note};
use fprev_present::note::Said;

use crate::errors::line;
use crate::progress::{RevealBar, SweepBar};

/// Draws a workflow's progress and says its notes as they come; the
/// warning of an unconfirmed order is held for the command, which says it
/// with where the differing input went.
#[derive(Default)]
pub(crate) struct Watch {
    bar: RevealBar,
    sizes: SweepBar,
    /// The warning of an order its replay does not confirm.
    pub(crate) unconfirmed: Option<Note>,
}

/// Says `note` on stderr, as a note or a warning (an error in it with its
/// remedy in flags).
fn say(note: &Note) {
    match note {
        Note::NoArithmetic {
            why,
            worth_saying: false,
        } => tracing::info!("arithmetic: {}", line(why)),
        Note::NoArithmetic { why, .. } => eprintln!("fprev: note: arithmetic: {}", line(why)),
        Note::NotProven(why) => eprintln!("fprev: note: not proven: {}", line(why)),
        Note::CacheHolds { .. } => {
            eprintln!("fprev: note: {} (--no-cache infers afresh)", Said(note))
        }
        Note::Deterministic(_) => {
            eprintln!(
                "fprev: note: {} (fprev reveal --processes P compares fresh processes)",
                Said(note)
            )
        }
        Note::Explaining(label) => {
            eprintln!("fprev: note: finding the order of {label} (fprev explain)")
        }
        n if n.is_warning() => eprintln!("fprev: warning: {}", Said(n)),
        n => eprintln!("fprev: note: {}", Said(n)),
    }
}

impl reveal::Watcher for Watch {
    fn started(&mut self, n: usize) {
        self.bar.started(n);
    }

    fn placed(&mut self, p: &Progress) {
        self.bar.placed(p);
    }

    fn finished(&mut self) {
        self.bar.finished();
    }
}

impl workflow::Observer for Watch {
    fn note(&mut self, note: Note) {
        match note {
            Note::Unconfirmed { .. } => self.unconfirmed = Some(note),
            note => say(&note),
        }
    }

    fn revealing(&mut self, n: usize, done: usize, total: usize) {
        self.sizes.revealing(n, done, total);
    }

    fn sizes_done(&mut self) {
        std::mem::take(&mut self.sizes).sizes_done();
    }
}
