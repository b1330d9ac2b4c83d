//! Running a parsed command: [`run`] dispatches each subcommand to its file
//! under `commands/` (`render` and `probes` are a few lines, kept here), and
//! the helpers the commands that call a black box share.

mod cache;
mod check;
mod compare;
mod completions;
mod diff;
mod emit;
mod explain;
mod invariance;
mod man;
mod reveal;
mod survey;
mod sweep;
mod version;

use fprev::Spec;
use fprev::document::TreeDocument;
use fprev::error::Result;
use fprev::probe::{self, Offset, ProbeOptions};
use fprev::reveal::OrderIndependent;
use fprev::variation::Variation;

use crate::args::{Command, GuardArgs, ProbesArgs};
use crate::{guard, mpi_job, write};

pub(crate) use version::print_found;

/// Runs `command` and returns the process exit status; an error's status
/// is the caller's to map.
pub(crate) fn run(command: Command) -> Result<i32> {
    // With --ranks outside an MPI job, fprev reruns itself under the MPI
    // launcher and reports that job's status.
    if let Some(mpi) = command.mpi()
        && let Some(code) = mpi_job::run(mpi)?
    {
        return Ok(code);
    }
    match command {
        Command::Reveal(a) => reveal::run(a),
        Command::Render(a) => {
            let doc = TreeDocument::read(&a.tree)?;
            // A drawing is of nodes: a file's formula may give more than fit.
            doc.buildable().map_err(fprev::Error::Input)?;
            a.output.emit(&doc)?;
            Ok(0)
        }
        Command::Diff(a) => diff::run(a),
        Command::Check(a) => check::run(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Explain(a) => explain::run(a),
        Command::Emit(a) => emit::run(a),
        Command::Survey(a) => survey::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Invariance(a) => invariance::run(a),
        Command::Cache(a) => cache::run(a),
        Command::Completions(a) => completions::run(a),
        Command::Man(a) => man::run(a),
        Command::Answers(a) => reveal::answers(a),
        Command::Probes(ProbesArgs {
            family: Some(prefix),
        }) => {
            let rows: Vec<_> = fprev::spec::FAMILIES
                .iter()
                .filter(|f| f.prefix == prefix)
                .collect();
            if rows.is_empty() {
                let mut known: Vec<&str> = fprev::spec::FAMILIES.iter().map(|f| f.prefix).collect();
                known.dedup();
                return Err(fprev::Error::Input(format!(
                    "no probe family '{prefix}': the families are {}",
                    known.join(", ")
                )));
            }
            for family in rows {
                match family.members()? {
                    Some(members) => {
                        for m in members {
                            write::println(format_args!("{m}"))?;
                        }
                    }
                    None => write::println(format_args!("{}", family.pattern))?,
                }
            }
            Ok(0)
        }
        Command::Probes(ProbesArgs { family: None }) => {
            for family in fprev::spec::FAMILIES {
                let status = match family.available() {
                    Ok(()) => "available".to_string(),
                    Err(why) => format!("unavailable: {why}"),
                };
                // Which MPI a build links decides its launcher and algorithms.
                #[cfg(feature = "mpi")]
                let status = if family.prefix == "mpi" {
                    format!(
                        "{status} (links {}: --mpi {})",
                        fprev::mpi::Implementation::version(),
                        fprev::mpi::Implementation::linked().name()
                    )
                } else {
                    status
                };
                write::println(format_args!(
                    "{:<32} {:<50} {status}",
                    family.pattern, family.about
                ))?;
            }
            Ok(0)
        }
    }
}

/// Which alignment of its input array what is found of `spec` (of
/// `format` values) holds for, where the black box is handed a NumPy array
/// (a library may sum an unaligned one in another order): at `offset`, or
/// where NumPy's allocation puts it; `None` for the other black boxes.
fn alignment(spec: &Spec, offset: Option<Offset>, format: fprev::Format) -> Option<String> {
    spec.takes_offset()
        .then(|| fprev_present::alignment::note(spec.as_str(), offset, format))
}

/// Opens `spec`, the opening and its calls guarded (crash line, --timeout).
fn open_guarded(spec: &Spec, opts: &ProbeOptions) -> Result<Box<dyn probe::Probe>> {
    Ok(Box::new(guard::open(spec.as_str(), || spec.open(opts))?))
}

/// Says on stdout that `spec` is order-independent, and why: exit 4, no
/// tree.
fn order_independent(spec: &Spec, why: &OrderIndependent) -> Result<i32> {
    write::println(format_args!(
        "order-independent: {spec}: {}",
        fprev_present::note::order_independent(why)
    ))?;
    Ok(4)
}

/// Says on stdout that `spec` answers one input differently on different
/// calls, and what repeating inputs showed: exit 6.
fn varies(spec: &Spec, v: &Variation) -> Result<i32> {
    write::println(format_args!("{}", varies_line(spec, v)))?;
    Ok(6)
}

/// The line [`varies`] says.
fn varies_line(spec: &Spec, v: &Variation) -> String {
    format!(
        "varies: {spec}: its answer to the same input changes from call to call (another \
         order each time), so no one tree describes it: {}",
        fprev_present::note::variation(v)
    )
}

impl GuardArgs {
    /// Starts the watchdog when a timeout is given.
    fn start(&self) {
        if let Some(limit) = self.timeout {
            guard::set_timeout(std::time::Duration::from_secs_f64(limit));
        }
    }
}
