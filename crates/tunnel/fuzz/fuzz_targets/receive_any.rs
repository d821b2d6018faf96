//! Fuzz target: any datagram at a gateway with keys is dropped without panic, never answered
//! unless it is a valid initiation, and never yields a frame (`tcpnc_tunnel::fuzzing::receive_any`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcpnc_tunnel::fuzzing::receive_any(data);
});
