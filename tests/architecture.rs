//! The crate's layering, checked on its source: reads `src/**/*.rs`, builds
//! the graph of which file uses which, and fails naming what breaks a rule.
//!
//! A file F uses a file G when F names an item G defines: through a `use`
//! (braces expanded, `pub use` re-exports followed to the file that defines
//! the item) or an inline path (`crate::a::b::X`, `super::X`, `self::X`,
//! `child::X` for a module F declares). `mod` declarations are not uses;
//! comments, string literals and `#[cfg(test)]` modules are left out.
//!
//! The rules:
//! - no cycle of uses between files ([`files_use_each_other_in_no_cycle`]);
//! - the hardware files of `src/sim/` use no other part of the simulation
//!   than hardware, and the platform no engine, workload, assembly or top
//!   ([`hardware_and_platform_look_only_down`]);
//! - `src/engine/` uses nothing of the crate but `src/units.rs`
//!   ([`the_engine_knows_only_units`]);
//! - only `src/loader/` uses the `toml` crate ([`only_the_loader_reads_toml`]);
//! - only the reporting code writes files ([`only_the_reporting_code_writes_files`]).
//!
//! The cycle check covers every file: [`ALLOWED`], the list of edges it
//! would leave out, is empty.
//!
//! Each check was seen to fail by breaking its rule on purpose once (the
//! test binary reads the sources when it runs): `use super::system::System;`
//! in `src/sim/meter.rs` (a cycle, and hardware looking up), `use
//! super::EngineEv;` in `src/sim/engines/raw_dma.rs` (an engine naming the
//! list that names it), `use crate::sim::engines::EngineEv;` in
//! `src/sim/cpu.rs`, `use
//! crate::sim::system::Ev;` in `src/sim/platform/state.rs`, `use
//! crate::sim::meter::BusyMeter;` in `src/engine/queue.rs`, `toml::from_str`
//! in `src/sim/config.rs`, `std::fs::write` in `src/sim/run.rs`, and an
//! `OpenOptions` opened to write in `src/loader/mod.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Edges left out of the cycle check: none. A file that needs what a
/// module's file shares with its children takes it from a file of its own
/// below both (as the engines take `sim/engines/seam.rs` and the loader's
/// files `loader/input.rs`), never from the file that declares and lists
/// them. An edge listed here is printed on every run and fails the check
/// once it no longer exists. Each is (from, to, why), paths below `src/`.
const ALLOWED: &[(&str, &str, &str)] = &[];

/// One source file: its module path and its text without comments, strings
/// and test modules.
struct File {
    /// Path below `src/`, e.g. `sim/bus.rs`.
    rel: String,
    /// Module path from the crate root, e.g. `["sim", "bus"]`.
    module: Vec<String>,
    /// Stripped text.
    code: String,
}

/// The crate's library source: its files and its module tree.
struct Crate {
    files: Vec<File>,
    /// Module path to index in `files`.
    modules: BTreeMap<Vec<String>, usize>,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("src/ reads")
        .map(|e| e.expect("an entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `text` without comments, string and char literals (each replaced by a
/// space, `""` for a string) and without `#[cfg(test)]` modules.
fn strip(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&b, i) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'), else a lifetime.
            if next == Some('\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
                out.push(' ');
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push(' ');
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    drop_test_modules(&out)
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// `code` without the modules marked `#[cfg(test)]`.
fn drop_test_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let is_mod = trimmed.starts_with("mod ") || trimmed.starts_with("pub mod ");
        let Some(open) = after.find(['{', ';']) else {
            rest = after;
            continue;
        };
        if !is_mod || after.as_bytes()[open] == b';' {
            // A test-only item other than a module (or `mod x;`): dropped
            // up to its end the same way.
            if after.as_bytes()[open] == b';' {
                rest = &after[open + 1..];
                continue;
            }
        }
        let mut depth = 0;
        let mut end = after.len();
        for (k, ch) in after[open..].char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

impl Crate {
    fn load() -> Crate {
        let mut files = Vec::new();
        for (rel, code) in all_code() {
            // The binary is a crate of its own.
            if rel == "main.rs" || rel == "fit_cli.rs" || rel.starts_with("bin/") {
                continue;
            }
            let mut module: Vec<String> = rel
                .trim_end_matches(".rs")
                .split('/')
                .map(str::to_string)
                .collect();
            if module.last().is_some_and(|m| m == "mod" || m == "lib") {
                module.pop();
            }
            files.push(File { rel, module, code });
        }
        let modules = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.module.clone(), i))
            .collect();
        Crate { files, modules }
    }

    /// The index of the file of module `m`, if it is a file.
    fn file_of(&self, m: &[String]) -> Option<usize> {
        self.modules.get(m).copied()
    }

    /// The file that defines what `path` names, seen from module `from`
    /// (`path` starts with `crate`, `super`, `self` or a child module).
    fn resolve(&self, from: &[String], path: &[String], depth: usize) -> Option<usize> {
        let mut module: Vec<String> = from.to_vec();
        let mut segs = path.iter().peekable();
        match segs.peek().map(|s| s.as_str()) {
            Some("crate") => {
                module.clear();
                segs.next();
            }
            Some("self") => {
                segs.next();
            }
            Some("super") => {
                while segs.peek().map(|s| s.as_str()) == Some("super") {
                    module.pop();
                    segs.next();
                }
            }
            _ => {}
        }
        for seg in segs {
            let mut child = module.clone();
            child.push(seg.clone());
            if self.file_of(&child).is_some() {
                module = child;
                continue;
            }
            // An item of `module`: defined there, or re-exported from elsewhere.
            let file = self.file_of(&module)?;
            if depth < 8 {
                if let Some(target) = self.reexport(file, seg) {
                    let m = self.files[file].module.clone();
                    if let Some(g) = self.resolve(&m, &target, depth + 1) {
                        return Some(g);
                    }
                }
            }
            return Some(file);
        }
        self.file_of(&module)
    }

    /// The path file `file` re-exports as `name` (`pub use a::b::name;`), if any.
    fn reexport(&self, file: usize, name: &str) -> Option<Vec<String>> {
        for (public, path) in uses(&self.files[file].code) {
            if !public {
                continue;
            }
            match path.last().map(|s| s.as_str()) {
                Some(last) if last == name => return Some(path),
                Some("*") => {
                    let m = &self.files[file].module;
                    let target = self.resolve(m, &path[..path.len() - 1], 0)?;
                    if defines(&self.files[target].code, name) {
                        let mut p = path.clone();
                        p.pop();
                        p.push(name.to_string());
                        return Some(p);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// Child modules file `f` declares.
    fn children(&self, f: usize) -> BTreeSet<String> {
        let m = &self.files[f].module;
        self.modules
            .keys()
            .filter(|k| k.len() == m.len() + 1 && k.starts_with(m))
            .map(|k| k[m.len()].clone())
            .collect()
    }

    /// The files each file uses, with an example of the path that uses it.
    fn edges(&self) -> BTreeMap<usize, BTreeMap<usize, String>> {
        let mut all = BTreeMap::new();
        for (i, f) in self.files.iter().enumerate() {
            let children = self.children(i);
            let mut out: BTreeMap<usize, String> = BTreeMap::new();
            let mut add = |path: Vec<String>| {
                let starts = path.first().map(|s| s.as_str()).unwrap_or("");
                if !matches!(starts, "crate" | "super" | "self") && !children.contains(starts) {
                    return;
                }
                let path: Vec<String> = path.into_iter().filter(|s| s != "*").collect();
                if let Some(g) = self.resolve(&f.module, &path, 0) {
                    if g != i {
                        out.entry(g).or_insert_with(|| path.join("::"));
                    }
                }
            };
            for (_, path) in uses(&f.code) {
                add(path);
            }
            for path in inline_paths(&without_uses(&f.code)) {
                add(path);
            }
            all.insert(i, out);
        }
        all
    }

    fn index(&self, rel: &str) -> usize {
        self.files
            .iter()
            .position(|f| f.rel == rel)
            .unwrap_or_else(|| panic!("no file src/{rel}"))
    }
}

/// Whether `code` defines an item `name` (a type, function, trait, constant
/// or module).
fn defines(code: &str, name: &str) -> bool {
    [
        "struct ", "enum ", "fn ", "trait ", "type ", "const ", "static ", "mod ", "union ",
    ]
    .iter()
    .any(|k| {
        code.match_indices(&format!("{k}{name}")).any(|(at, m)| {
            let after = code[at + m.len()..].chars().next();
            !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    })
}

/// Every `use` of `code`, braces expanded: (whether `pub`, path). An alias
/// (`as`) keeps the path of what it names.
fn uses(code: &str) -> Vec<(bool, Vec<String>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(k) = code[at..].find("use ") {
        let start = at + k;
        at = start + 4;
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(end) = code[at..].find(';') else {
            break;
        };
        let tree = &code[at..at + end];
        let head = code[..start].trim_end();
        let public = head.ends_with("pub") || head.ends_with(')') && head.contains("pub(");
        let mut paths = Vec::new();
        expand(tree, &mut Vec::new(), &mut paths);
        out.extend(paths.into_iter().map(|p| (public, p)));
        at += end;
    }
    out
}

/// The paths of the use tree `tree` under `prefix`.
fn expand(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim().trim_start_matches("::");
    if let Some(open) = tree.find('{') {
        let head = &tree[..open];
        let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let n = prefix.len();
        prefix.extend(segments(head));
        // Split the body at top-level commas.
        let mut depth = 0;
        let mut last = 0;
        for (k, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&body[last..k], prefix, out);
                    last = k + 1;
                }
                _ => {}
            }
        }
        expand(&body[last..], prefix, out);
        prefix.truncate(n);
    } else {
        let path = tree.split(" as ").next().unwrap_or("").trim();
        if path.is_empty() {
            return;
        }
        let mut p = prefix.clone();
        p.extend(segments(path));
        // `use a::b::{self}` names module `a::b`.
        if p.last().is_some_and(|s| s == "self") {
            p.pop();
        }
        out.push(p);
    }
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// `code` without its `use` items (their paths are taken apart by [`uses`]).
fn without_uses(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut at = 0;
    while let Some(k) = code[at..].find("use ") {
        let start = at + k;
        let before = code[..start].chars().next_back();
        let end = code[start..]
            .find(';')
            .map_or(code.len(), |e| start + e + 1);
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            out.push_str(&code[at..start + 4]);
            at = start + 4;
            continue;
        }
        out.push_str(&code[at..start]);
        at = end;
    }
    out.push_str(&code[at..]);
    out
}

/// Every path of two segments or more written inline in `code` (not in a
/// `use`): `a::b::C` as `["a", "b", "C"]`; a path that continues a longer
/// one (`x::` before it) is not taken apart.
fn inline_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        if !is_ident(chars[i]) || (i > 0 && (is_ident(chars[i - 1]) || chars[i - 1] == ':')) {
            i += 1;
            continue;
        }
        let mut segs = Vec::new();
        let mut j = i;
        loop {
            let s = j;
            while j < chars.len() && is_ident(chars[j]) {
                j += 1;
            }
            if s == j {
                break;
            }
            segs.push(chars[s..j].iter().collect::<String>());
            if chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
                j += 2;
            } else {
                break;
            }
        }
        if segs.len() >= 2 {
            out.push(segs);
        }
        i = j.max(i + 1);
    }
    out
}

/// A cycle of the graph `edges` (a path of files that leads back to its
/// first), if any.
fn find_cycle(n: usize, edges: &BTreeMap<usize, BTreeSet<usize>>) -> Option<Vec<usize>> {
    // 0 unseen, 1 on the stack, 2 done.
    let mut state = vec![0u8; n];
    let mut stack = Vec::new();
    fn visit(
        v: usize,
        edges: &BTreeMap<usize, BTreeSet<usize>>,
        state: &mut [u8],
        stack: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        state[v] = 1;
        stack.push(v);
        for &w in edges.get(&v).into_iter().flatten() {
            if state[w] == 1 {
                let at = stack.iter().position(|&x| x == w).unwrap_or(0);
                let mut cycle = stack[at..].to_vec();
                cycle.push(w);
                return Some(cycle);
            }
            if state[w] == 0 {
                if let Some(c) = visit(w, edges, state, stack) {
                    return Some(c);
                }
            }
        }
        stack.pop();
        state[v] = 2;
        None
    }
    for v in 0..n {
        if state[v] == 0 {
            if let Some(c) = visit(v, edges, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

/// Breaking it: an edge back up from a hardware file, e.g.
/// `use super::system::System;` in `src/sim/meter.rs`, makes it fail with
/// the cycle it closes.
#[test]
fn files_use_each_other_in_no_cycle() {
    let krate = Crate::load();
    let all = krate.edges();
    let mut graph: BTreeMap<usize, BTreeSet<usize>> = all
        .iter()
        .map(|(&f, to)| (f, to.keys().copied().collect()))
        .collect();
    if !ALLOWED.is_empty() {
        println!("edges left out of the cycle check:");
    }
    for (from, to, why) in ALLOWED {
        println!("  src/{from} -> src/{to}: {why}");
        let (f, t) = (krate.index(from), krate.index(to));
        assert!(
            graph.entry(f).or_default().remove(&t),
            "src/{from} no longer uses src/{to}: take it off the list"
        );
    }
    let mut cycles = Vec::new();
    // Report every cycle, one at a time: each found has its last edge cut.
    while let Some(c) = find_cycle(krate.files.len(), &graph) {
        let names: Vec<String> = c
            .windows(2)
            .map(|w| format!("src/{} -> ({})", krate.files[w[0]].rel, all[&w[0]][&w[1]]))
            .collect();
        cycles.push(format!(
            "{} -> src/{}",
            names.join(" "),
            krate.files[c[c.len() - 1]].rel
        ));
        let (a, b) = (c[c.len() - 2], c[c.len() - 1]);
        graph.entry(a).or_default().remove(&b);
    }
    for c in &cycles {
        println!("cycle: {c}");
    }
    assert!(
        cycles.is_empty(),
        "{} cycles of uses between files",
        cycles.len()
    );
}

/// The hardware files of the simulation (each a component: its
/// configuration, state and event handling).
const HARDWARE: &[&str] = &[
    "sim/bus.rs",
    "sim/path.rs",
    "sim/cpu.rs",
    "sim/dma.rs",
    "sim/wire.rs",
    "sim/memory.rs",
    "sim/meter.rs",
    "sim/csma.rs",
    "sim/testbed.rs",
];

/// The files of the simulation a hardware file may use besides other
/// hardware, and those the platform may not.
fn sim_part(rel: &str) -> &'static str {
    if HARDWARE.contains(&rel) {
        "hardware"
    } else if rel.starts_with("sim/platform") {
        "platform"
    } else if rel == "sim/result.rs" {
        "result"
    } else if rel.starts_with("sim/") {
        "above the platform"
    } else {
        "outside the simulation"
    }
}

/// The uses of the crate's files that `forbidden(from, to)` forbids (paths
/// below `src/`), each as `src/from uses src/to (path)`.
fn forbidden_uses(forbidden: impl Fn(&str, &str) -> bool) -> Vec<String> {
    let krate = Crate::load();
    let mut bad = Vec::new();
    for (f, to) in krate.edges() {
        let from = &krate.files[f].rel;
        for (g, path) in to {
            let rel = &krate.files[g].rel;
            if forbidden(from, rel) {
                bad.push(format!("src/{from} uses src/{rel} ({path})"));
            }
        }
    }
    bad
}

/// Breaking it: `use crate::sim::engines::EngineEv;` in `src/sim/cpu.rs`,
/// or the top's `Ev` named in `src/sim/platform/`, makes it fail.
#[test]
fn hardware_and_platform_look_only_down() {
    let bad = forbidden_uses(|from, to| {
        matches!(
            (sim_part(from), sim_part(to)),
            ("hardware", "platform" | "result" | "above the platform")
                | ("platform", "above the platform")
        )
    });
    assert!(bad.is_empty(), "uses up the layers:\n{}", bad.join("\n"));
}

/// Breaking it: `use crate::sim::meter::BusyMeter;` in `src/engine/queue.rs`
/// makes it fail.
#[test]
fn the_engine_knows_only_units() {
    let bad = forbidden_uses(|from, to| {
        from.starts_with("engine/") && !to.starts_with("engine/") && to != "units.rs"
    });
    assert!(
        bad.is_empty(),
        "the engine uses the crate beyond units:\n{}",
        bad.join("\n")
    );
}

/// Every file of `src/` (the binary's too), stripped: (path below `src/`,
/// code).
fn all_code() -> Vec<(String, String)> {
    let src = src_dir();
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&src)
                .expect("below src")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&p).expect("a source file reads");
            (rel, strip(&text))
        })
        .collect()
}

/// Whether `code` names `word` as a whole word (no identifier character
/// before it, nor after it where `word` ends in one).
fn names(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + word.len()..].chars().next();
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        !(before.is_some_and(ident) || word.ends_with(ident) && after.is_some_and(ident))
    })
}

/// Breaking it: `toml::from_str` in `src/sim/config.rs` makes it fail.
#[test]
fn only_the_loader_reads_toml() {
    let bad: Vec<String> = all_code()
        .into_iter()
        .filter(|(rel, code)| !rel.starts_with("loader/") && names(code, "toml"))
        .map(|(rel, _)| format!("src/{rel}"))
        .collect();
    assert!(bad.is_empty(), "toml used outside the loader: {bad:?}");
}

/// The reporting code: the files that may write files.
const WRITERS: &[&str] = &["report.rs"];

/// Breaking it: `std::fs::write` in `src/sim/run.rs` makes it fail.
#[test]
fn only_the_reporting_code_writes_files() {
    let mut bad = Vec::new();
    for (rel, code) in all_code() {
        if WRITERS.contains(&rel.as_str()) {
            continue;
        }
        let mut why: Vec<&str> = [
            "fs::write",
            "File::create",
            "create_dir",
            "fs::rename",
            "fs::copy",
        ]
        .into_iter()
        .filter(|w| names(&code, w))
        .collect();
        // Options opened for writing (the loader opens them to read).
        for (at, _) in code.match_indices("OpenOptions") {
            let chain: String = code[at..].chars().take(400).collect();
            let chain = chain.split(';').next().unwrap_or("");
            if [
                ".write(true",
                ".append(true",
                ".create(true",
                ".create_new(true",
                ".truncate(true",
            ]
            .iter()
            .any(|w| chain.replace(' ', "").contains(w))
            {
                why.push("OpenOptions to write");
            }
        }
        if !why.is_empty() {
            bad.push(format!("src/{rel}: {why:?}"));
        }
    }
    assert!(
        bad.is_empty(),
        "files written outside the reporting code:\n{}",
        bad.join("\n")
    );
}
