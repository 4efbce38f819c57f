//! The rule that keeps a Rust panic from aborting Node: every function the binding
//! exports catches unwinds (`#[napi(catch_unwind)]`), so a bug fails one JS call with an
//! error naming it. Async work is covered by napi itself, which rejects the promise of a
//! future that panics.

use std::fs;
use std::path::Path;

/// Every `#[napi...]` attribute that exports a function, with where it is.
fn exported_functions(source: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let attribute = line.trim();
        if !attribute.starts_with("#[napi") {
            continue;
        }
        let item = lines[at + 1..]
            .iter()
            .map(|l| l.trim())
            .find(|l| !l.starts_with("#[") && !l.starts_with("///"));
        if item.is_some_and(|item| item.split_whitespace().any(|word| word == "fn")) {
            found.push((at + 1, attribute));
        }
    }
    found
}

fn binding_sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            binding_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_exported_function_catches_panics() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.join("binding.rs")];
    binding_sources(&src.join("binding"), &mut files);
    let mut exported = 0;
    let mut unguarded = Vec::new();
    for file in files {
        let source =
            fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (line, attribute) in exported_functions(&source) {
            exported += 1;
            if !attribute.contains("catch_unwind") {
                unguarded.push(format!("{}:{line}: {attribute}", file.display()));
            }
        }
    }
    assert!(exported > 20, "found only {exported} exported functions");
    assert!(
        unguarded.is_empty(),
        "exported without #[napi(catch_unwind)]:\n{}",
        unguarded.join("\n")
    );
}

#[test]
fn panics_unwind_in_every_profile() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let manifest = fs::read_to_string(manifest).expect("Cargo.toml");
    let aborts = manifest
        .lines()
        .filter(|line| line.split('#').next().is_some_and(|l| l.contains("panic")))
        .any(|line| line.contains("abort"));
    assert!(
        !aborts,
        "a profile sets panic = \"abort\": catch_unwind cannot work"
    );
}
