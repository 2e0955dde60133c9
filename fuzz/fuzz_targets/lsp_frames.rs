#![no_main]
//! What a client writes to `archetool lsp` (any bytes): the framed reader keeps every body
//! within its limit, and neither it nor the server's loop panics.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    archetype_engine_fuzz::lsp_frames(data);
});
