//! Fuzz target: handshake messages with a valid mac1 and arbitrary Noise bodies reach the Noise
//! parser (`tcpnc_tunnel::fuzzing::handshake_any`): no panic, no answer, no frame.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcpnc_tunnel::fuzzing::handshake_any(data);
});
