//! The error type, the [`Kind`] of fault each error is, and the exit status
//! each kind maps to (docs/DESIGN.md, Exit codes).
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
//! assert_eq!(e.exit_code(), 2);
//! assert!(std::error::Error::source(&e).is_some());
//! let line = Report(&e).to_string();
//! assert!(line.starts_with("cannot read no/such/tree.json: "), "{line}");
//! ```

use std::fmt;
use std::path::PathBuf;

/// Everything that can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad usage or bad input: a malformed spec, file or option, an `n` the
    /// format cannot count to, a missing library.
    #[error("{0}")]
    Input(String),
    /// The black box broke an assumption of the method: NaN, a fraction, an
    /// inconsistent answer.
    #[error("{0}")]
    BlackBox(String),
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
}

/// Whose fault an error is, which decides the exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Bad usage or input, or a system that refused what fprev needs
    /// (a file, a thread, a process). Exit status 2.
    Input,
    /// The black box broke an assumption of the method. Exit status 3.
    BlackBox,
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

    /// Whose fault this error is.
    pub fn kind(&self) -> Kind {
        match self {
            Error::BlackBox(_) => Kind::BlackBox,
            Error::Input(_) | Error::File { .. } | Error::Json { .. } | Error::System { .. } => {
                Kind::Input
            }
        }
    }

    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self.kind() {
            Kind::Input => 2,
            Kind::BlackBox => 3,
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
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(e) = cause {
            write!(f, ": {e}")?;
            cause = e.source();
        }
        Ok(())
    }
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
    const MOST: usize = 120;
    if text.len() <= MOST {
        return text.to_string();
    }
    let cut = (0..=MOST)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}… ({} characters)", &text[..cut], text.len())
}
