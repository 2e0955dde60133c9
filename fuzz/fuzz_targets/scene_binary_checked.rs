#![no_main]
//! A binary scene whose checksum is always right: the input is what follows the magic bytes,
//! without the checksum (the target prepends the magic and appends the checksum), so mutations
//! of formats 3 and 4 reach the reader instead of failing the checksum. The default load and
//! check mode agree; if it loads, load -> save -> load -> save is stable.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    archetype_engine_fuzz::scene(&archetype_engine_fuzz::checked_binary(data));
});
