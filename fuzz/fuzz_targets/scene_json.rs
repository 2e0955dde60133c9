#![no_main]
//! A JSON scene (any bytes): the default load and check mode agree; if it loads,
//! load -> save -> load -> save is stable.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    archetype_engine_fuzz::scene(data);
});
