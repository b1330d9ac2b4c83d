//! How the command line says an error: one line, each remedy in the flags
//! that carry it out (`give a smaller -n`), and the exit status of each
//! kind of error (docs/REFERENCE.md, Exit statuses).

use fprev::error::{Error, Kind, Param, Remedy, one_line, report_with};

/// Prints `e` with every cause below it (`cannot read t.json: No such file
/// or directory`) on one line, and returns the exit status its kind maps to.
pub(crate) fn report(e: &Error) -> i32 {
    eprintln!("fprev: error: {}", one_line(&line(e)));
    exit_code(e.kind())
}

/// Prints `e` as [`report`] does, `hint` after its remedy (`; hint: …`),
/// and returns the exit status its kind maps to.
pub(crate) fn report_hinted(e: &Error, hint: &str) -> i32 {
    eprintln!("fprev: error: {}", one_line(&(line(e) + hint)));
    exit_code(e.kind())
}

/// `e` and every cause below it on one line, remedies in flags.
pub(crate) fn line(e: &Error) -> String {
    report_with(e, &words)
}

/// Prints `e`, which refused a value given to `given` (the flag as the
/// user wrote it: `--columns` where the setting's own is `--column`), as
/// [`report`] does, a bound's remedy in that flag.
pub(crate) fn report_given(e: &Error, given: &str) -> i32 {
    let words = |r: &Remedy| match r {
        // `--n` is `-n`'s long form: the setting's own flag says it.
        Remedy::Within(bound)
            if given.trim_start_matches('-') != flag(bound.setting).trim_start_matches('-') =>
        {
            format!("give {}", bound.range(given))
        }
        other => words(other),
    };
    eprintln!("fprev: error: {}", one_line(&report_with(e, &words)));
    exit_code(e.kind())
}

/// The process exit status of an error of this kind.
pub(crate) fn exit_code(kind: Kind) -> i32 {
    match kind {
        Kind::Input => 2,
        Kind::BlackBox => 3,
        Kind::Disagree => 7,
    }
}

/// The kind of error an `fprev` process that ended with `code` reported,
/// where its code is an error's.
pub(crate) fn kind_of(code: i32) -> Option<Kind> {
    [Kind::Input, Kind::BlackBox, Kind::Disagree]
        .into_iter()
        .find(|&kind| exit_code(kind) == code)
}

/// The flag that gives a setting.
fn flag(setting: Param) -> &'static str {
    match setting {
        Param::N => "-n",
        Param::Shape => "--shape",
        Param::Algorithm => "--algo",
        Param::Dtype => "--dtype",
        Param::Accumulator => "--acc",
        Param::Batch => "--batch",
        Param::Ranks => "--ranks",
        Param::Threads => "--threads",
        Param::OutputFormat => "--format",
        Param::Confirm => "--confirm",
        Param::Trials => "--trials",
        Param::Runs => "--runs",
        Param::Seed => "--seed",
        Param::Row => "--row",
        Param::Column => "--column",
        Param::Sizes => "the sizes",
        Param::Processes => "--processes",
        Param::SkeletonTime => "--skeleton-seconds",
    }
}

/// A remedy in flags: `give --algo fprev`, `give --batch 1 or more`.
fn words(remedy: &Remedy) -> String {
    match remedy {
        Remedy::Smaller(Param::Shape) => "give a smaller --shape M,N,K".into(),
        Remedy::Smaller(s) => format!("give a smaller {}", flag(*s)),
        Remedy::Give(Param::OutputFormat, values) => {
            format!("--format {} writes the source instead", values.join(" or "))
        }
        Remedy::Give(s, values) => {
            let given: Vec<String> = values.iter().map(|v| format!("{} {v}", flag(*s))).collect();
            format!("give {}", given.join(" or "))
        }
        Remedy::AtLeast(s, least) => format!("give {} {least} or more", flag(*s)),
        Remedy::Wider(settings) => {
            let flags: Vec<&str> = settings.iter().map(|s| flag(*s)).collect();
            format!("use a wider {}", flags.join(" or "))
        }
        Remedy::Drop(s) => format!("leave out {}", flag(*s)),
        Remedy::AppliesTo(s, what) => format!("{} applies to {what}", flag(*s)),
        Remedy::Or(remedy, other) => format!("{}, or {other}", words(remedy)),
        Remedy::Within(bound) => format!("give {}", bound.range(flag(bound.setting))),
        Remedy::AskVaries => "`fprev reveal SPEC --runs R` asks whether SPEC varies".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remedies_name_the_flags() {
        let e = Error::Input("naive stops at n = 9".into())
            .advise(Remedy::Give(Param::Algorithm, &["fprev"]));
        assert_eq!(line(&e), "naive stops at n = 9; give --algo fprev");
        assert_eq!(exit_code(e.kind()), 2);
        let e = Error::Input("x".into()).advise(Remedy::Or(
            Box::new(Remedy::Wider(&[Param::Dtype, Param::Accumulator])),
            "y",
        ));
        assert_eq!(line(&e), "x; use a wider --dtype or --acc, or y");
    }
}
