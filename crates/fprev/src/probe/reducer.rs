//! fprev's own reproducible reducers as black boxes, on `THREADS` threads
//! (default 1), in f32 or f64: `reduce:binary-tree[:THREADS]`, the Binary
//! Tree Reduction, and `reduce:prerounded[:THREADS]`, the pre-rounded sum.

use crate::error::{Error, Result};
use crate::format::Format;
use crate::probe::linalg::ieee_format;
use crate::probe::{Probe, ProbeOptions, resolve_n};
use crate::reduce::{
    PreRoundable, binary_tree_sum, binary_tree_sum_on, prerounded_sum, prerounded_sum_on,
};

/// The reducers of [`crate::reduce`] that can be probed.
#[derive(Clone, Copy, Debug)]
enum Reducer {
    BinaryTree,
    PreRounded,
}

/// A reducer of [`crate::reduce`] as a black box.
#[derive(Debug)]
pub struct ReducerProbe {
    n: usize,
    format: Format,
    reducer: Reducer,
    /// `None` for one thread.
    pool: Option<rayon::ThreadPool>,
    buf: Vec<f32>,
}

impl ReducerProbe {
    fn reduce<T: PreRoundable>(&self, x: &[T]) -> T {
        match (self.reducer, &self.pool) {
            (Reducer::BinaryTree, Some(pool)) => binary_tree_sum_on(pool, x),
            (Reducer::BinaryTree, None) => binary_tree_sum(x),
            (Reducer::PreRounded, Some(pool)) => prerounded_sum_on(pool, x),
            (Reducer::PreRounded, None) => prerounded_sum(x),
        }
    }
}

impl ReducerProbe {
    /// Opens `reduce:REDUCER[:THREADS]` (`name` is its `REDUCER`,
    /// `in_spec` its `THREADS`).
    pub fn open(
        spec: &str,
        name: &str,
        in_spec: Option<&str>,
        opts: &ProbeOptions,
    ) -> Result<Self> {
        let reducer = match name {
            "binary-tree" => Reducer::BinaryTree,
            "prerounded" => Reducer::PreRounded,
            _ => {
                return Err(Error::Input(format!(
                    "'{spec}': unknown reducer '{name}': expected reduce:binary-tree[:THREADS] \
                     or reduce:prerounded[:THREADS]"
                )));
            }
        };
        let threads = threads(spec, in_spec, opts)?;
        let pool = (threads > 1).then(|| pool(spec, threads)).transpose()?;
        Ok(ReducerProbe {
            n: resolve_n(spec, opts)?,
            format: ieee_format(spec, opts.format)?,
            reducer,
            pool,
            buf: Vec::new(),
        })
    }
}

/// The thread count of `spec`, whose own count is `in_spec`: that one,
/// else the one given in `opts`, else 1; the two must agree.
pub(super) fn threads(spec: &str, in_spec: Option<&str>, opts: &ProbeOptions) -> Result<usize> {
    match in_spec.map(str::parse::<usize>) {
        None => Ok(opts.threads.unwrap_or(1)),
        Some(Ok(t)) if (1..=1024).contains(&t) && opts.threads.is_none_or(|o| o == t) => Ok(t),
        Some(Ok(t)) if (1..=1024).contains(&t) => Err(Error::Input(format!(
            "'{spec}': {t} threads in the spec disagree with the {} threads given",
            opts.threads.unwrap_or(1)
        ))),
        Some(_) => Err(Error::Input(format!(
            "'{spec}': the thread count must be a whole number from 1 to 1024"
        ))),
    }
}

/// A Rayon pool of `threads` threads for `spec`.
pub(super) fn pool(spec: &str, threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::System {
            what: format!("'{spec}': cannot start {threads} threads"),
            source: e.into(),
        })
}

impl Probe for ReducerProbe {
    fn n(&self) -> usize {
        self.n
    }
    fn format(&self) -> Format {
        self.format
    }
    fn may_fuse(&self) -> bool {
        false
    }
    fn deterministic(&self) -> bool {
        true
    }
    fn sum(&mut self, inputs: &[f64], out: &mut [f64]) -> Result<()> {
        for (x, o) in inputs.chunks_exact(self.n).zip(out) {
            *o = if self.format == Format::F64 {
                self.reduce(x)
            } else {
                let mut buf = std::mem::take(&mut self.buf);
                buf.clear();
                buf.extend(x.iter().map(|v| *v as f32));
                let y = self.reduce(&buf) as f64;
                self.buf = buf;
                y
            };
        }
        Ok(())
    }
}
