#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| toolnexus::fuzzing::run("oauth_discovery", data));
