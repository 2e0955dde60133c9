#![no_main]
//! One or two archetype files (split at the first NUL byte): load, spawn, edit, reload, save.

libfuzzer_sys::fuzz_target!(|data: &[u8]| archetype_engine_fuzz::archetype(data));
