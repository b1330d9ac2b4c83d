//! The error type, and the exit status each kind maps to (DESIGN.md).

/// Everything that can go wrong, split by whose fault it is.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad usage or bad input: a malformed spec, file or option, an `n` the
    /// format cannot count to, a missing library. Exit status 2.
    #[error("{0}")]
    Input(String),
    /// The black box broke an assumption of the method: NaN, a fraction, an
    /// inconsistent answer. Exit status 3.
    #[error("{0}")]
    BlackBox(String),
    /// Not a fault: the black box gives the same bits in every order (an
    /// exact or pre-rounded sum), so no summation tree describes it. Exit
    /// status 4.
    #[error("{0}")]
    OrderIndependent(String),
}

impl Error {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input(_) => 2,
            Error::BlackBox(_) => 3,
            Error::OrderIndependent(_) => 4,
        }
    }
}

impl From<crate::tree::TreeError> for Error {
    fn from(e: crate::tree::TreeError) -> Self {
        Error::Input(e.0)
    }
}

/// Shorthand for results in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
