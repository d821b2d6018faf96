//! Fuzz target: any datagram parses without panicking, and whatever parses re-emits to exactly
//! the same bytes (`tcpnc_wire::fuzzing::parse_any`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tcpnc_wire::fuzzing::parse_any(data);
});
