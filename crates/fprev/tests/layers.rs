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
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, code) in module_files() {
        let module = path[0].clone();
        let mut named = Vec::new();
        for (at, _) in code.match_indices("crate::") {
            expand(&code[at + "crate::".len()..], &[], &mut named);
        }
        let uses = graph.entry(module.clone()).or_default();
        for top in named.into_iter().filter_map(|p| p.into_iter().next()) {
            if top != module {
                uses.insert(top);
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

/// A module's path from the crate root: `workflow::reveal` for
/// `src/workflow/reveal.rs`, `workflow` for `src/workflow.rs`.
fn module_path(relative: &Path) -> Vec<String> {
    relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect()
}

/// A file's code: each line up to its comment, joined.
fn code(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths a path expression starting at `s` names, each as segments
/// after `prefix`: `a::{b, c::d}` names `a::b` and `a::c::d`; `X as Y`
/// names `X`.
fn expand(s: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    let mut rest = s.trim_start();
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' | ',' if depth == 1 => {
                        expand(&group[start..i], &path, out);
                        start = i + 1;
                        if c == '}' {
                            return;
                        }
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            return;
        }
        let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
        if name.is_empty() {
            break;
        }
        rest = &rest[name.len()..];
        if name != "self" {
            path.push(name);
        }
        match rest.strip_prefix("::") {
            Some(more) => rest = more.trim_start(),
            None => break,
        }
    }
    out.push(path);
}

/// Every module file, its path, and its code.
fn module_files() -> Vec<(Vec<String>, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let module = module_path(path.strip_prefix(&src).unwrap());
                if module != ["lib"] {
                    files.push((module, code(&std::fs::read_to_string(&path).unwrap())));
                }
            }
        }
    }
    files
}

/// The statements of `code` that re-export (`pub use …;`).
fn reexports(code: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for start in ["pub use ", "pub(crate) use ", "pub(super) use "] {
        for (at, _) in code.match_indices(start) {
            let body = &code[at + start.len()..];
            found.push(&body[..body.find(';').unwrap_or(body.len())]);
        }
    }
    found
}

/// Every submodule and the submodules its code names (through `crate::`,
/// `super::`, `self::` or a child's name), an item a module re-exports
/// from its child counted as the child's; re-exports themselves are not
/// uses (they make a module the face of its children).
fn submodule_imports() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files = module_files();
    let known: BTreeSet<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
    // Items re-exported from a child: (module, name) -> the path it names.
    let mut reexported: BTreeMap<(Vec<String>, String), Vec<String>> = BTreeMap::new();
    for (module, code) in &files {
        for statement in reexports(code) {
            let mut paths = Vec::new();
            expand(statement, module, &mut paths);
            for p in paths {
                if let Some(name) = p.last() {
                    reexported.insert((module.clone(), name.clone()), p.clone());
                }
            }
        }
    }
    // The module a path names: its longest known prefix, followed through
    // re-exports.
    let resolve = |path: &[String]| -> Option<Vec<String>> {
        let mut path = path.to_vec();
        for _ in 0..8 {
            let at = (1..=path.len())
                .rev()
                .find(|&k| known.contains(&path[..k]))?;
            let module = path[..at].to_vec();
            match path
                .get(at)
                .and_then(|n| reexported.get(&(module.clone(), n.clone())))
            {
                Some(target) if target[..] != path[..] => {
                    let mut next = target.clone();
                    next.extend(path[at + 1..].iter().cloned());
                    path = next;
                }
                _ => return Some(module),
            }
        }
        None
    };
    let mut graph = BTreeMap::new();
    for (module, code) in &files {
        let mut own = code.clone();
        for statement in reexports(code) {
            own = own.replace(statement, "");
        }
        let mut paths = Vec::new();
        let mut parent = module.clone();
        parent.pop();
        for (at, _) in own.match_indices("crate::") {
            expand(&own[at + "crate::".len()..], &[], &mut paths);
        }
        for (at, _) in own.match_indices("super::") {
            if own[..at].ends_with("super::") {
                continue;
            }
            let mut base = parent.clone();
            let mut rest = &own[at + "super::".len()..];
            while let Some(more) = rest.strip_prefix("super::") {
                base.pop();
                rest = more;
            }
            expand(rest, &base, &mut paths);
        }
        // A child named bare (`survey::run(…)`, `use run::Run`).
        for (at, _) in own.match_indices("::") {
            let before = &own[..at];
            let name: String = before
                .chars()
                .rev()
                .take_while(|c| is_ident(*c))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let preceded = before[..before.len() - name.len()].chars().next_back();
            if name.is_empty() || preceded.is_some_and(|c| c == ':' || is_ident(c)) {
                continue;
            }
            let mut child = module.clone();
            child.push(name.clone());
            if known.contains(&child) {
                expand(&own[at - name.len()..], module, &mut paths);
            }
        }
        // A submodule names its ancestors' own items (the types its parent
        // shares among its children): the parent's context, not a floor.
        let uses: BTreeSet<Vec<String>> = paths
            .iter()
            .filter_map(|p| resolve(p))
            .filter(|m| !module.starts_with(m))
            .collect();
        graph.insert(module.clone(), uses);
    }
    graph
}

/// The modules `from` reaches through `graph`'s imports.
fn reach<'g>(
    graph: &'g BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    from: &'g Vec<String>,
) -> BTreeSet<&'g Vec<String>> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from];
    while let Some(m) = stack.pop() {
        for u in graph.get(m).into_iter().flatten() {
            if seen.insert(u) {
                stack.push(u);
            }
        }
    }
    seen
}

#[test]
fn submodules_have_no_import_circles() {
    let graph = submodule_imports();
    let workflow_reveal = vec!["workflow".to_string(), "reveal".to_string()];
    assert!(graph.contains_key(&workflow_reveal), "{:?}", graph.keys());
    // A module on a circle reaches itself; the circle is the modules it
    // reaches that reach it back.
    let reaches: BTreeMap<&Vec<String>, BTreeSet<&Vec<String>>> =
        graph.keys().map(|m| (m, reach(&graph, m))).collect();
    let mut circles: BTreeSet<Vec<String>> = BTreeSet::new();
    for (m, seen) in &reaches {
        if seen.contains(m) {
            let circle: Vec<String> = seen
                .iter()
                .filter(|o| reaches[*o].contains(m))
                .map(|o| o.join("::"))
                .collect();
            circles.insert(circle);
        }
    }
    assert!(
        circles.is_empty(),
        "import circles among submodules:\n  {}",
        circles
            .iter()
            .map(|c| c.join(" <-> "))
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}
