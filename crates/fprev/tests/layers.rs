//! The library's modules form layers: no module reaches, through its own
//! `crate::` paths, a module that reaches back to it. Read from the
//! sources, so a new import that closes a circle fails here, naming it.
//!
//! `cargo test -p fprev --test layers -- --nocapture` prints the floors.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level module of each source file and the top-level modules its
/// code (not its comments) names through `crate::`.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(&src).unwrap();
            let first = relative.components().next().unwrap();
            let module = Path::new(first.as_os_str())
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if module == "lib" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let uses = graph.entry(module.clone()).or_default();
            for line in text.lines() {
                let code = line.split("//").next().unwrap_or("");
                for (at, _) in code.match_indices("crate::") {
                    let rest = &code[at + "crate::".len()..];
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    // `crate::{a, b}` names several.
                    let names: Vec<String> = if name.is_empty() && rest.starts_with('{') {
                        let inner = &rest[1..rest.find('}').unwrap_or(rest.len())];
                        inner
                            .split(',')
                            .map(|p| p.trim().split("::").next().unwrap_or("").to_string())
                            .collect()
                    } else {
                        vec![name]
                    };
                    for n in names {
                        let top = n.trim().to_string();
                        if !top.is_empty() && top != module && top != "self" {
                            uses.insert(top);
                        }
                    }
                }
            }
        }
    }
    // Names re-exported at the crate root (`crate::Error`) are not modules.
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for uses in graph.values_mut() {
        uses.retain(|u| modules.contains(u));
    }
    graph
}

#[test]
fn the_library_has_no_import_circles() {
    let graph = imports();
    assert!(graph.contains_key("reveal") && graph.contains_key("probe"));
    // Peel floors: a module goes on the lowest floor above everything it
    // uses. What cannot be placed sits on a circle.
    let mut floor_of: BTreeMap<&str, usize> = BTreeMap::new();
    let mut floors: Vec<Vec<&str>> = Vec::new();
    while floor_of.len() < graph.len() {
        let next: Vec<&str> = graph
            .iter()
            .filter(|(m, _)| !floor_of.contains_key(m.as_str()))
            .filter(|(_, uses)| uses.iter().all(|u| floor_of.contains_key(u.as_str())))
            .map(|(m, _)| m.as_str())
            .collect();
        if next.is_empty() {
            let stuck: Vec<String> = graph
                .iter()
                .filter(|(m, _)| !floor_of.contains_key(m.as_str()))
                .map(|(m, uses)| {
                    let waiting: Vec<&str> = uses
                        .iter()
                        .filter(|u| !floor_of.contains_key(u.as_str()))
                        .map(String::as_str)
                        .collect();
                    format!("{m} -> {}", waiting.join(", "))
                })
                .collect();
            panic!(
                "import circle among these modules:\n  {}",
                stuck.join("\n  ")
            );
        }
        for m in &next {
            floor_of.insert(m, floors.len());
        }
        floors.push(next);
    }
    for (k, modules) in floors.iter().enumerate() {
        println!("floor {k}: {}", modules.join(", "));
    }
}
