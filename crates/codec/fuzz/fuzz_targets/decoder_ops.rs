//! Drives the decoder (with an encoder, a lossy reordering network and raw, hostile
//! combinations) through arbitrary operations; see `tcpnc_codec::fuzzing::decoder_ops`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcpnc_codec::fuzzing::decoder_ops(data);
});
