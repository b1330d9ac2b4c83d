//! What a survey records of the machine it ran on: the CPU and the SIMD
//! features kernels dispatch on, the libraries that answered, and the
//! environment variables that steer their kernels. `fprev compare` names
//! the facts that differ as the likely reasons a result changed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Environment variables that change which kernel a library runs, or on
/// how many threads: recorded where set.
pub const STEERING: &[&str] = &[
    "OPENBLAS_NUM_THREADS",
    "OPENBLAS_CORETYPE",
    "GOTO_NUM_THREADS",
    "OMP_NUM_THREADS",
    "OMP_PROC_BIND",
    "MKL_NUM_THREADS",
    "MKL_CBWR",
    "MKL_ENABLE_INSTRUCTIONS",
    "MKL_DEBUG_CPU_TYPE",
    "BLIS_NUM_THREADS",
    "BLIS_ARCH_TYPE",
    "NPY_DISABLE_CPU_FEATURES",
    "NPY_ENABLE_CPU_FEATURES",
    "XLA_FLAGS",
    "CUBLAS_WORKSPACE_CONFIG",
    "NVIDIA_TF32_OVERRIDE",
    "RAYON_NUM_THREADS",
    "OMPI_MCA_coll_tuned_use_dynamic_rules",
    "OMPI_MCA_coll_tuned_allreduce_algorithm",
    "MPIR_CVAR_DEVICE_COLLECTIVES",
    "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM",
    crate::probe::blas::library::ENV,
];

/// The machine a survey ran on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// The CPU's model name.
    pub cpu: String,
    /// The CPU's SIMD and arithmetic features (`avx2`, `fma`, `avx512f`,
    /// `asimd`, …): what run-time dispatch looks at.
    pub cpu_features: Vec<String>,
    /// Logical cores.
    pub cores: usize,
    /// The operating system and architecture.
    pub os: String,
    /// The fprev that ran the survey.
    pub fprev: String,
    /// Each library surveyed (`numpy`, `blas`, `blas@blis`, …): what it
    /// said of itself, key by key.
    pub libraries: BTreeMap<String, BTreeMap<String, String>>,
    /// The [`STEERING`] variables that were set, with their values.
    pub environment: BTreeMap<String, String>,
}

impl Machine {
    /// This machine, its libraries left for the survey to add.
    pub fn here() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == name).then(|| v.trim().to_string())
            })
        };
        let cpu = field("model name")
            .or_else(|| field("Model"))
            .or_else(|| field("CPU part").map(|p| format!("CPU part {p}")))
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let flags = field("flags")
            .or_else(|| field("Features"))
            .unwrap_or_default();
        let mut cpu_features: Vec<String> = flags
            .split_whitespace()
            .filter(|f| is_arithmetic_feature(f))
            .map(str::to_string)
            .collect();
        cpu_features.sort();
        cpu_features.dedup();
        let release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
        let pretty = release
            .lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        Machine {
            cpu,
            cpu_features,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: format!("{pretty}, {}", std::env::consts::ARCH),
            fprev: env!("CARGO_PKG_VERSION").to_string(),
            libraries: BTreeMap::new(),
            environment: STEERING
                .iter()
                .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?)))
                .collect(),
        }
    }

    /// Every fact as `(name, value)`, libraries' facts as `library key`:
    /// the form in which two machines are compared.
    pub fn facts(&self) -> Vec<(String, String)> {
        let mut out = vec![
            ("cpu".to_string(), self.cpu.clone()),
            ("cpu features".to_string(), self.cpu_features.join(" ")),
            ("cores".to_string(), self.cores.to_string()),
            ("os".to_string(), self.os.clone()),
            ("fprev".to_string(), self.fprev.clone()),
        ];
        for (library, facts) in &self.libraries {
            for (k, v) in facts {
                out.push((format!("{library} {k}"), v.clone()));
            }
        }
        for k in STEERING {
            let v = self
                .environment
                .get(*k)
                .cloned()
                .unwrap_or_else(|| "(unset)".into());
            out.push((format!("${k}"), v));
        }
        out
    }

    /// The facts both record that differ: `(name, here, there)`. A library
    /// only one of them visited is no difference of the machines.
    pub fn differences(&self, other: &Machine) -> Vec<(String, String, String)> {
        let theirs: BTreeMap<String, String> = other.facts().into_iter().collect();
        self.facts()
            .into_iter()
            .filter_map(|(fact, mine)| {
                let there = theirs.get(&fact)?;
                (*there != mine).then(|| (fact, mine, there.clone()))
            })
            .collect()
    }
}

/// A CPU flag that changes which arithmetic kernel runs.
fn is_arithmetic_feature(flag: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "sse", "ssse3", "avx", "fma", "f16c", "amx", "asimd", "sve", "fphp", "bf16", "i8mm",
    ];
    PREFIXES.iter().any(|p| flag.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_each_fact_that_changed() {
        let mut a = Machine::here();
        a.environment.remove("OPENBLAS_CORETYPE");
        let mut b = a.clone();
        b.environment
            .insert("OPENBLAS_CORETYPE".into(), "Sandybridge".into());
        a.libraries.insert(
            "blas".into(),
            [("version".into(), "OpenBLAS Zen".into())].into(),
        );
        b.libraries.insert(
            "blas".into(),
            [("version".into(), "OpenBLAS Prescott".into())].into(),
        );
        // A library only one side visited.
        b.libraries
            .insert("numpy".into(), [("version".into(), "2.4".into())].into());
        let d = a.differences(&b);
        let names: Vec<&str> = d.iter().map(|(k, _, _)| k.as_str()).collect();
        assert_eq!(names, ["blas version", "$OPENBLAS_CORETYPE"]);
        assert_eq!(d[0].1, "OpenBLAS Zen");
        assert_eq!(
            d[1],
            (
                "$OPENBLAS_CORETYPE".into(),
                "(unset)".into(),
                "Sandybridge".into()
            )
        );
        assert!(a.differences(&a).is_empty());
    }
}
