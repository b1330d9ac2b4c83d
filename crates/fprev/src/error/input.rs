//! Input errors as data, where code decides by what went wrong or a front
//! end may word it its own way: what this machine lacks ([`Missing`]),
//! counts of summands that disagree ([`Summands`]), a black box no code
//! can reproduce ([`Irreproducible`]). What a user wrote that does not
//! parse stays [`Error::Input`](super::Error::Input)'s text.
//!
//! ```
//! use fprev::error::{Error, Summands};
//!
//! let e = Error::Summands(Summands { predicted: false, tree: 8, black_box: 9 });
//! assert_eq!(e.to_string(), "the tree has 8 summands but the black box takes 9");
//! ```

use std::fmt;

/// What this machine lacks that a black box needs, and how to get it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// No CBLAS library under any name searched.
    Blas {
        /// The names searched.
        tried: Vec<&'static str>,
        /// What provides one.
        install: &'static str,
    },
    /// A BLAS fprev knows is not installed.
    KnownBlas {
        /// The library.
        about: &'static str,
        /// What provides it.
        install: &'static str,
    },
    /// The loader found no library file of the name given.
    BlasFile {
        /// The name.
        file: String,
        /// Why, as the loader says.
        why: String,
    },
    /// A black box imports a Python package that is not installed.
    Package {
        /// The black box's spec.
        spec: String,
        /// The package it imports.
        package: String,
        /// The name pip installs it by.
        pip: String,
    },
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NOT_FOUND: &str = "no CBLAS library found";
        match self {
            Missing::Blas { tried, install } => write!(
                f,
                "{NOT_FOUND} on this system (tried {}): install one, e.g. {install}, or name a \
                 library file: blas:OP@/PATH/TO/libcblas.so",
                tried.join(", ")
            ),
            Missing::KnownBlas { about, install } => {
                write!(f, "{NOT_FOUND}: {about} is not installed: {install}")
            }
            Missing::BlasFile { file, why } => write!(f, "{NOT_FOUND}: {file} ({why})"),
            Missing::Package { spec, package, pip } => write!(
                f,
                "{spec} needs the Python package '{package}', which is not installed for this \
                 interpreter: python3 -m pip install {pip}"
            ),
        }
    }
}

/// A tree whose count of summands is not the black box's: no query can
/// place its leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summands {
    /// Whether the tree is a prediction (from a formula), not one revealed
    /// or read.
    pub predicted: bool,
    /// The tree's summands.
    pub tree: usize,
    /// The black box's.
    pub black_box: usize,
}

impl fmt::Display for Summands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tree = match self.predicted {
            true => "predicted tree",
            false => "tree",
        };
        write!(
            f,
            "the {tree} has {} summands but the black box takes {}",
            self.tree, self.black_box
        )
    }
}

/// A black box whose bits no emitted code reproduces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Irreproducible {
    /// Any order gives its bits: there is no order to write.
    OrderIndependent {
        /// The black box.
        label: String,
        /// The size that showed it.
        n: usize,
    },
    /// Its order varies from call to call.
    Varies {
        /// The black box.
        label: String,
        /// The size that showed it, where one size did.
        n: Option<usize>,
    },
}

impl fmt::Display for Irreproducible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Irreproducible::OrderIndependent { label, n } => {
                write!(
                    f,
                    "{label} is order-independent at n = {n}: any order gives its bits"
                )
            }
            Irreproducible::Varies { label, n } => {
                write!(f, "{label} varies from call to call")?;
                if let Some(n) = n {
                    write!(f, " at n = {n}")?;
                }
                f.write_str(": no code reproduces its bits")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_varying_black_box_names_its_size_where_one_showed_it() {
        let at = |n| {
            Irreproducible::Varies {
                label: "torch:sum".into(),
                n,
            }
            .to_string()
        };
        assert!(at(Some(64)).contains(" at n = 64: "), "{}", at(Some(64)));
        assert!(!at(None).contains("n ="), "{}", at(None));
    }

    #[test]
    fn missing_blas_lists_what_was_tried() {
        let m = Missing::Blas {
            tried: vec!["openblas", "blis"],
            install: "apt install libopenblas0",
        };
        let line = m.to_string();
        assert!(line.contains("(tried openblas, blis)"), "{line}");
        assert!(line.contains("e.g. apt install libopenblas0,"), "{line}");
    }

    #[test]
    fn a_prediction_says_it_is_one() {
        let s = |predicted| {
            Summands {
                predicted,
                tree: 3,
                black_box: 4,
            }
            .to_string()
        };
        assert!(s(true).starts_with("the predicted tree has 3 summands"));
        assert!(s(false).starts_with("the tree has 3 summands"));
    }
}
