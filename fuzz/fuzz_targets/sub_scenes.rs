#![no_main]
//! Up to eight scene files (split at NUL bytes), the first placing the others: loaded by the
//! file rule and the limits, never reading outside the scenes directory.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    archetype_engine_fuzz::sub_scenes(data);
});
