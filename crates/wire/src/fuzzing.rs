//! Fuzzing driver, shared by the cargo-fuzz target (`fuzz/fuzz_targets/parse_frame.rs`) and a
//! proptest in the normal test suite. Not part of the stable API.

use crate::{
    AckPacket, Coefficients, DataPacket, DataRepr, FrameRepr, KeepalivePacket, RangeForm, SeqRange,
    WireError,
};

/// Parses `data` as a frame; the parse must not panic, and if it succeeds, re-emitting the
/// representation must reproduce `data` exactly and the zero-copy views must agree with it.
/// A DATA frame parsed into a reused header ([`DataRepr::parse_into`]) gives what
/// [`DataRepr::parse`] gives, the same error included.
///
/// # Panics
/// When one of those properties is violated (that is the point).
pub fn parse_any(data: &[u8]) {
    parse_into_agrees(&DataPacket::new_unchecked(data));
    let Ok(repr) = FrameRepr::parse(data) else {
        return;
    };
    assert_eq!(
        repr.buffer_len(),
        data.len(),
        "buffer_len differs from input length"
    );
    let out = match repr.to_vec() {
        Ok(out) => out,
        Err(e) => panic!("re-emit of a parsed frame failed: {e}"),
    };
    assert_eq!(out, data, "re-emit differs from the parsed input");
    let mut zeroed = vec![0u8; data.len()];
    assert_eq!(repr.emit(&mut zeroed).ok(), Some(data.len()), "emit fails");
    assert_eq!(zeroed, data, "emit differs from the parsed input");
    let mut dirty = vec![0xA5; 7];
    assert_eq!(repr.encode_into(&mut dirty).ok(), Some(data.len()));
    assert_eq!(
        dirty, data,
        "encode_into a used vector differs from the input"
    );
    match &repr {
        FrameRepr::Data { header, payload } => {
            let p = match DataPacket::new_checked(data) {
                Ok(p) => p,
                Err(e) => panic!("view rejects a parsed DATA frame: {e}"),
            };
            assert_eq!(p.header_len(), header.buffer_len());
            assert_eq!(p.payload(), *payload);
            assert_eq!(p.count(), header.ranges.len());
            assert!(p.ranges().eq(header.ranges.iter().copied()));
            assert_eq!(p.flow(), header.flow);
            assert_eq!(p.pid(), header.pid);
        }
        FrameRepr::Ack(a) => {
            let p = match AckPacket::new_checked(data) {
                Ok(p) => p,
                Err(e) => panic!("view rejects a parsed ACK frame: {e}"),
            };
            assert_eq!(p.flags(), a.flags());
            assert_eq!(p.flow(), a.flow);
            assert_eq!(p.ack(), a.ack);
        }
        FrameRepr::Keepalive(k) => {
            let p = match KeepalivePacket::new_checked(data) {
                Ok(p) => p,
                Err(e) => panic!("view rejects a parsed KEEPALIVE frame: {e}"),
            };
            assert_eq!(p.nonce(), k.nonce);
        }
        FrameRepr::Bypass(b) => assert_eq!(b.packet(), &data[2..]),
    }
}

/// `parse_into` over a header left from another frame (explicit coefficients, three ranges)
/// equals `parse`.
fn parse_into_agrees(p: &DataPacket<&[u8]>) {
    let mut reused = DataRepr {
        ranges: vec![SeqRange { start: 1, end: 2 }; 3],
        coefficients: Coefficients::Explicit(vec![7; 3]),
        ..DataRepr::default()
    };
    let into = DataRepr::parse_into(p, &mut reused);
    let parsed = DataRepr::parse(p);
    // The one-pass canonical check agrees with the ranges' own form (`RangeForm::of`).
    if matches!(parsed, Ok(_) | Err(WireError::NonCanonical)) {
        let ranges: Vec<SeqRange> = p.ranges().collect();
        let canonical = RangeForm::of(&ranges) == p.range_form();
        assert_eq!(parsed.is_ok(), canonical, "canonical-form verdict differs");
    }
    match parsed {
        Ok(h) => {
            assert_eq!(into, Ok(()), "parse_into fails where parse succeeds");
            assert_eq!(reused, h, "parse_into differs from parse");
        }
        Err(e) => assert_eq!(into, Err(e), "parse_into and parse fail differently"),
    }
}
