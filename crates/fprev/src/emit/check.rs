//! Checking emitted code, not trusting it: compiled as users compile it,
//! loaded as a `dylib:` black box, and run against the black box it
//! imitates on the same random inputs, bit for bit, at every size asked.

use std::path::{Path, PathBuf};
use std::process::Command;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{Language, Op};
use crate::error::{Error, Result};
use crate::inputs::Inputs;
use crate::probe::{Probe, ProbeOptions};

/// The sizes `fprev emit --check` runs by default: every `n` up to 1,024,
/// then the powers of two to 2^20.
pub fn default_sizes() -> Vec<usize> {
    let mut sizes: Vec<usize> = (1..=1024).collect();
    sizes.extend((11..=20).map(|k| 1usize << k));
    sizes
}

/// Compiles `source` (in `language`, defining `name`) in `dir` into a
/// shared library and returns the spec that opens it as a black box
/// (`dylib:…` or `dylib-dot:…`). C is compiled with `cc -std=c99 -O3
/// -march=native`, as its comment says; CUDA C, where no GPU compiler
/// is at hand, with the host's C++ compiler, its device qualifiers
/// defined away, which checks its syntax and its arithmetic on the CPU;
/// Rust with `rustc --crate-type cdylib -C opt-level=3 -C
/// target-cpu=native`, and opened at its C wrapper `NAME_c`. Python is
/// not compiled: it opens as `python:FILE.py:NAME` (a function of `x, y`
/// opening as a dot product).
pub fn build(source: &str, language: Language, name: &str, op: Op, dir: &Path) -> Result<String> {
    let file = dir.join(format!("{name}.{}", language.extension()));
    std::fs::write(&file, source).map_err(|e| Error::file("write", &file, e))?;
    if language == Language::Python {
        return Ok(format!("python:{}:{name}", file.display()));
    }
    let library = dir.join(format!("lib{name}.so"));
    let (program, args, symbol): (&str, Vec<String>, String) = match language {
        Language::C => (
            "cc",
            vec!["-std=c99".into(), "-O3".into(), "-march=native".into()],
            name.to_string(),
        ),
        Language::Python => unreachable!("returned above"),
        Language::Cuda => {
            let shim = dir.join(format!("{name}_host.cpp"));
            let (params, args) = match op {
                Op::Sum => ("const T *x, size_t n", "x, n"),
                Op::Dot => ("const T *x, const T *y, size_t n", "x, y, n"),
            };
            let text = format!(
                "#define __device__\n#include \"{}\"\ntypedef decltype({name}(0{zeros})) T;\n\
                 extern \"C\" T {name}_host({params}) {{ return {name}({args}); }}\n",
                file.display(),
                zeros = match op {
                    Op::Sum => ", 0",
                    Op::Dot => ", 0, 0",
                }
            );
            std::fs::write(&shim, text).map_err(|e| Error::file("write", &shim, e))?;
            return compile(
                "c++",
                &["-std=c++11".into(), "-O3".into(), "-march=native".into()],
                &shim,
                &library,
            )
            .map(|_| spec(op, &library, &format!("{name}_host")));
        }
        Language::Rust => {
            rustc(&file, &library, &[])?;
            return Ok(spec(op, &library, &format!("{name}_c")));
        }
    };
    compile(program, &args, &file, &library)?;
    Ok(spec(op, &library, &symbol))
}

fn spec(op: Op, library: &Path, symbol: &str) -> String {
    let prefix = match op {
        Op::Sum => "dylib",
        Op::Dot => "dylib-dot",
    };
    format!("{prefix}:{}:{symbol}", library.display())
}

/// Runs `program ARGS -shared -fPIC -o library source -lm`.
fn compile(program: &str, args: &[String], source: &Path, library: &Path) -> Result<()> {
    let mut command = Command::new(program);
    command
        .args(args)
        .args(["-shared", "-fPIC", "-o"])
        .arg(library)
        .arg(source)
        .arg("-lm");
    run_compiler(&mut command, program, source)
}

/// Runs a compiler's `command`; where it fails, its first error line.
fn run_compiler(command: &mut Command, program: &str, source: &Path) -> Result<()> {
    let out = command.output().map_err(|e| Error::System {
        what: format!("cannot run {program} to compile the emitted code (is it installed?)"),
        source: Box::new(e),
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr.lines().find(|l| l.contains("error")).unwrap_or("");
        return Err(Error::Input(format!(
            "{program} could not compile {}: {first}",
            source.display()
        )));
    }
    Ok(())
}

/// Compiles the Rust file `source` into the shared library `library`
/// (`rustc --crate-type cdylib -C opt-level=3 -C target-cpu=native`, then
/// `flags`).
pub fn rustc(source: &Path, library: &Path, flags: &[&str]) -> Result<()> {
    let mut command = Command::new("rustc");
    command
        .args([
            "--edition",
            "2021",
            "--crate-type",
            "cdylib",
            "-C",
            "opt-level=3",
        ])
        .args(["-C", "target-cpu=native"])
        .args(flags)
        .arg("-o")
        .arg(library)
        .arg(source);
    run_compiler(&mut command, "rustc", source)
}

/// What a check found.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    /// The sizes checked, every trial the same bits, ascending.
    pub sizes: Vec<usize>,
    /// Random inputs at each size.
    pub trials: usize,
    /// The first size, trial and bits (black box, emitted) that differed.
    pub mismatch: Option<(usize, usize, f64, f64)>,
}

impl Checked {
    /// What the check vouches for, as the emitted code's comment says it:
    /// `Checked: compiled and run against SPEC on this machine, bit for
    /// bit, on K random inputs at each n = SIZES` (no full stop: a front
    /// end may add the time it took).
    pub fn passed(&self, spec: &str) -> String {
        format!(
            "Checked: compiled and run against {spec} on this machine, bit for bit, on {} \
             random inputs at each n = {}",
            self.trials,
            crate::sizes::runs(&self.sizes)
        )
    }

    /// Where the emitted code in `language` differed from `spec`, in
    /// words, if it did.
    pub fn difference(&self, language: Language, spec: &str) -> Option<String> {
        let (n, trial, want, got) = self.mismatch?;
        Some(format!(
            "the emitted {language} differs from {spec} at n = {n} (random input {}): the black \
             box gives {want:e}, the code {got:e}",
            trial + 1
        ))
    }
}

/// Runs the emitted black box `emitted` and the black box opened by
/// `open` at each of `sizes` on `trials` random inputs each (of `format`;
/// a dot's `y` too), comparing their bits; stops at the first difference.
/// `progress` is told each size done.
pub fn compare(
    open: &mut dyn FnMut(&ProbeOptions) -> Result<Box<dyn Probe>>,
    emitted: &str,
    opts: &ProbeOptions,
    op: Op,
    sizes: &[usize],
    trials: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Checked> {
    let format = opts.format;
    let mut rng = ChaCha8Rng::seed_from_u64(0x636865636b);
    let mut checked = Vec::new();
    for (done, &n) in sizes.iter().enumerate() {
        let at = opts.at(n);
        let mut black_box = open(&at)?;
        let mut ours = crate::open(emitted, &at)?;
        for trial in 0..trials {
            let kind = Inputs::ALL[trial % Inputs::ALL.len()];
            let x = kind.draw(format, n, &mut rng);
            let (want, got) = match op {
                Op::Sum => (sum(black_box.as_mut(), &x)?, sum(ours.as_mut(), &x)?),
                Op::Dot => {
                    let y = kind.draw(format, n, &mut rng);
                    (
                        dot(black_box.as_mut(), &x, &y)?,
                        dot(ours.as_mut(), &x, &y)?,
                    )
                }
            };
            let want = format.round(want);
            if want.to_bits() != got.to_bits() && !(want.is_nan() && got.is_nan()) {
                return Ok(Checked {
                    sizes: checked,
                    trials,
                    mismatch: Some((n, trial, want, got)),
                });
            }
        }
        checked.push(n);
        progress(done + 1, sizes.len());
    }
    Ok(Checked {
        sizes: checked,
        trials,
        mismatch: None,
    })
}

fn sum(probe: &mut dyn Probe, x: &[f64]) -> Result<f64> {
    let mut out = [0.0];
    probe.sum(x, &mut out)?;
    Ok(out[0])
}

fn dot(probe: &mut dyn Probe, x: &[f64], y: &[f64]) -> Result<f64> {
    let mut out = [0.0];
    let dot = probe
        .as_dot()
        .ok_or_else(|| Error::Input("the black box does not multiply: emit it as a sum".into()))?;
    dot.dot(x, y, &mut out)?;
    Ok(out[0])
}

/// A directory of its own under the system's temporary directory, removed
/// when dropped (or by [`Scratch::remove_all`]).
pub struct Scratch(pub PathBuf);

/// The directories of the [`Scratch`]es alive.
static LIVE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

impl Scratch {
    /// Makes one.
    pub fn new() -> Result<Scratch> {
        let base = std::env::temp_dir().join(format!(
            "fprev-emit-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&base).map_err(|e| Error::file("make", &base, e))?;
        LIVE.lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(base.clone());
        Ok(Scratch(base))
    }

    /// Removes the directory of every `Scratch` alive: for a front end
    /// ending the process at once (on a signal), where no destructor runs.
    /// A thread stopped while it held the list leaves it be.
    pub fn remove_all() {
        let live = match LIVE.try_lock() {
            Ok(live) => live,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        for dir in live.iter() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        LIVE.lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .retain(|dir| *dir != self.0);
    }
}
