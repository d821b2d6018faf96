//! Fuzzing drivers, shared by the cargo-fuzz targets (`crates/codec/fuzz`) and a proptest in
//! the normal test suite. Not part of the stable API.
//!
//! [`decoder_ops`] interprets arbitrary bytes as a sequence of operations on an encoder, a lossy
//! reordering "network" and a decoder, plus raw combinations with arbitrary indices and
//! coefficients (honest payloads) and garbage payloads, and asserts the decoder's invariants
//! after every step. It panics only when an invariant is broken.

use std::collections::BTreeSet;

use crate::{
    CodingScheme, Coefficients, DecodeError, Decoder, DecoderConfig, EmissionKind, Encoder,
    EncoderConfig, Outcome, SymbolState, coefficients_from_seed,
};

const MAX_TRUE_LEN: usize = 40;

/// The symbol with index `index`: a deterministic pseudo-random string of 0..=40 bytes, defined
/// for every `u64`, so any combination has a true payload.
fn true_symbol(index: u64) -> Vec<u8> {
    let mut rng = crate::SplitMix64::new(index ^ 0xA5A5_5A5A_0F0F_F0F0);
    let len = (rng.next_u64() % (MAX_TRUE_LEN as u64 + 1)) as usize;
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// The honest payload of `Σ coefs[k] · symbol[first + k]` (indices wrap; the decoder rejects
/// overflowing ones before looking at the payload).
fn true_combination(first: u64, coefs: &[u8]) -> Vec<u8> {
    let symbols: Vec<Vec<u8>> = (0..coefs.len() as u64)
        .map(|k| true_symbol(first.wrapping_add(k)))
        .collect();
    let len = symbols.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = vec![0u8; len];
    for (symbol, &c) in symbols.iter().zip(coefs) {
        tcpnc_field::mul_add(&mut out, symbol, c);
    }
    out
}

struct Input<'a> {
    data: &'a [u8],
}

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        let (&first, rest) = self.data.split_first().unwrap_or((&0, &[]));
        self.data = rest;
        first
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | (u64::from(self.u32()) << 32)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }
}

struct Packet {
    first: u64,
    coefs: Vec<u8>,
    payload: Vec<u8>,
}

struct Harness {
    decoder: Decoder,
    /// Set once a garbage payload was accepted: decoded data can no longer be checked.
    tainted: bool,
    polled: BTreeSet<u64>,
    decoded: BTreeSet<u64>,
    last_first_unseen: u64,
}

impl Harness {
    fn receive(&mut self, first: u64, coefs: &[u8], payload: &[u8], honest: bool) {
        let before = self.snapshot();
        let result = self.decoder.receive(first, coefs, payload);
        self.check_receipt(before, result, honest);
    }

    fn snapshot(&self) -> (usize, u64, u64, u64) {
        let d = &self.decoder;
        (d.rank(), d.first_unseen(), d.base(), d.end_index())
    }

    fn check_receipt(
        &mut self,
        before: (usize, u64, u64, u64),
        result: Result<crate::Receipt, DecodeError>,
        honest: bool,
    ) {
        match result {
            Err(_) => assert_eq!(self.snapshot(), before, "an error changed the decoder"),
            Ok(receipt) => {
                assert_eq!(receipt.first_unseen, self.decoder.first_unseen());
                if receipt.outcome == Outcome::Innovative {
                    assert_eq!(self.decoder.rank(), before.0 + 1);
                    let seen = receipt.newly_seen.expect("innovative => newly seen");
                    assert!(seen >= before.2);
                    assert!(matches!(
                        self.decoder.state(seen),
                        SymbolState::Seen | SymbolState::Decoded
                    ));
                    if !honest {
                        // Garbage now sits in a row (or a decoded symbol): stop checking data.
                        self.tainted = true;
                    }
                } else {
                    assert_eq!(
                        self.snapshot(),
                        before,
                        "a useless combination changed state"
                    );
                    assert_eq!((receipt.newly_seen, receipt.newly_decoded), (None, 0));
                }
            }
        }
        self.check_invariants();
    }

    fn check_invariants(&mut self) {
        let d = &self.decoder;
        let config = *d.config();
        let (base, end) = (d.base(), d.end_index());
        assert!(end - base <= config.max_span);
        assert!(d.undecoded_rows() <= config.max_rows);
        let states: Vec<SymbolState> = (base..end).map(|i| d.state(i)).collect();
        let seen = states.iter().filter(|s| **s != SymbolState::Unseen).count();
        assert_eq!(d.rank(), seen, "rank == number of seen indices");
        let first_unseen = states
            .iter()
            .position(|s| *s == SymbolState::Unseen)
            .map_or(end, |k| base + k as u64);
        assert_eq!(d.first_unseen(), first_unseen);
        assert!(
            first_unseen >= self.last_first_unseen,
            "the ACK never goes back"
        );
        self.last_first_unseen = first_unseen;
        for &index in self.decoded.range(base..) {
            assert_eq!(
                d.state(index),
                SymbolState::Decoded,
                "decoded stays decoded"
            );
        }
        while let Some((index, symbol)) = self.decoder.poll_decoded() {
            assert!(self.polled.insert(index), "index {index} polled twice");
            self.decoded.insert(index);
            if !self.tainted {
                let truth = true_symbol(index);
                assert!(symbol.len() >= truth.len(), "decoded {index} too short");
                assert_eq!(
                    &symbol[..truth.len()],
                    truth.as_slice(),
                    "decoded {index} wrong"
                );
                assert!(symbol[truth.len()..].iter().all(|&b| b == 0), "bad padding");
            }
        }
    }
}

/// Runs the operations encoded in `data`; panics only on a broken invariant.
pub fn decoder_ops(data: &[u8]) {
    let mut input = Input { data };
    let (mut encoder, mut h) = decoder_setup(&mut input);
    let mut network: Vec<Packet> = Vec::new();
    let mut out = Vec::new();
    while !input.data.is_empty() {
        match input.byte() % 11 {
            0 => {
                let symbol = true_symbol(encoder.end_index());
                let _ = encoder.push(&symbol);
            }
            1 => network.extend(next_emission(&mut encoder, &mut input, &mut out)),
            2 => network.extend(explicit_combination(&mut encoder, &mut input, &mut out)),
            op @ 3..=5 if !network.is_empty() => {
                let at = usize::from(input.byte()) % network.len();
                match op {
                    3 => {
                        let packet = network.swap_remove(at);
                        h.receive(packet.first, &packet.coefs, &packet.payload, true);
                    }
                    4 => {
                        let packet = &network[at];
                        h.receive(packet.first, &packet.coefs, &packet.payload, true);
                    }
                    _ => drop(network.swap_remove(at)),
                }
            }
            6 => {
                let back = u64::from(input.byte() % 3);
                encoder.drop_below(h.decoder.first_unseen().saturating_sub(back));
            }
            7 => {
                let before = h.decoder.base();
                let dropped = h.decoder.drop_below(before + u64::from(input.byte() % 8));
                assert!(
                    dropped.decoded + dropped.undecoded <= (h.decoder.base() - before) as usize
                );
                h.check_invariants();
            }
            8 => {
                let first = raw_index(&mut input, h.decoder.base());
                let coefs = {
                    let n = usize::from(input.byte() % 24);
                    input.bytes(n)
                };
                let payload = true_combination(first, &coefs);
                h.receive(first, &coefs, &payload, true);
            }
            9 => {
                let first = raw_index(&mut input, h.decoder.base());
                let n = usize::from(input.byte() % 24);
                let coefs = input.bytes(n);
                let m = usize::from(input.byte() % 100);
                let payload = input.bytes(m);
                h.receive(first, &coefs, &payload, false);
            }
            _ => seeded_raw(&mut h, &mut input),
        }
    }
}

/// The encoder and the checked decoder of one fuzz case, from its first bytes.
fn decoder_setup(input: &mut Input<'_>) -> (Encoder, Harness) {
    let mode = if input.byte() & 1 == 0 {
        CodingScheme::Dense
    } else {
        CodingScheme::Systematic
    };
    let encoder = Encoder::new(EncoderConfig {
        mode,
        max_symbols: 1 + usize::from(input.byte() % 64),
        max_symbol_len: MAX_TRUE_LEN,
    });
    let config = DecoderConfig {
        max_rows: usize::from(input.byte() % 40),
        max_span: 1 + u64::from(input.byte() % 64),
        max_symbol_len: 2 * MAX_TRUE_LEN,
    };
    let h = Harness {
        decoder: Decoder::new(config),
        tainted: false,
        polled: BTreeSet::new(),
        decoded: BTreeSet::new(),
        last_first_unseen: 0,
    };
    (encoder, h)
}

/// The encoder's next emission (window and seed from the input), as a packet on the network.
fn next_emission(
    encoder: &mut Encoder,
    input: &mut Input<'_>,
    out: &mut Vec<u8>,
) -> Option<Packet> {
    let (window, seed) = (1 + usize::from(input.byte() % 16), input.u32());
    let emission = encoder.next_emission(window, seed, out).ok()?;
    let count = (emission.range.end - emission.range.start) as usize;
    let mut coefs = vec![1u8; count];
    if let EmissionKind::Combination { seed } = emission.kind {
        coefficients_from_seed(seed, &mut coefs);
    }
    Some(Packet {
        first: emission.range.start,
        coefs,
        payload: out.clone(),
    })
}

/// A combination with explicit coefficients over a range near the encoder's start.
fn explicit_combination(
    encoder: &mut Encoder,
    input: &mut Input<'_>,
    out: &mut Vec<u8>,
) -> Option<Packet> {
    let start = encoder.start_index() + u64::from(input.byte() % 8);
    let len = 1 + u64::from(input.byte() % 8);
    let coefs = input.bytes(len as usize);
    encoder
        .encode(start..start + len, Coefficients::Explicit(&coefs), out)
        .ok()?;
    Some(Packet {
        first: start,
        coefs,
        payload: out.clone(),
    })
}

/// A seeded combination at a raw index, of any count (oversized ones must be refused).
fn seeded_raw(h: &mut Harness, input: &mut Input<'_>) {
    let first = raw_index(input, h.decoder.base());
    let count = match input.byte() % 4 {
        0 => usize::MAX - usize::from(input.byte()),
        _ => usize::from(input.byte() % 70),
    };
    let seed = input.u32();
    let before = h.snapshot();
    if count > 64 {
        let result = h.decoder.receive_seeded(first, count, seed, &[]);
        assert!(matches!(
            result,
            Err(DecodeError::SpanExceeded { .. } | DecodeError::IndexOverflow)
                | Ok(crate::Receipt {
                    outcome: Outcome::Stale,
                    ..
                })
        ));
        h.check_receipt(before, result, true);
    } else {
        let mut coefs = vec![0u8; count];
        coefficients_from_seed(seed, &mut coefs);
        let payload = true_combination(first, &coefs);
        let result = h.decoder.receive_seeded(first, count, seed, &payload);
        h.check_receipt(before, result, true);
    }
}

/// An index near the decoder's base, or (rarely) anywhere in `u64`.
fn raw_index(input: &mut Input<'_>, base: u64) -> u64 {
    match input.byte() % 8 {
        0 => input.u64(),
        1 => base.saturating_sub(u64::from(input.byte() % 4)),
        _ => base + u64::from(input.byte() % 48),
    }
}
