//! How a black box broke an assumption of the method ([`Fault`]), as data:
//! the engine branches on the kind of fault, and its `Display` words it.
//!
//! ```
//! use fprev::error::{Error, Fault};
//!
//! let e = Error::BlackBox(Fault::FusedNode { terms: 4 });
//! assert!(e.to_string().starts_with("the answers describe a fused node of 4 terms"));
//! ```

use std::fmt;
use std::path::PathBuf;
use std::process::ExitStatus;

use crate::arith::{Arithmetic, NodeArithmetic, NodeKey};
use crate::format::Format;

/// A broken assumption of the method: what the black box answered that no
/// summation tree of the kind it declares gives.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// It answered NaN for the input masking summands `i` and `j`.
    Nan {
        /// The summands the input masks.
        i: usize,
        /// The other masked summand.
        j: usize,
        /// The summands of the input.
        n: usize,
    },
    /// Its answer `y` is not a whole number of units `u` (or negative, or
    /// infinite): the masks did not cancel exactly.
    Fraction {
        /// The answer.
        y: f64,
        /// The summands the input masks.
        i: usize,
        /// The other masked summand.
        j: usize,
        /// The summands of the input.
        n: usize,
        /// The unit.
        u: f64,
        /// The accumulator it declares.
        accumulator: Format,
    },
    /// It answered more units than the input left unmasked.
    MoreUnits {
        /// The units it answered.
        units: usize,
        /// The summands the input masks.
        i: usize,
        /// The other masked summand.
        j: usize,
        /// The summands of the input.
        n: usize,
        /// The units the input holds.
        unmasked: usize,
    },
    /// A packed answer `y` reads as more units than the input masking
    /// `pivot` and `partner` left unmasked.
    MoreThanUnmasked {
        /// The answer.
        y: f64,
        /// The summand a subproblem grows from.
        pivot: usize,
        /// The summand masked with it.
        partner: usize,
        /// The units the input holds.
        unmasked: usize,
    },
    /// Answers that contradict each other.
    Inconsistent(Inconsistency),
    /// The basic algorithm's answer for summands `i` and `j` is not the
    /// size of the subtree where they first meet.
    Basic {
        /// One summand.
        i: usize,
        /// The other.
        j: usize,
        /// The answer for the pair.
        l: usize,
        /// The leaves of the subtree where they first meet.
        met: usize,
    },
    /// Every masked pair with `pivot` cancelled as if added first.
    PairsFirst {
        /// The pairs asked.
        pairs: usize,
        /// The summand each pair holds.
        pivot: usize,
    },
    /// The answers describe a fused node, but the black box declares IEEE
    /// additions only.
    FusedNode {
        /// The node's terms.
        terms: usize,
    },
    /// No binary tree adding in `accumulator` gave its bits on random
    /// inputs (the naive algorithm).
    NoBinaryTree {
        /// The accumulator it declares.
        accumulator: Format,
    },
    /// More than one binary tree gave its bits on every random input (the
    /// naive algorithm).
    ManyTrees {
        /// The trees left.
        trees: usize,
        /// The random inputs asked.
        trials: usize,
    },
    /// Masked answers past the sizes its masks reach look like additions
    /// that round toward zero: `k` spread summands reveal such a sum.
    TowardZeroPastReach {
        /// The summands.
        n: usize,
        /// The spread summands that reveal a tree.
        k: usize,
        /// The input format.
        format: Format,
        /// The accumulator.
        accumulator: Format,
        /// The random inputs the truncating tree gave the bits of.
        trials: usize,
        /// The most summands such masks fit.
        reach: usize,
    },
    /// One random input, asked again as the reveal went on, gave other bits
    /// than before: the black box's answer to an input changes from call to
    /// call.
    Unrepeatable {
        /// The calls the reveal had made when the answer changed.
        calls: u64,
    },
    /// Masked inputs meet as fused nodes, yet the black box errs far less
    /// on swamped summands than those nodes: it sorts by magnitude.
    ValueOrder {
        /// The widest fused node.
        widest: usize,
        /// Its error on swamped summands.
        error: f64,
        /// The fused nodes' error on them.
        fused_error: f64,
    },
    /// Its nodes answered as rounded additions (`model`), but no replay of
    /// that model gives its bits.
    NoModel {
        /// The model its nodes answered as.
        model: Arithmetic,
    },
    /// It adds in the revealed order, more accurately than rounded
    /// additions: a compensated sum.
    MoreAccurate {
        /// Its error on swamped summands.
        error: f64,
        /// The error of plain additions in its order.
        plain_error: f64,
        /// Those additions.
        plain: NodeArithmetic,
    },
    /// A node keeps more bits of a sum than any format: a compensated or
    /// exact sum.
    KeepsMore {
        /// The node.
        node: NodeKey,
        /// The widest format's significant bits.
        bits: u32,
    },
    /// A node's result depends on more than its two operands.
    Operands {
        /// The node.
        node: NodeKey,
        /// Its answer.
        got: f64,
        /// What a rounded addition keeps, or nothing.
        d: f64,
        /// The large operand `S`.
        scale: f64,
    },
    /// Its nodes add as `model`, but no rounding of its products gives its
    /// dot products.
    ProductsUnrounded {
        /// The model of its nodes.
        model: Arithmetic,
    },
    /// It keeps a number of significant bits of its inputs that is no
    /// format.
    InputBits {
        /// The bits kept.
        bits: u32,
        /// The input format.
        format: Format,
    },
    /// The product of `x{i}` keeps a number of significant bits that is no
    /// format.
    ProductBits {
        /// The operand.
        i: usize,
        /// The bits kept.
        bits: u32,
    },
    /// A fault with what else may cause it: a black box closer to the exact
    /// sum than additions, rows of a batch in different orders.
    WithCauses {
        /// The fault.
        fault: Box<Fault>,
        /// How much closer to the exact sum than additions it is, where
        /// it is.
        closer: Option<Closer>,
        /// Whether it sums a batch of rows a call.
        batched: bool,
    },
    /// A Python black box returned something other than a number.
    NotANumber {
        /// The black box.
        spec: String,
        /// What it returned.
        returned: Returned,
    },
    /// A Python black box's result array could not be read.
    Unreadable {
        /// The black box.
        spec: String,
        /// Why, as NumPy says.
        why: String,
    },
    /// The black box raised an exception while summing.
    Raised {
        /// The exception on one line: the black box, its type, message and
        /// place.
        line: String,
    },
    /// No size of 3 summands or more was revealed, so an explanation has
    /// nothing to explain.
    NothingToExplain {
        /// The black box.
        label: String,
        /// Each size asked, and why it was not revealed.
        skipped: Vec<(usize, String)>,
    },
    /// No formula regenerates the trees revealed, so none predicts `n`.
    Unpredicted {
        /// The black box.
        label: String,
        /// The sizes revealed, as runs (`3-8, 16`).
        revealed: String,
        /// The closest formula and the size where it fails.
        closest: Option<(String, usize)>,
        /// The size asked.
        n: usize,
    },
    /// A process fprev started to ask the black box (a fresh process, a
    /// study) ended with an error.
    Process {
        /// The process: `a fresh process asked S's answers`.
        what: String,
        /// Its exit status, `None` where a signal ended it.
        status: Option<i32>,
    },
    /// The process running the command ended before it finished.
    Ended {
        /// The black box open, if one was.
        spec: Option<String>,
        /// Its exit status.
        status: i32,
        /// When it ended.
        during: Phase,
    },
    /// The MPI job ran past its limit and was stopped.
    MpiTimeout {
        /// The limit.
        seconds: u64,
    },
    /// The MPI job finished without rank 0's output.
    MpiNoOutput {
        /// Where rank 0's output was to be.
        output: PathBuf,
        /// The launcher.
        launcher: &'static str,
    },
    /// The MPI job failed before rank 0 finished.
    MpiFailed {
        /// The launcher.
        launcher: &'static str,
        /// How it ended.
        exit: ExitStatus,
        /// The launcher's first line of its own, if any.
        said: Option<String>,
    },
}

/// Answers that contradict each other, and where.
#[derive(Clone, Debug, PartialEq)]
pub enum Inconsistency {
    /// The whole input does not form one tree.
    NotOneTree,
    /// With the context leaf, `summand` answered `l` with `partner`, where
    /// `size` without it.
    Context {
        /// The summand.
        summand: usize,
        /// Its answer.
        l: usize,
        /// The summand masked with it.
        partner: usize,
        /// Its subproblem's leaves without the context leaf.
        size: usize,
    },
    /// A group at `l` has other than the summands a subproblem proved
    /// complete.
    ProvedComplete {
        /// The summand.
        summand: usize,
        /// The group's summands.
        group: usize,
        /// Its answer.
        l: usize,
        /// The summands the subproblem proved.
        proved: usize,
    },
    /// A subproblem never had all its answers.
    Unanswered {
        /// Its summand.
        summand: usize,
    },
    /// A group of `group` summands at `l` does not join the subtree built
    /// so far.
    Group {
        /// The summand.
        summand: usize,
        /// The group's summands.
        group: usize,
        /// Its answer.
        l: usize,
        /// The leaves of the subtree built so far.
        built: usize,
    },
    /// The answers place other than all of a subproblem's summands.
    Placed {
        /// The subproblem's summand.
        summand: usize,
        /// The summands placed.
        placed: usize,
        /// The subproblem's summands.
        size: usize,
    },
    /// The summands whose answers were inexact do not form one subtree.
    Inexact {
        /// Those summands.
        summands: usize,
    },
}

/// How much closer to the exact sum than additions a black box is, on a 1
/// and many summands too small to change it alone.
#[derive(Clone, Debug, PartialEq)]
pub struct Closer {
    /// Its error.
    pub error: f64,
    /// The error of additions left to right.
    pub plain: f64,
    /// The format of those additions.
    pub accumulator: Format,
    /// Whether it multiplies operands fprev chooses (a matrix
    /// instruction), whose exact groups of products answer so too.
    pub exact_groups: bool,
}

/// What a Python black box returned instead of a number.
#[derive(Clone, Debug, PartialEq)]
pub enum Returned {
    /// An array of this shape (its Python text).
    Array(String),
    /// An object, as its `repr` begins.
    Object(String),
}

/// Where the process running a command was when the black box ended it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// While the black box was being opened.
    Opening,
    /// During a call.
    Calling,
    /// Between calls.
    Between,
}

impl Fault {
    /// `fault` with what else may cause it, where anything may: itself
    /// otherwise.
    pub fn with_causes(fault: Fault, closer: Option<Closer>, batched: bool) -> Fault {
        if closer.is_none() && !batched {
            return fault;
        }
        Fault::WithCauses {
            fault: Box::new(fault),
            closer,
            batched,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let masking = |i, j, n| format!("the input masking summands {i} and {j} (n = {n})");
        match self {
            Fault::Nan { i, j, n } => write!(
                f,
                "the black box returned NaN for {}: its order may depend on the values, or it \
                 does not sum its inputs",
                masking(i, j, n)
            ),
            Fault::Fraction {
                y,
                i,
                j,
                n,
                u,
                accumulator,
            } => write!(
                f,
                "the black box returned {y} for {}, which is not a whole number of units \
                 (u = {u}): the masks did not cancel exactly, so its order depends on the values \
                 or its accumulator is narrower than {accumulator}",
                masking(i, j, n)
            ),
            Fault::MoreUnits {
                units,
                i,
                j,
                n,
                unmasked,
            } => write!(
                f,
                "the black box returned {units} units for {}, but only {unmasked} were \
                 unmasked: it does not compute a sum of its inputs",
                masking(i, j, n)
            ),
            Fault::MoreThanUnmasked {
                y,
                pivot,
                partner,
                unmasked,
            } => write!(
                f,
                "the black box returned {y} for the input masking summands {pivot} and \
                 {partner}, more than the {unmasked} units unmasked: it does not compute a sum \
                 of its inputs"
            ),
            Fault::Inconsistent(what) => write!(
                f,
                "inconsistent answers: {what}. The black box's order may depend on the values or \
                 vary between calls, or it accumulates in a narrower format than declared"
            ),
            Fault::Basic { i, j, l, met } => write!(
                f,
                "inconsistent answers for basic: l_{{{i},{j}}} = {l}, but summands {i} and {j} \
                 first meet in a subtree of {met} leaves; the tree may have fused nodes \
                 (which the fprev algorithm reveals) or the order depends on the values"
            ),
            Fault::PairsFirst { pairs, pivot } => write!(
                f,
                "every pair of masked summands cancelled as if added first (l = 2 for all \
                 {pairs} pairs with summand {pivot}), which no summation tree does"
            ),
            Fault::FusedNode { terms } => write!(
                f,
                "the answers describe a fused node of {terms} terms, but the black box declares \
                 IEEE additions only"
            ),
            Fault::Unrepeatable { calls } => write!(
                f,
                "the same random input gave other bits when asked again after {calls} calls: \
                 the black box's answer to an input changes from call to call"
            ),
            Fault::NoBinaryTree { accumulator } => write!(
                f,
                "no binary tree adding in {accumulator} reproduces the black box on random \
                 inputs: it may have fused nodes (which the fprev algorithm reveals) or add in \
                 another format than declared"
            ),
            Fault::ManyTrees { trees, trials } => write!(
                f,
                "{trees} binary trees still match the black box after {trials} random inputs"
            ),
            Fault::TowardZeroPastReach {
                n,
                k,
                format,
                accumulator,
                trials,
                reach,
            } => write!(
                f,
                "the black box appears to sum with additions that round toward zero, past the \
                 summands fprev can prove such a sum's order for: its masked answers at n = {n} \
                 fit no tree, which truncation alone can cause (a unit meeting the negative mask \
                 is not absorbed); {k} of its summands (spread over the {n}, the others 0) \
                 reveal a tree under masks that hold under truncation, whose additions rounding \
                 toward zero in {accumulator} give the first masks' answers and {trials} random \
                 inputs' bits too; such masks fit {format} summands accumulated in \
                 {accumulator} only up to n = {reach}"
            ),
            Fault::ValueOrder {
                widest,
                error,
                fused_error,
            } => write!(
                f,
                "the black box's order depends on the values: masked inputs, whose two masks are \
                 its largest summands, meet as fused nodes of up to {widest} terms, but given a 1 \
                 and many summands too small to change it alone it errs by {error:.2e} in all, \
                 where those fused nodes err by {fused_error:.2e}: it adds the small summands \
                 among themselves before the large ones (as a sum that sorts its inputs by \
                 magnitude does), so no one summation tree describes it"
            ),
            Fault::NoModel { model } => write!(
                f,
                "no arithmetic model reproduces the black box's bits: its nodes answered as \
                 rounded additions ({model}), but replays of that model with every format and \
                 rounding at the root differ from it"
            ),
            Fault::MoreAccurate {
                error,
                plain_error,
                plain,
            } => write!(
                f,
                "the black box adds in the revealed order, but no rounded additions reproduce \
                 it: given a 1 and many summands too small to change it alone, it errs by \
                 {error:.2e} in all, where additions in {plain} in its order err by \
                 {plain_error:.2e}: a compensated (Kahan, Neumaier) or otherwise more accurate \
                 sum"
            ),
            Fault::KeepsMore { node, bits } => write!(
                f,
                "{node} keeps more than {bits} bits of a sum: not a rounded addition but a \
                 compensated (Kahan, Neumaier) or exact one, which no summation tree of \
                 additions reproduces"
            ),
            Fault::Operands {
                node,
                got,
                d,
                scale,
            } => write!(
                f,
                "{node} answered {got:e} where a rounded addition keeps {d:e} or nothing (S = \
                 {scale:e} added to {d:e}, then -S): its result depends on more than its two \
                 operands"
            ),
            Fault::ProductsUnrounded { model } => write!(
                f,
                "the black box's nodes add as {model}, but no rounding of its products \
                 reproduces its dot products: its products answered as rounded in one format \
                 each, yet a replay on random x and y differs"
            ),
            Fault::InputBits { bits, format } => write!(
                f,
                "the black box keeps {bits} significant bits of its {format} inputs, which is no \
                 format fprev knows"
            ),
            Fault::ProductBits { i, bits } => write!(
                f,
                "the product of x{i} keeps {bits} significant bits, which is no format fprev \
                 knows"
            ),
            Fault::WithCauses {
                fault,
                closer,
                batched,
            } => {
                write!(f, "{fault}")?;
                if let Some(closer) = closer {
                    write!(f, "; {closer}")?;
                }
                if *batched {
                    f.write_str(
                        "; rows of a batched black box may follow different orders that agreed \
                         on the row check's inputs: a batch of 1 reveals row 0's order one query \
                         per call",
                    )?;
                }
                Ok(())
            }
            Fault::NotANumber { spec, returned } => match returned {
                Returned::Array(shape) => write!(
                    f,
                    "{spec}: the black box returned an array of shape {shape}, not a number"
                ),
                Returned::Object(shown) => {
                    write!(f, "{spec}: the black box returned {shown}, not a number")
                }
            },
            Fault::Unreadable { spec, why } => write!(f, "{spec}: unreadable result: {why}"),
            Fault::Raised { line } => write!(f, "the black box raised an exception: {line}"),
            Fault::NothingToExplain { label, skipped } => {
                let sizes: Vec<String> = skipped
                    .iter()
                    .map(|(n, why)| format!("{n} ({why})"))
                    .collect();
                write!(
                    f,
                    "{label}: no size of 3 summands or more could be revealed, so there is \
                     nothing to explain: n = {}",
                    sizes.join(", ")
                )
            }
            Fault::Unpredicted {
                label,
                revealed,
                closest,
                n,
            } => {
                let closest = closest
                    .as_ref()
                    .map(|(formula, at)| {
                        format!(" (the closest, native:{formula}, fails at n = {at})")
                    })
                    .unwrap_or_default();
                write!(
                    f,
                    "{label}: no formula of the order language regenerates the trees revealed at \
                     n = {revealed}{closest}, so nothing predicts n = {n}: reveal it in full"
                )
            }
            Fault::Process { what, status } => write!(
                f,
                "{what} ended with exit status {}: see its message above",
                status.map_or("none (a signal)".into(), |c| c.to_string())
            ),
            Fault::Ended {
                spec: Some(spec),
                status,
                during,
            } => write!(
                f,
                "{spec}: the black box ended the process (exit status {status}) {during}; fprev \
                 reports it as a broken assumption"
            ),
            Fault::Ended {
                spec: None, status, ..
            } => write!(
                f,
                "the process running the command ended (exit status {status}) before the \
                 command finished, with no black box open"
            ),
            Fault::MpiTimeout { seconds } => write!(
                f,
                "the MPI job ran longer than {seconds} s and was stopped, all its processes with \
                 it (--mpi-timeout sets the limit)"
            ),
            Fault::MpiNoOutput { output, launcher } => write!(
                f,
                "the MPI job finished, but rank 0's output is not in {} where {launcher} was to \
                 put it",
                output.display()
            ),
            Fault::MpiFailed {
                launcher,
                exit,
                said,
            } => {
                write!(
                    f,
                    "the MPI job failed before rank 0 finished ({launcher} {exit})"
                )?;
                match said {
                    Some(line) => write!(f, ": {line}"),
                    None => Ok(()),
                }
            }
        }
    }
}

impl fmt::Display for Inconsistency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Inconsistency::NotOneTree => f.write_str("the whole input does not form one tree"),
            Inconsistency::Context {
                summand,
                l,
                partner,
                size,
            } => write!(
                f,
                "summand {summand} answered l = {l} with {partner}, but {size} without the \
                 context leaf"
            ),
            Inconsistency::ProvedComplete {
                summand,
                group,
                l,
                proved,
            } => write!(
                f,
                "summand {summand} has {group} summands at l = {l}, after {proved} proved the \
                 group complete"
            ),
            Inconsistency::Unanswered { summand } => {
                write!(f, "summand {summand} never had all its answers")
            }
            Inconsistency::Group {
                summand,
                group,
                l,
                built,
            } => write!(
                f,
                "summand {summand} has {group} summands at l = {l}, but the subtree built so far \
                 holds {built} leaves, so l should be {}",
                built + group
            ),
            Inconsistency::Placed {
                summand,
                placed,
                size,
            } => write!(
                f,
                "the answers for summand {summand} place {placed} of its subproblem's {size} \
                 summands"
            ),
            Inconsistency::Inexact { summands } => write!(
                f,
                "the {summands} summands whose answers were inexact do not form one subtree"
            ),
        }
    }
}

impl fmt::Display for Closer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Closer {
            error,
            plain,
            accumulator,
            exact_groups,
        } = self;
        write!(
            f,
            "it is also closer to the exact sum than additions: given a 1 and many summands too \
             small to change it alone, it errs by {error:.2e} in all, where additions in \
             {accumulator} left to right err by {plain:.2e}: a compensated sum that keeps its \
             errors apart (Neumaier's) answers so, counting the units a mask swamps"
        )?;
        if *exact_groups {
            f.write_str(
                "; a matrix instruction that adds groups of products exactly and rounds once \
                 (AMD CDNA1's, in groups of 2 or 4) answers so too: masks cancel inside a group \
                 without swamping its units, and such exact groups are not modelled",
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Opening => "while it was being opened",
            Phase::Calling => "during a call, where it should have returned its sum",
            Phase::Between => "between its calls",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts that `fault` says each of `parts`, in this order.
    fn says(fault: &Fault, parts: &[&str]) {
        let text = fault.to_string();
        let mut rest = text.as_str();
        for part in parts {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => panic!("{text:?} does not say {part:?} where expected"),
            }
        }
    }

    #[test]
    fn masked_answers_name_the_input_and_what_it_held() {
        let (i, j, n) = (3, 7, 16);
        let input = format!("the input masking summands {i} and {j} (n = {n})");
        says(&Fault::Nan { i, j, n }, &["returned NaN for ", &input]);
        let (y, u, accumulator) = (2.5, 0.5, Format::F16);
        says(
            &Fault::Fraction {
                y,
                i,
                j,
                n,
                u,
                accumulator,
            },
            &[
                &format!("returned {y} for {input}"),
                &format!("(u = {u})"),
                &format!("narrower than {accumulator}"),
            ],
        );
        let (units, unmasked) = (9, 6);
        says(
            &Fault::MoreUnits {
                units,
                i,
                j,
                n,
                unmasked,
            },
            &[&format!(
                "returned {units} units for {input}, but only {unmasked} were"
            )],
        );
        says(
            &Fault::MoreThanUnmasked {
                y,
                pivot: i,
                partner: j,
                unmasked,
            },
            &[&format!(
                "returned {y} for the input masking summands {i} and {j}, more than the {unmasked} units"
            )],
        );
    }

    #[test]
    fn contradictions_say_where_within_inconsistent_answers() {
        let (summand, group, l, built) = (4, 2, 9, 5);
        says(
            &Fault::Inconsistent(Inconsistency::Group {
                summand,
                group,
                l,
                built,
            }),
            &[
                "inconsistent answers: ",
                &format!("summand {summand} has {group} summands at l = {l}"),
                &format!("holds {built} leaves, so l should be {}", built + group),
                ". The black box's order may depend",
            ],
        );
        let contradictions = [
            (
                Inconsistency::NotOneTree,
                "does not form one tree".to_string(),
            ),
            (
                Inconsistency::Context {
                    summand,
                    l,
                    partner: 1,
                    size: built,
                },
                format!("summand {summand} answered l = {l} with 1, but {built} without"),
            ),
            (
                Inconsistency::ProvedComplete {
                    summand,
                    group,
                    l,
                    proved: built,
                },
                format!("at l = {l}, after {built} proved the group complete"),
            ),
            (
                Inconsistency::Unanswered { summand },
                format!("summand {summand} never had all its answers"),
            ),
            (
                Inconsistency::Placed {
                    summand,
                    placed: built,
                    size: l,
                },
                format!("summand {summand} place {built} of its subproblem's {l} summands"),
            ),
            (
                Inconsistency::Inexact { summands: group },
                format!("the {group} summands whose answers were inexact"),
            ),
        ];
        for (what, said) in contradictions {
            says(
                &Fault::Inconsistent(what),
                &["inconsistent answers: ", &said],
            );
        }
        says(
            &Fault::Basic {
                i: 2,
                j: 5,
                l,
                met: built,
            },
            &[&format!(
                "l_{{2,5}} = {l}, but summands 2 and 5 first meet in a subtree of {built} leaves"
            )],
        );
    }

    #[test]
    fn trees_the_answers_fit_are_counted() {
        says(
            &Fault::PairsFirst {
                pairs: 11,
                pivot: 3,
            },
            &["all 11 pairs with summand 3"],
        );
        says(&Fault::FusedNode { terms: 5 }, &["a fused node of 5 terms"]);
        let accumulator = Format::F16;
        says(
            &Fault::NoBinaryTree { accumulator },
            &[&format!(
                "no binary tree adding in {accumulator} reproduces"
            )],
        );
        says(
            &Fault::ManyTrees {
                trees: 3,
                trials: 40,
            },
            &["3 binary trees still match the black box after 40 random inputs"],
        );
        let (format, n, k, reach) = (Format::F32, 4096, 12, 2048);
        says(
            &Fault::TowardZeroPastReach {
                n,
                k,
                format,
                accumulator,
                trials: 40,
                reach,
            },
            &[
                &format!("masked answers at n = {n} fit no tree"),
                &format!("{k} of its summands (spread over the {n}, the others 0)"),
                &format!("toward zero in {accumulator}"),
                "and 40 random inputs' bits",
                &format!(
                    "fit {format} summands accumulated in {accumulator} only up to n = {reach}"
                ),
            ],
        );
    }

    #[test]
    fn arithmetic_faults_carry_their_errors_and_models() {
        let (error, fused_error) = (1.5e-7, 3.25e-5);
        says(
            &Fault::ValueOrder {
                widest: 8,
                error,
                fused_error,
            },
            &[
                "fused nodes of up to 8 terms",
                &format!("errs by {error:.2e} in all"),
                &format!("err by {fused_error:.2e}"),
            ],
        );
        let plain = NodeArithmetic::ieee(Format::F32);
        says(
            &Fault::MoreAccurate {
                error,
                plain_error: fused_error,
                plain,
            },
            &[&format!(
                "errs by {error:.2e} in all, where additions in {plain} in its order err by {fused_error:.2e}"
            )],
        );
        let model = Arithmetic::uniform(plain);
        says(
            &Fault::NoModel {
                model: model.clone(),
            },
            &[&format!("rounded additions ({model})")],
        );
        says(
            &Fault::ProductsUnrounded {
                model: model.clone(),
            },
            &[&format!("nodes add as {model}, but")],
        );
        let node = NodeKey { first: 4, size: 2 };
        says(
            &Fault::KeepsMore { node, bits: 64 },
            &[&format!("{node} keeps more than 64 bits of a sum")],
        );
        let (got, d, scale) = (3.0, 1.5, 1024.0);
        says(
            &Fault::Operands {
                node,
                got,
                d,
                scale,
            },
            &[&format!(
                "{node} answered {got:e} where a rounded addition keeps {d:e} or nothing (S = {scale:e} added to {d:e}"
            )],
        );
        says(
            &Fault::InputBits {
                bits: 9,
                format: Format::F16,
            },
            &[&format!(
                "keeps 9 significant bits of its {} inputs",
                Format::F16
            )],
        );
        says(
            &Fault::ProductBits { i: 6, bits: 13 },
            &["the product of x6 keeps 13 significant bits"],
        );
    }

    #[test]
    fn causes_follow_the_fault_only_where_there_are_any() {
        let fault = Fault::FusedNode { terms: 3 };
        assert_eq!(Fault::with_causes(fault.clone(), None, false), fault);
        let closer = Closer {
            error: 2e-8,
            plain: 4e-6,
            accumulator: Format::F32,
            exact_groups: false,
        };
        let batched = Fault::with_causes(fault.clone(), None, true);
        says(
            &batched,
            &[&fault.to_string(), "; rows of a batched black box"],
        );
        assert!(!batched.to_string().contains("closer to the exact sum"));
        let both = Fault::with_causes(fault.clone(), Some(closer.clone()), true);
        says(
            &both,
            &[
                &fault.to_string(),
                "; it is also closer to the exact sum",
                &format!("errs by {:.2e}", closer.error),
                &format!(
                    "additions in {} left to right err by {:.2e}",
                    closer.accumulator, closer.plain
                ),
                "counting the units a mask swamps; rows of a batched",
            ],
        );
        assert!(!both.to_string().contains("matrix instruction"));
        let grouped = Closer {
            exact_groups: true,
            ..closer
        };
        let alone = Fault::with_causes(fault.clone(), Some(grouped), false);
        says(
            &alone,
            &["counting the units a mask swamps; a matrix instruction"],
        );
        assert!(alone.to_string().ends_with("not modelled"));
    }

    #[test]
    fn python_results_are_named_with_the_black_box() {
        let spec = "python:m.f".to_string();
        says(
            &Fault::NotANumber {
                spec: spec.clone(),
                returned: Returned::Array("(3,)".into()),
            },
            &[&format!(
                "{spec}: the black box returned an array of shape (3,), not a number"
            )],
        );
        says(
            &Fault::NotANumber {
                spec: spec.clone(),
                returned: Returned::Object("'x'".into()),
            },
            &[&format!("{spec}: the black box returned 'x', not a number")],
        );
        says(
            &Fault::Unreadable {
                spec: spec.clone(),
                why: "not contiguous".into(),
            },
            &[&format!("{spec}: unreadable result: not contiguous")],
        );
        let line = format!("{spec}: ValueError: no");
        says(
            &Fault::Raised { line: line.clone() },
            &["the black box raised an exception: ", &line],
        );
    }

    #[test]
    fn workflows_say_the_sizes_they_could_not_use() {
        says(
            &Fault::NothingToExplain {
                label: "numpy.sum".into(),
                skipped: vec![
                    (4, "varies from call to call".into()),
                    (5, "order-independent".into()),
                ],
            },
            &[
                "numpy.sum: no size",
                "n = 4 (varies from call to call), 5 (order-independent)",
            ],
        );
        let unpredicted = |closest| Fault::Unpredicted {
            label: "numpy.sum".into(),
            revealed: "3-8".into(),
            closest,
            n: 100,
        };
        says(
            &unpredicted(Some(("pairwise".into(), 7))),
            &[
                "revealed at n = 3-8 (the closest, native:pairwise, fails at n = 7), so nothing predicts n = 100",
            ],
        );
        says(
            &unpredicted(None),
            &["revealed at n = 3-8, so nothing predicts n = 100"],
        );
    }

    #[test]
    fn processes_that_end_say_how() {
        let what = "the study under x";
        says(
            &Fault::Process {
                what: what.into(),
                status: Some(3),
            },
            &[&format!("{what} ended with exit status 3: see")],
        );
        says(
            &Fault::Process {
                what: what.into(),
                status: None,
            },
            &["ended with exit status none (a signal)"],
        );
        let ended = |spec: Option<&str>, during| Fault::Ended {
            spec: spec.map(str::to_string),
            status: 9,
            during,
        };
        for during in [Phase::Opening, Phase::Calling, Phase::Between] {
            says(
                &ended(Some("dylib:x.so"), during),
                &[&format!(
                    "dylib:x.so: the black box ended the process (exit status 9) {during}; fprev"
                )],
            );
        }
        says(
            &ended(None, Phase::Between),
            &["(exit status 9) before the command finished"],
        );
        says(&Fault::MpiTimeout { seconds: 60 }, &["longer than 60 s"]);
        says(
            &Fault::MpiNoOutput {
                output: PathBuf::from("/tmp/out"),
                launcher: "mpirun",
            },
            &["not in /tmp/out where mpirun was to put it"],
        );
        use std::os::unix::process::ExitStatusExt;
        let exit = ExitStatus::from_raw(256);
        let failed = |said: Option<&str>| Fault::MpiFailed {
            launcher: "mpirun",
            exit,
            said: said.map(str::to_string),
        };
        let before = format!("before rank 0 finished (mpirun {exit})");
        assert!(failed(None).to_string().ends_with(&before));
        says(&failed(Some("no slots")), &[&before, ": no slots"]);
    }
}
