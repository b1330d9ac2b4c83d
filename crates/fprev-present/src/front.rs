//! The words of each front end: the command line's flags and commands,
//! Python's keyword arguments and functions. A refusal or hint worded in
//! `fprev-present` names what the user can do next in its front end's
//! words.

/// The front end a text is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrontEnd {
    /// The `fprev` command line: flags (`--dtype f64`), commands
    /// (`fprev explain SPEC`).
    Cli,
    /// The Python package: keyword arguments (`dtype="float64"`),
    /// functions (`fprev.explain`).
    Python,
}

impl FrontEnd {
    /// How to explain `spec`: `fprev explain SPEC`, `fprev.explain`.
    pub fn explain(self, spec: &str) -> String {
        match self {
            FrontEnd::Cli => format!("fprev explain {spec}"),
            FrontEnd::Python => "fprev.explain".into(),
        }
    }

    /// How to give a formula: `--formula`, `formula=`.
    pub fn formula(self) -> &'static str {
        match self {
            FrontEnd::Cli => "--formula",
            FrontEnd::Python => "formula=",
        }
    }
}

/// What to try when a black box of arbitrary code (a `dylib:` or
/// `python:` one) answered nonsense, naming only the settings not given
/// (`dtype_given`, `acc_given`): its values may not be of the format it
/// was given (a C function taking `double` fed floats), or it may add in
/// a wider format than its inputs (Python's built-in `sum` of float32
/// values adds Python floats). Empty where both are given; else it starts
/// with `; hint: `.
///
/// ```
/// use fprev_present::front::{FrontEnd, format_hint};
///
/// assert_eq!(format_hint(FrontEnd::Cli, true, true), "");
/// assert!(format_hint(FrontEnd::Cli, false, true).contains("give --dtype f64"));
/// assert!(format_hint(FrontEnd::Python, true, false).contains("accumulator=\"float64\""));
/// ```
pub fn format_hint(front: FrontEnd, dtype_given: bool, acc_given: bool) -> String {
    let (dtype, acc) = match front {
        FrontEnd::Cli => ("--dtype f64", "--acc f64"),
        FrontEnd::Python => ("dtype=\"float64\"", "accumulator=\"float64\""),
    };
    let mut hints = Vec::new();
    if !dtype_given {
        hints.push(format!(
            "if it takes double (float64) values, give {dtype} (the default is f32)"
        ));
    }
    if !acc_given {
        hints.push(format!(
            "if it adds in a wider format than its inputs (Python's built-in sum adds Python \
             floats, f64), declare it with {acc}"
        ));
    }
    if hints.is_empty() {
        String::new()
    } else {
        format!("; hint: {}", hints.join("; "))
    }
}
