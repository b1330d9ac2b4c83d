//! The names emitted code may give its function: an identifier that is no
//! keyword or reserved name of the language, and none the code itself
//! defines or uses at the top level (its helpers, `np`, a builtin it
//! calls), which the function's name would replace or hide.

use super::Language;
use crate::error::{Error, Result};

/// C's keywords (C99 to C23), and the names of the headers emitted C
/// includes and of its types, which a function of that name would
/// redeclare.
#[rustfmt::skip]
const C: &[&str] = &[
    "alignas", "alignof", "auto", "bool", "break", "case", "char", "const", "constexpr",
    "continue", "default", "do", "double", "else", "enum", "extern", "false", "float", "for",
    "goto", "if", "inline", "int", "long", "nullptr", "register", "restrict", "return", "short",
    "signed", "sizeof", "static", "static_assert", "struct", "switch", "thread_local", "true",
    "typedef", "typeof", "typeof_unqual", "union", "unsigned", "void", "volatile", "while",
    "asm", "main", "NULL", "size_t", "ptrdiff_t", "wchar_t", "max_align_t", "offsetof",
    "float_t", "double_t", "fabs", "fabsf", "fma", "fmaf", "fmal", "sqrt", "sqrtf", "floor",
    "floorf", "ceil", "ceilf", "round", "roundf", "trunc", "truncf", "nextafter", "nextafterf",
    "ldexp", "ldexpf", "frexp", "frexpf", "copysign", "copysignf", "isnan", "isinf", "isfinite",
    "signbit", "fmin", "fmax", "fminf", "fmaxf", "pow", "exp", "log", "nan", "nanf",
    "remainder", "modf", "scalbn", "scalbnf",
];

/// CUDA C's own keywords and built-in variables, besides C's (and the C++
/// keywords nvcc compiles the code as).
#[rustfmt::skip]
const CUDA: &[&str] = &[
    "__global__", "__device__", "__host__", "__shared__", "__constant__", "threadIdx",
    "blockIdx", "blockDim", "gridDim", "warpSize", "class", "delete", "new", "namespace",
    "template", "this", "throw", "try", "catch", "virtual", "public", "private", "protected",
    "operator", "friend", "using", "typename", "explicit", "mutable", "export", "noexcept",
    "decltype", "and", "or", "not", "xor", "bitand", "bitor", "compl", "and_eq", "or_eq",
    "not_eq", "xor_eq", "char8_t", "char16_t", "char32_t", "consteval", "constinit", "co_await",
    "co_return", "co_yield", "concept", "requires", "dynamic_cast", "reinterpret_cast",
    "static_cast", "const_cast", "typeid", "wchar_t",
];

/// Rust's keywords (strict, reserved and weak, every edition), and the
/// names emitted Rust uses from the prelude and its crates.
#[rustfmt::skip]
const RUST: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
    "extern", "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod",
    "move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait",
    "true", "type", "unsafe", "use", "where", "while", "abstract", "become", "box", "do",
    "final", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
    "union", "macro_rules", "raw", "safe", "Option", "Some", "None", "Result", "Ok", "Err",
    "Vec", "alloc", "core", "std", "main",
];

/// Python's keywords and soft keywords, and its builtins (a function of
/// that name hides the builtin the emitted helpers call).
#[rustfmt::skip]
const PYTHON: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
    "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
    "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
    "try", "while", "with", "yield", "match", "case", "type", "abs", "all",
    "any", "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr",
    "classmethod", "compile", "complex", "delattr", "dict", "dir", "divmod", "enumerate",
    "eval", "exec", "filter", "float", "format", "frozenset", "getattr", "globals", "hasattr",
    "hash", "help", "hex", "id", "input", "int", "isinstance", "issubclass", "iter", "len",
    "list", "locals", "map", "max", "memoryview", "min", "next", "object", "oct", "open", "ord",
    "pow", "print", "property", "range", "repr", "reversed", "round", "set", "setattr", "slice",
    "sorted", "staticmethod", "str", "sum", "super", "tuple", "vars", "zip", "__import__",
    "__name__", "__file__", "__doc__", "__builtins__",
];

/// The prefixes of the helpers emitted code numbers by part (`a0`, `pw3`).
const HELPER_PREFIXES: &[&str] = &["a", "dbl", "e", "h", "k", "p", "pw", "r", "x"];

/// The language as its users call it.
fn title(language: Language) -> &'static str {
    match language {
        Language::C => "C",
        Language::Cuda => "CUDA C",
        Language::Rust => "Rust",
        Language::Python => "Python",
    }
}

/// Why `name` cannot name `language`'s emitted function, `None` where it
/// can.
fn taken(name: &str, language: Language) -> Option<String> {
    let reserved = match language {
        Language::C => C.contains(&name),
        Language::Cuda => C.contains(&name) || CUDA.contains(&name),
        Language::Rust => RUST.contains(&name),
        Language::Python => PYTHON.contains(&name),
    };
    if reserved {
        return Some(format!(
            "'{name}' is a keyword or reserved name of {}",
            title(language)
        ));
    }
    // The helpers emitted code defines: a prefix of its own, a part's
    // number and its kind (`a0`, `p1x`, `r3v`, `dbl2`), `fin`, `fprev_fin`,
    // `_fprev_lanes`, `_FprevInputs`, NumPy as `np`; and C's reserved `__x`
    // and `_X`.
    let helper = HELPER_PREFIXES.iter().any(|prefix| {
        name.strip_prefix(prefix).is_some_and(|rest| {
            let digits = rest.trim_end_matches(|c: char| c.is_ascii_lowercase());
            !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && rest.len() - digits.len() <= 1
        })
    });
    let lower = name.to_ascii_lowercase();
    let imported = language == Language::Python && matches!(name, "np" | "numpy");
    let ours =
        lower.starts_with("fprev_") || lower.starts_with("_fprev") || name == "fin" || imported;
    let c_reserved = matches!(language, Language::C | Language::Cuda)
        && (name.starts_with("__")
            || name.starts_with('_') && name[1..].starts_with(char::is_uppercase));
    match (helper && language != Language::Python) || ours || c_reserved {
        true => Some(format!(
            "'{name}' is a name the emitted {} defines or uses itself",
            title(language)
        )),
        false => None,
    }
}

/// Whether `name` can name an emitted function in `language`: letters,
/// digits and underscores, not starting with a digit, and none of the
/// language's keywords and reserved names or of the names the emitted code
/// uses itself; else why not.
///
/// ```
/// use fprev::emit::{Language, valid_name};
///
/// assert!(valid_name("numpy_sum_f32", Language::C).is_ok());
/// assert!(valid_name("int", Language::C).is_err());
/// assert!(valid_name("np", Language::Python).is_err());
/// assert!(valid_name("a0", Language::Rust).is_err());
/// assert!(valid_name("f0", Language::Rust).is_ok());
/// assert!(valid_name("2x", Language::Rust).is_err());
/// ```
pub fn valid_name(name: &str, language: Language) -> Result<()> {
    let identifier = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name != "_";
    if !identifier {
        return Err(Error::Input(format!(
            "'{}' is not a function name: give letters, digits and underscores, not \
             starting with a digit",
            crate::error::abbreviated(name)
        )));
    }
    match taken(name, language) {
        Some(why) => Err(Error::Input(format!(
            "{why}: give the function another name"
        ))),
        None => Ok(()),
    }
}
