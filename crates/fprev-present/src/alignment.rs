//! Which alignment of its input array what is found of a black box holds
//! for, where the black box is handed a NumPy array: a library may sum an
//! unaligned array in another order (NumPy buffers one in chunks).
//!
//! ```
//! use fprev::Format;
//! use fprev::probe::Offset;
//! use fprev_present::alignment;
//!
//! assert_eq!(
//!     alignment::placement(Some(Offset::Elements(1)), Format::F32),
//!     "an array starting 1 element (4 bytes) past a 64-byte boundary"
//! );
//! assert!(alignment::note("numpy:sum", None, Format::F32).contains("--offset 0,1B"));
//! assert!(alignment::matched("numpy:sum", Some(Offset::Bytes(1)), Format::F32)
//!     .starts_with("This code matches numpy:sum on an input in an array starting 1 byte past"));
//! ```

use fprev::Format;
use fprev::probe::Offset;

/// Where the input array of `format` values starts: at `offset` past a
/// 64-byte boundary, or (`None`) where NumPy's allocation puts it.
pub fn placement(offset: Option<Offset>, format: Format) -> String {
    let plural = |count: usize, unit: &str| match count {
        1 => format!("1 {unit}"),
        c => format!("{c} {unit}s"),
    };
    match offset {
        None => "an array where NumPy's allocation puts it (aligned to its values)".into(),
        Some(Offset::Bytes(b)) => {
            format!(
                "an array starting {} past a 64-byte boundary",
                plural(b, "byte")
            )
        }
        Some(o @ Offset::Elements(e)) => format!(
            "an array starting {} ({}) past a 64-byte boundary",
            plural(e, "element"),
            plural(o.bytes(format), "byte")
        ),
    }
}

/// The note that what is found of `spec` holds for its input at `offset`
/// (`None`: where NumPy's allocation puts it, and how to compare another).
pub fn note(spec: &str, offset: Option<Offset>, format: Format) -> String {
    let placed = placement(offset, format);
    match offset {
        None => format!(
            "{spec} is handed its input in {placed}: what is found holds for such an array; \
             one at another offset (a view at a byte offset) may be summed in another order \
             (fprev invariance --offset 0,1B compares them; --offset O finds it for another)"
        ),
        Some(_) => format!(
            "{spec} is handed its input in {placed}: what is found holds for that alignment"
        ),
    }
}

/// What emitted code of `spec` says of the alignment it matches: the one
/// its order was found at (`offset`), and how to write it for another.
pub fn matched(spec: &str, offset: Option<Offset>, format: Format) -> String {
    let placed = placement(offset, format);
    let other = match offset {
        None => "a view at a byte offset, --offset 1B",
        Some(_) => "NumPy's own allocation, no --offset",
    };
    format!(
        "This code matches {spec} on an input in {placed}, where its order was found; {spec} \
         may sum an array at another offset in another order (fprev emit --offset O writes the \
         code for another: {other})"
    )
}
