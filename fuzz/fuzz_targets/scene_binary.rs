#![no_main]
//! A binary scene: the input is what follows the magic bytes (prepended here, so mutations
//! are not wasted on the JSON path). The default load and check mode agree; if it loads,
//! load -> save -> load -> save is stable.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut bytes = archetype_engine_fuzz::BINARY_MAGIC.to_vec();
    bytes.extend_from_slice(data);
    archetype_engine_fuzz::scene(&bytes);
});
