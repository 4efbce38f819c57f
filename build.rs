fn main() {
    // Only the Node addon needs napi's linker setup; `cargo test` builds the core alone.
    #[cfg(feature = "node")]
    napi_build::setup();
}
