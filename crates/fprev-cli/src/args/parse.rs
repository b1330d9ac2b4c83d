//! The flags' value parsers: bounded whole numbers, rows, shapes, seconds, offsets.

use fprev::bounds;
use fprev::probe::Offset;
use fprev::sizes::Sizes;

// Each whole number is bounded where the library says (`fprev::bounds`),
// as the Python package's are; a refusal is the library's error, worded in
// the flag given.

/// A count of summands.
pub(super) fn parse_count(s: &str) -> Result<usize, fprev::Error> {
    bounds::N.parse(s)
}

/// `--column`, `--columns`: a whole number from 0 (checked against the
/// shape's N when the black box opens).
pub(super) fn parse_column(s: &str) -> Result<usize, fprev::Error> {
    bounds::COLUMN.parse(s)
}

/// A thread count.
pub(super) fn parse_threads(s: &str) -> Result<u16, fprev::Error> {
    let t = bounds::THREADS.parse(s)?;
    u16::try_from(t).map_err(|_| bounds::THREADS.refuse(s))
}

/// `--batch`: most rows a call.
pub(super) fn parse_batch(s: &str) -> Result<usize, fprev::Error> {
    bounds::BATCH.parse(s)
}

/// `emit --trials`.
pub(super) fn parse_emit_trials(s: &str) -> Result<u16, fprev::Error> {
    let k = bounds::EMIT_TRIALS.parse(s)?;
    u16::try_from(k).map_err(|_| bounds::EMIT_TRIALS.refuse(s))
}

/// `--batch`, `--count`: sizes that are not summands revealed.
pub(super) fn parse_list(s: &str) -> Result<Sizes, fprev::Error> {
    Sizes::list(s).map_err(fprev::Error::Input)
}

/// `--check-sizes`: sizes emitted code is replayed at.
pub(super) fn parse_replayed(s: &str) -> Result<Sizes, fprev::Error> {
    Sizes::replayed(s).map_err(fprev::Error::Input)
}

/// A row of a batch: first, middle, last or an index.
pub(super) fn parse_row(s: &str) -> std::result::Result<String, String> {
    let s = s.trim();
    match s {
        "first" | "middle" | "last" => Ok(s.to_string()),
        _ => match s.parse::<u128>() {
            Ok(r) => bounds::ROW
                .count(r)
                .map(|r| r.to_string())
                .map_err(|e| e.to_string()),
            Err(_) => Err(format!(
                "'{s}' is not a row: give first, middle, last or an index"
            )),
        },
    }
}

/// Two positive whole numbers M,N.
pub(super) fn parse_pair(s: &str) -> std::result::Result<[usize; 2], String> {
    let dims: Vec<usize> = s.split(',').filter_map(|p| p.trim().parse().ok()).collect();
    match dims.as_slice() {
        [m, n] if s.split(',').count() == 2 && *m > 0 && *n > 0 => Ok([*m, *n]),
        _ => Err(format!("'{s}' is not M,N: two positive whole numbers")),
    }
}

/// The longest `--timeout`: about 31 years, past any wait one means.
const MOST_SECONDS: f64 = 1e9;

/// A positive number of seconds, at most [`MOST_SECONDS`].
pub(super) fn parse_seconds(s: &str) -> std::result::Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t > 0.0 && t.is_finite() && t <= MOST_SECONDS => Ok(t),
        Ok(t) if t > MOST_SECONDS => Err(format!(
            "'{s}' seconds is too large: a timeout is at most {MOST_SECONDS:.0} seconds"
        )),
        _ => Err(format!("'{s}' is not a number of seconds above 0")),
    }
}

/// `--offset`: bytes (`1B`) or elements (`1`), bounded.
pub(super) fn parse_offset(s: &str) -> std::result::Result<Offset, String> {
    s.parse().map_err(|e: fprev::Error| e.to_string())
}

/// `check --trials`.
pub(super) fn parse_trials(s: &str) -> Result<usize, fprev::Error> {
    bounds::TRIALS.parse(s)
}

/// `--confirm`: 0 does not confirm.
pub(super) fn parse_confirm(s: &str) -> Result<usize, fprev::Error> {
    bounds::CONFIRM.parse(s)
}

/// Calls of each input `--runs` asks: 0 (none), or 2 and more.
pub(super) fn parse_runs(s: &str) -> Result<usize, fprev::Error> {
    bounds::RUNS.parse(s)
}

/// `--skeleton-seconds`: 0 to a day.
pub(super) fn parse_skeleton_seconds(s: &str) -> Result<usize, fprev::Error> {
    bounds::SKELETON_SECONDS.parse(s)
}

/// A GEMV/GEMM shape M,N,K: three positive whole numbers.
pub(super) fn parse_shape(s: &str) -> std::result::Result<[usize; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    let dims: Vec<usize> = parts.iter().filter_map(|p| p.trim().parse().ok()).collect();
    match dims.as_slice() {
        [m, n, k] if parts.len() == 3 && dims.iter().all(|d| *d > 0) => Ok([*m, *n, *k]),
        _ => Err(format!(
            "'{s}' is not a shape: expected M,N,K, three positive whole numbers"
        )),
    }
}
