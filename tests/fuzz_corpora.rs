//! Replays the fuzz corpora (`fuzz/corpus/<target>/`) through the same entry points the
//! fuzz targets call, so that every input found once is checked again by `cargo test`.
#![cfg(target_os = "linux")]

use std::fs;
use std::path::Path;

use toolnexus::fuzzing::{TARGETS, run};

#[test]
fn every_corpus_input_passes_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    for target in TARGETS {
        let dir = root.join(target);
        let mut inputs = 0;
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("an entry").path();
            let data = fs::read(&path).expect("readable");
            run(target, &data);
            inputs += 1;
        }
        assert!(inputs > 0, "the {target} corpus is empty");
    }
}
