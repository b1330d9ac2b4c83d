//! The error type, the [`Kind`] of fault each error is (a front end maps
//! kinds to what it reports: the command line to exit statuses, docs/REFERENCE.md,
//! Exit statuses), and the [`Remedy`] an error may carry.
//!
//! Where a cause exists (a file the system would not read, JSON that did not
//! parse) it is kept as the error's [`source`](std::error::Error::source),
//! not flattened into text: [`Report`] prints the whole chain on one line.
//!
//! ```
//! use fprev::document::TreeDocument;
//! use fprev::error::{Kind, Report};
//!
//! let e = TreeDocument::read("no/such/tree.json".as_ref()).unwrap_err();
//! assert_eq!(e.kind(), Kind::Input);
//! assert!(std::error::Error::source(&e).is_some());
//! let line = Report(&e).to_string();
//! assert!(line.starts_with("cannot read no/such/tree.json: "), "{line}");
//! ```
//!
//! What to do about an error is data, a [`Remedy`] in terms of the
//! [`Param`]s a user gives: the library words it with plain names, and a
//! front end with its own (a flag, a keyword) through [`report_with`].
//!
//! ```
//! use fprev::error::{Error, Remedy, Report, Param, report_with};
//!
//! let e = Error::Input("n = 900 is too large".into()).advise(Remedy::Smaller(Param::N));
//! assert_eq!(Report(&e).to_string(), "n = 900 is too large; give a smaller n");
//! let flags = |r: &Remedy| match r {
//!     Remedy::Smaller(Param::N) => "give a smaller -n".to_string(),
//!     other => other.to_string(),
//! };
//! assert_eq!(report_with(&e, &flags), "n = 900 is too large; give a smaller -n");
//! ```

pub mod bounds;
pub mod fault;
mod input;

pub use fault::Fault;
pub use input::{Irreproducible, Missing, Summands};

use std::fmt;
use std::path::PathBuf;

/// Everything that can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad usage or bad input, said as text: a malformed spec, file or
    /// option, a value the black box or the method cannot take (an `n` the
    /// format cannot count to). What code decides by has a variant of its
    /// own ([`Error::Missing`], [`Error::Summands`], …).
    #[error("{0}")]
    Input(String),
    /// The black box broke an assumption of the method: NaN, a fraction, an
    /// inconsistent answer.
    #[error("{0}")]
    BlackBox(Fault),
    /// A predicted tree that masked checks cannot prove on this black box
    /// (its accumulator cannot count the units a check places, its
    /// products cannot be masked, the sizes differ): the caller reveals
    /// the tree instead, or leaves the prediction unproven.
    #[error("{0}")]
    Unprovable(Box<Error>),
    /// The ranks of a collective ended with different bits (which ranks,
    /// where): no one order is every rank's, and no tree is revealed.
    #[error("{0}")]
    Disagree(String),
    /// What this machine lacks (a library, a Python package): a survey
    /// leaves such a library out, and a search goes on to the next.
    #[error("{0}")]
    Missing(Missing),
    /// A tree of another count of summands than the black box's.
    #[error("{0}")]
    Summands(Summands),
    /// A black box whose bits no emitted code reproduces.
    #[error("{0}")]
    Irreproducible(Irreproducible),
    /// An error of opening the black box `spec` names, said after it.
    #[error("{spec}: {error}")]
    InSpec {
        /// The spec, as the user wrote it.
        spec: String,
        /// What went wrong.
        error: Box<Error>,
    },
    /// A file that could not be read or written.
    #[error("cannot {action} {}", path.display())]
    File {
        /// What was tried: `read`, `write`, `open`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why, as the system says.
        #[source]
        source: std::io::Error,
    },
    /// Text that should have been JSON of a known shape and was not.
    #[error("{context}")]
    Json {
        /// What the text was meant to be, e.g. `not a tree file`.
        context: String,
        /// Where and how it failed to parse.
        #[source]
        source: serde_json::Error,
    },
    /// Something fprev asked of the operating system failed: starting
    /// threads, a process, making a temporary directory.
    #[error("{what}")]
    System {
        /// What fprev was doing.
        what: String,
        /// Why, as the system says.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An error a foreign black box raised (a Python exception): `error`
    /// says it in one line for a report, and `raised` is the original, for
    /// a front end that hands it back (by downcasting). `raised` is not a
    /// [`source`](std::error::Error::source): the line already quotes it.
    #[error("{error}")]
    Raised {
        /// The error in the crate's terms, with its kind.
        error: Box<Error>,
        /// The foreign error itself.
        raised: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An error and what to do about it. The remedy is data, for a front
    /// end to word with its own names for settings ([`report_with`]); the
    /// inner error is not a [`source`](std::error::Error::source), so that a
    /// report says it once.
    #[error("{error}; {remedy}")]
    Advised {
        /// What went wrong.
        error: Box<Error>,
        /// What to do about it.
        remedy: Remedy,
    },
}

/// What a user sets, named in a [`Remedy`]: each front end has its own
/// name for it (a flag, a keyword argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// The summand count `n`.
    N,
    /// The matrix shape `M,N,K` of a GEMV or GEMM.
    Shape,
    /// The algorithm that reveals the order.
    Algorithm,
    /// The input format (the dtype).
    Dtype,
    /// The format the black box accumulates in.
    Accumulator,
    /// Inputs a call, for a black box that sums several.
    Batch,
    /// The number of MPI ranks of the job.
    Ranks,
    /// The thread count.
    Threads,
    /// The format of the output.
    OutputFormat,
    /// Random inputs a revealed tree is replayed on.
    Confirm,
    /// Random inputs a check runs.
    Trials,
    /// Calls of each input that look for variation.
    Runs,
    /// The seed of random inputs.
    Seed,
    /// A row of a batch.
    Row,
    /// An output column of a product.
    Column,
    /// A list of sizes.
    Sizes,
    /// Fresh processes a black box is asked in.
    Processes,
    /// Seconds the search for a varying black box's skeleton may take.
    SkeletonTime,
}

impl Param {
    /// The setting's plain name: `the accumulator`.
    pub fn name(self) -> &'static str {
        match self {
            Param::N => "n",
            Param::Shape => "the shape",
            Param::Algorithm => "the algorithm",
            Param::Dtype => "the input format",
            Param::Accumulator => "the accumulator",
            Param::Batch => "the batch",
            Param::Ranks => "the number of MPI ranks",
            Param::Threads => "the thread count",
            Param::OutputFormat => "the output format",
            Param::Confirm => "the replays",
            Param::Trials => "the trials",
            Param::Runs => "the runs",
            Param::Seed => "the seed",
            Param::Row => "the row",
            Param::Column => "the column",
            Param::Sizes => "the sizes",
            Param::Processes => "the processes",
            Param::SkeletonTime => "the seconds a skeleton may take",
        }
    }
}

/// What to do about an error, in terms of [`Param`]s. Its `Display`
/// words it with plain names; a front end words it with its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Remedy {
    /// Give a smaller value of the setting.
    Smaller(Param),
    /// Give the setting one of these values (a placeholder such as `P`
    /// where the user picks it).
    Give(Param, &'static [&'static str]),
    /// Give the setting this value or more.
    AtLeast(Param, usize),
    /// Give a wider format for one of these settings.
    Wider(&'static [Param]),
    /// Leave the setting out.
    Drop(Param),
    /// The setting applies only to these black boxes, not this one.
    AppliesTo(Param, &'static str),
    /// The remedy, or else what the text says.
    Or(Box<Remedy>, &'static str),
    /// Give a value within the bound.
    Within(bounds::Bound),
    /// Reveal the black box with calls repeated, which says whether its
    /// order varies from call to call.
    AskVaries,
}

impl fmt::Display for Remedy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Remedy::Smaller(s) => write!(f, "give a smaller {}", s.name()),
            Remedy::Give(s, values) => write!(f, "set {} to {}", s.name(), values.join(" or ")),
            Remedy::AtLeast(s, least) => write!(f, "set {} to {least} or more", s.name()),
            Remedy::Wider(settings) => {
                let names: Vec<&str> = settings
                    .iter()
                    .map(|s| s.name().trim_start_matches("the "))
                    .collect();
                write!(f, "use a wider {}", names.join(" or "))
            }
            Remedy::Drop(s) => write!(f, "leave out {}", s.name()),
            Remedy::AppliesTo(s, what) => write!(f, "{} applies to {what}", s.name()),
            Remedy::Or(remedy, other) => write!(f, "{remedy}, or {other}"),
            Remedy::Within(bound) => write!(f, "give {}", bound.range(bound.setting.name())),
            Remedy::AskVaries => f.write_str(
                "a reveal with its calls repeated (the runs) says whether the black box varies",
            ),
        }
    }
}

/// Whose fault an error is, which decides how a front end reports it (the
/// command line's exit status).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Bad usage or input, or a system that refused what fprev needs
    /// (a file, a thread, a process).
    Input,
    /// The black box broke an assumption of the method.
    BlackBox,
    /// The ranks of an MPI collective ended with different bits.
    Disagree,
}

impl Error {
    /// A file error: `action` (`read`, `write`) on `path` failed with `source`.
    pub fn file(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::File {
            action,
            path: path.into(),
            source,
        }
    }

    /// This error with what to do about it.
    pub fn advise(self, remedy: Remedy) -> Self {
        Error::Advised {
            error: Box::new(self),
            remedy,
        }
    }

    /// This error without what it carries besides (a remedy, a foreign
    /// error): what went wrong, to match on.
    pub fn plain(&self) -> &Error {
        match self {
            Error::Advised { error, .. }
            | Error::Raised { error, .. }
            | Error::InSpec { error, .. } => error.plain(),
            e => e,
        }
    }

    /// The foreign error (a Python exception) this error carries, if any.
    pub fn raised(self) -> Option<Box<dyn std::error::Error + Send + Sync>> {
        match self {
            Error::Raised { raised, .. } => Some(raised),
            Error::Advised { error, .. } | Error::InSpec { error, .. } => error.raised(),
            _ => None,
        }
    }

    /// Whether this error carries a foreign error (a Python exception)
    /// that a front end hands back.
    pub fn is_raised(&self) -> bool {
        match self {
            Error::Raised { .. } => true,
            Error::Advised { error, .. } | Error::InSpec { error, .. } => error.is_raised(),
            _ => false,
        }
    }

    /// The black box's fault, where this error is one: what went wrong,
    /// to branch on.
    pub fn fault(&self) -> Option<&Fault> {
        match self.plain() {
            Error::BlackBox(fault) => Some(fault),
            _ => None,
        }
    }

    /// Whether the black box is at fault (it broke an assumption, or its
    /// ranks disagree): a sweep, an explanation or a study records such a
    /// size or case and goes on.
    pub fn of_black_box(&self) -> bool {
        matches!(self.plain(), Error::BlackBox(_) | Error::Disagree(_))
    }

    /// Whose fault this error is.
    pub fn kind(&self) -> Kind {
        match self {
            Error::BlackBox(_) => Kind::BlackBox,
            Error::Disagree(_) => Kind::Disagree,
            Error::Input(_)
            | Error::Missing(_)
            | Error::Summands(_)
            | Error::Irreproducible(_)
            | Error::File { .. }
            | Error::Json { .. }
            | Error::System { .. } => Kind::Input,
            Error::Advised { error, .. }
            | Error::Raised { error, .. }
            | Error::InSpec { error, .. }
            | Error::Unprovable(error) => error.kind(),
        }
    }
}

impl From<crate::tree::TreeError> for Error {
    fn from(e: crate::tree::TreeError) -> Self {
        Error::Input(e.0)
    }
}

/// An error and every cause below it, on one line: `cannot read t.json: No
/// such file or directory (os error 2)`.
pub struct Report<'a>(pub &'a (dyn std::error::Error + 'static));

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&report_with(self.0, &|r| r.to_string()))
    }
}

/// `e` and every cause below it on one line, as [`Report`] writes it, with
/// each [`Remedy`] worded by `words`: a front end's names for settings.
pub fn report_with(
    e: &(dyn std::error::Error + 'static),
    words: &dyn Fn(&Remedy) -> String,
) -> String {
    let mut line = String::new();
    let mut cause = Some(e);
    while let Some(e) = cause {
        if !line.is_empty() {
            line.push_str(": ");
        }
        match e.downcast_ref::<Error>() {
            Some(Error::Advised { error, remedy }) => {
                let error: &Error = error;
                line.push_str(&report_with(error, words));
                line.push_str("; ");
                line.push_str(&words(remedy));
                break;
            }
            // The spec, then its error worded as a whole: its remedy too.
            Some(Error::InSpec { spec, error }) => {
                let error: &Error = error;
                line.push_str(spec);
                line.push_str(": ");
                line.push_str(&report_with(error, words));
                break;
            }
            _ => {}
        }
        line.push_str(&e.to_string());
        cause = e.source();
    }
    line
}

/// Shorthand for results in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `text` cut to a readable length, for echoing what a user wrote (a spec,
/// a formula) in a message: a long one is cut, its length said.
///
/// ```
/// use fprev::error::abbreviated;
///
/// assert_eq!(abbreviated("native:pairwise"), "native:pairwise");
/// assert!(abbreviated(&"x".repeat(20_000)).ends_with("… (20000 characters)"));
/// ```
pub fn abbreviated(text: &str) -> String {
    cut(text, 120)
}

/// The most characters of an error line a front end shows ([`one_line`]):
/// room for fprev's longest own explanation (what the black box did and
/// what to do, about 700), not for a black box's 20 KB message.
pub const LINE: usize = 1000;

/// An error's line as a front end shows it: at most [`LINE`] characters
/// (a long list, a child's output summarised, its length said), and the
/// program's prefix said once (`fprev: error: fprev: …` where a child's
/// own error line is quoted, said as `fprev: error: …`).
///
/// ```
/// use fprev::error::one_line;
///
/// assert_eq!(one_line("the job failed: fprev: error: n = 0"), "the job failed: n = 0");
/// assert!(one_line(&"7,".repeat(10_000)).len() < 1100);
/// ```
pub fn one_line(text: &str) -> String {
    let mut line = text.trim().to_string();
    for prefix in ["fprev: error: ", "fprev: "] {
        while let Some(rest) = line.strip_prefix(prefix) {
            line = rest.to_string();
        }
        line = line.replace(&format!(": {prefix}"), ": ");
    }
    cut(&line.replace('\n', " "), LINE)
}

/// `text` cut to at most `most` bytes (at a character), its length said.
fn cut(text: &str, most: usize) -> String {
    if text.len() <= most {
        return text.to_string();
    }
    let cut = (0..=most)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}… ({} characters)", &text[..cut], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_in_a_spec_keeps_its_kind_and_its_remedy_in_a_front_ends_words() {
        let e = Error::InSpec {
            spec: "blas:dot@mkl".into(),
            error: Box::new(
                Error::Input("n = 9 is too large".into()).advise(Remedy::Smaller(Param::N)),
            ),
        };
        assert_eq!(e.kind(), Kind::Input);
        assert!(matches!(e.plain(), Error::Input(_)));
        let flags = |r: &Remedy| match r {
            Remedy::Smaller(Param::N) => "give a smaller -n".to_string(),
            other => other.to_string(),
        };
        assert_eq!(
            report_with(&e, &flags),
            "blas:dot@mkl: n = 9 is too large; give a smaller -n"
        );
        let missing = Error::InSpec {
            spec: "blas:dot".into(),
            error: Box::new(Error::Missing(Missing::BlasFile {
                file: "libx.so".into(),
                why: "not found".into(),
            })),
        };
        assert!(matches!(missing.plain(), Error::Missing(_)));
        assert_eq!(
            Report(&missing).to_string(),
            "blas:dot: no CBLAS library found: libx.so (not found)"
        );
    }
}
