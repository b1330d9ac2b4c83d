//! The README's first command must run on a bare machine: the release binary
//! of the default build may need only the shared libraries every machine of
//! this kind has (the C runtime, and the toolchain's libpython for the
//! embedded Python bridge). BLAS libraries load at run time instead, so a
//! link against one can never come back unnoticed.

use std::process::Command;

/// Libraries the machine image has, by the start of their file name.
const ALLOWED: [&str; 9] = [
    "libc.so",
    "libm.so",
    "libgcc_s.so",
    "libpthread.so",
    "libdl.so",
    "librt.so",
    "libutil.so",
    "ld-linux-x86-64.so",
    "libpython3.",
];

#[test]
fn the_default_release_binary_links_only_what_a_bare_machine_has() {
    // Built by scripts/test.sh just before the tests, with the default
    // features, as the README's first command builds it.
    // The workspace's target directory, two levels above this crate.
    let binary = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/release/fprev");
    assert!(
        std::path::Path::new(binary).is_file(),
        "{binary} is missing: build it first with `cargo build --release` (scripts/test.sh does)"
    );
    let readelf = Command::new("readelf")
        .args(["-d", binary])
        .output()
        .expect("readelf (binutils) runs");
    assert!(readelf.status.success(), "readelf -d {binary} failed");
    let text = String::from_utf8_lossy(&readelf.stdout);
    let needed: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next())
        .collect();
    assert!(needed.iter().any(|l| l.starts_with("libc.so")), "{text}");
    let extra: Vec<&&str> = needed
        .iter()
        .filter(|lib| !ALLOWED.iter().any(|a| lib.starts_with(a)))
        .collect();
    assert!(
        extra.is_empty(),
        "{binary} needs {extra:?}, which a bare machine lacks: load it at run time instead"
    );
}
