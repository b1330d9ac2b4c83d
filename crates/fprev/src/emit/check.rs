//! Checking emitted code, not trusting it: compiled as users compile it,
//! loaded as a `dylib:` black box, and run against the black box it
//! imitates on the same random inputs, bit for bit, at every size asked.

use std::path::{Path, PathBuf};
use std::process::Command;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{Language, Op};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::inputs::Inputs;
use crate::probe::{Probe, ProbeOptions};

/// The sizes `fprev emit --check` runs by default: every `n` up to 1,024,
/// then each power of two to 2^20 and three past it (a size no lane count
/// or block divides, whose rest the code must cut as the black box does:
/// JAX's sum past 2^20 once differed there only).
pub fn default_sizes() -> Vec<usize> {
    let mut sizes: Vec<usize> = (1..=1024).collect();
    sizes.extend((11..=20).flat_map(|k| [1usize << k, (1 << k) + 3]));
    sizes
}

/// The sizes `fprev emit --check` runs by default for `plan`: for a fused
/// chain of groups of `K - 1` (a tensor core's, whose simulator takes
/// milliseconds a call), every `n` up to four groups and one more
/// summand, then the powers of two from 128 to 4,096; else
/// [`default_sizes`].
pub fn default_sizes_for(plan: &super::Plan) -> Vec<usize> {
    let Some(k) = plan.fused_chain() else {
        return default_sizes();
    };
    let mut sizes: Vec<usize> = (1..=4 * (k - 1) + 1).collect();
    sizes.extend(
        (7..=12)
            .map(|e| 1usize << e)
            .filter(|n| *n > 4 * (k - 1) + 1),
    );
    sizes
}

/// An emitted function compiled and loaded as a black box: its spec, the
/// format the black box takes its inputs in and the one it returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Emitted {
    /// The black box (`dylib:…`, `dylib-dot:…`, `python:…`).
    pub spec: String,
    /// The format it is opened with.
    pub format: Format,
    /// The format of what it returns.
    pub result: Format,
}

/// [`build`] for `plan`'s code: where it takes f16 or bf16 values (as
/// their bits) or returns another format than its inputs', C, CUDA C and
/// Rust are compiled with a wrapper of `double` values around it, opened
/// as an f64 black box; Python takes the values as NumPy gives them.
pub fn build_plan(
    source: &str,
    language: Language,
    name: &str,
    plan: &super::Plan,
    dir: &Path,
) -> Result<Emitted> {
    let same = Emitted {
        spec: String::new(),
        format: plan.element,
        result: plan.result,
    };
    let wide = |f: Format| matches!(f, Format::F32 | Format::F64);
    if language == Language::Python || (wide(plan.element) && plan.element == plan.result) {
        return Ok(Emitted {
            spec: build(source, language, name, plan.op, dir)?,
            ..same
        });
    }
    let file = dir.join(format!("{name}.{}", language.extension()));
    std::fs::write(&file, source).map_err(|e| Error::file("write", &file, e))?;
    let library = dir.join(format!("lib{name}.so"));
    let symbol = format!("{name}_check");
    let shim = wrapper(language, name, plan, &file);
    let shim_file = dir.join(format!(
        "{symbol}.{}",
        match language {
            Language::C => "c",
            Language::Cuda => "cpp",
            _ => "rs",
        }
    ));
    std::fs::write(&shim_file, shim).map_err(|e| Error::file("write", &shim_file, e))?;
    match language {
        Language::Rust => rustc(&shim_file, &library, &[])?,
        Language::C => compile(
            "cc",
            &["-std=c99".into(), "-O3".into(), "-march=native".into()],
            &shim_file,
            &library,
        )?,
        _ => compile(
            "c++",
            &["-std=c++11".into(), "-O3".into(), "-march=native".into()],
            &shim_file,
            &library,
        )?,
    }
    Ok(Emitted {
        spec: spec(plan.op, &library, &symbol),
        format: Format::F64,
        result: plan.result,
    })
}

/// A wrapper of `name` (in `file`) taking and returning `double` values:
/// each input an exact value of the plan's element, passed on as the
/// emitted function takes it (an f16's or bf16's bits, a float), the
/// result widened.
fn wrapper(language: Language, name: &str, plan: &super::Plan, file: &Path) -> String {
    let element = plan.element;
    let fraction = element.precision() as i32 - 1;
    let bias = 1 - crate::format::leading_exponent(element.min_normal());
    let dot = plan.op == super::Op::Dot;
    match language {
        Language::Rust => {
            let (ty, to) = match element {
                Format::F32 => ("f32", "v as f32".to_string()),
                _ => ("u16", "bits(v)".to_string()),
            };
            let back = match plan.result {
                Format::F16 => "from_bits(r)".to_string(),
                _ => "f64::from(r)".to_string(),
            };
            format!(
                "include!({file:?});\n\n#[allow(dead_code)]\nfn bits(v: f64) -> u16 {{\n    let s: u16 = if \
                 v.is_sign_negative() {{ 0x8000 }} else {{ 0 }};\n    let a = v.abs();\n    if a == \
                 0.0 {{\n        return s;\n    }}\n    let e = exponent(a);\n    if e < {emin} \
                 {{\n        return s | ldexp(a, {sub}) as u16;\n    }}\n    s | (((e + \
                 {bias}) as u16) << {fraction}) | (ldexp(a, {fraction} - e) - {one}.0) as \
                 u16\n}}\n\n#[unsafe(no_mangle)]\npub unsafe extern \"C\" fn {name}_check(x: *const \
                 f64, y: *const f64, n: usize) -> f64 {{\n    let read = |p: *const f64| -> \
                 Vec<{ty}> {{ (0..n).map(|i| {{ let v = unsafe {{ *p.add(i) }}; {to} }}).collect() \
                 }};\n    let _ = y;\n    let r = {call};\n    {back}\n}}\n",
                file = file.display().to_string(),
                emin = 1 - bias,
                sub = bias - 1 + fraction,
                one = 1u32 << fraction,
                call = match dot {
                    true => format!("{name}(&read(x), &read(y))"),
                    false => format!("{name}(&read(x))"),
                },
            )
        }
        _ => {
            let (ty, to) = match element {
                Format::F32 => ("float", "(float)p[i]"),
                _ => ("uint16_t", "fprev_check_bits(p[i])"),
            };
            let (params, call) = match dot {
                true => (
                    "const double *x, const double *y, size_t n",
                    format!("{name}(a, b, n)"),
                ),
                false => ("const double *x, size_t n", format!("{name}(a, n)")),
            };
            format!(
                "{cuda}#include \"{file}\"\n#include <stdlib.h>\n\nstatic uint16_t \
                 fprev_check_bits(double v) {{\n    uint16_t s = signbit(v) ? 0x8000 : 0;\n    \
                 double a = fabs(v);\n    if (a == 0.0) return s;\n    int e = ilogb(a);\n    if (e \
                 < {emin}) return s | (uint16_t)ldexp(a, {sub});\n    return s | (uint16_t)((e + \
                 {bias}) << {fraction}) | (uint16_t)(ldexp(a, {fraction} - e) - {one}.0);\n}}\n\n\
                 static {ty} *fprev_check_read(const double *p, size_t n) {{\n    {ty} *out = ({ty} \
                 *)malloc((n ? n : 1) * sizeof *out);\n    for (size_t i = 0; out && i < n; i++) \
                 out[i] = {to};\n    return out;\n}}\n\n#ifdef __cplusplus\nextern \"C\"\n#endif\n\
                 double {name}_check({params}) {{\n    {ty} *a = fprev_check_read(x, n);\n    {ty} \
                 *b = fprev_check_read({y}, n);\n    if (!a || !b) return NAN;\n    double r = \
                 {back_call};\n    free(a);\n    free(b);\n    return r;\n}}\n",
                cuda = match language {
                    Language::Cuda => "#define __device__\n",
                    _ => "",
                },
                file = file.display(),
                emin = 1 - bias,
                sub = bias - 1 + fraction,
                one = 1u32 << fraction,
                y = if dot { "y" } else { "x" },
                back_call = match plan.result {
                    Format::F16 => format!("fprev_from_bits({call})"),
                    _ => format!("(double){call}"),
                },
            )
        }
    }
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
/// The compiler's own temporary files go beside `source` (its `TMPDIR`),
/// so that a signal ending the compiler between its making one and its
/// noting it leaves none behind once the directory goes.
fn run_compiler(command: &mut Command, program: &str, source: &Path) -> Result<()> {
    if let Some(dir) = source.parent().filter(|d| !d.as_os_str().is_empty()) {
        command.env("TMPDIR", dir);
    }
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
    let emitted = Emitted {
        spec: emitted.to_string(),
        format: opts.format,
        result: opts.format,
    };
    compare_emitted(open, &emitted, opts, op, sizes, trials, progress)
}

/// [`compare`] with the emitted black box opened in its own format, the
/// black box's result rounded to the emitted one's.
pub fn compare_emitted(
    open: &mut dyn FnMut(&ProbeOptions) -> Result<Box<dyn Probe>>,
    emitted: &Emitted,
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
        let mut ours = crate::open(
            &emitted.spec,
            &ProbeOptions {
                format: emitted.format,
                ..at.clone()
            },
        )?;
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
            let want = emitted.result.round(want);
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
