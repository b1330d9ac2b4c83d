//! Why `fprev emit` and `fprev.emit` write no code, in each front end's
//! words ([`FrontEnd`]).

use fprev::workflow::NotConfirmed;

use crate::front::FrontEnd;

/// No formula of the order language gives every tree of `spec`: emitted
/// code follows a formula.
///
/// ```
/// use fprev_present::{emit::no_formula, front::FrontEnd};
///
/// assert!(no_formula("numpy:sum", FrontEnd::Cli).contains("(fprev explain numpy:sum shows"));
/// assert!(no_formula("numpy:sum", FrontEnd::Python).contains("(fprev.explain shows"));
/// ```
pub fn no_formula(spec: &str, front: FrontEnd) -> String {
    let explain = front.explain(spec);
    let head = format!(
        "no formula of the order language gives every tree of {spec} ({explain} shows the \
         closest)"
    );
    match front {
        FrontEnd::Cli => format!("{head}; emitted code follows a formula, so none is written"),
        FrontEnd::Python => format!("{head}: emitted code follows a formula"),
    }
}

/// Why the formula's tree, or its arithmetic, is not confirmed at a size,
/// in a clause.
pub fn not_confirmed_why(why: &NotConfirmed) -> String {
    match why {
        NotConfirmed::ReplayDiffers => {
            "its replay, with the arithmetic found, differs from the black box".into()
        }
        NotConfirmed::TreeIsNot(formula) => {
            format!("the black box's tree there is not native:{formula}'s")
        }
        NotConfirmed::Unproven(formula, why) => {
            format!("native:{formula}'s tree could not be proven there ({why})")
        }
    }
}

/// At `n`, code following the formula would not give `spec`'s bits: why,
/// and that none is written.
pub fn not_confirmed(n: usize, why: &NotConfirmed, spec: &str, front: FrontEnd) -> String {
    let why = not_confirmed_why(why);
    match front {
        FrontEnd::Cli => {
            format!("at n = {n}, {why}: the code would not give {spec}'s bits, so none is written")
        }
        FrontEnd::Python => format!("at n = {n}, {why}: no code is written"),
    }
}

/// No formula is known to give the tree in `file` (of `n` summands):
/// emitted code follows a formula.
pub fn file_no_formula(file: &str, n: usize, front: FrontEnd) -> String {
    let formula = front.formula();
    format!(
        "no formula is known to give the tree in {file} (n = {n}): emitted code follows a \
         formula; give one with {formula}, or emit from the spec (fprev emit SPEC explains it \
         first)"
    )
}
