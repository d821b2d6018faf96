//! Model-based tests: random sequences of encode / lose / duplicate / reorder / deliver / drop,
//! with the decoder checked after every step against a naive batch Gaussian-elimination oracle.

use proptest::prelude::*;
use tcpnc_codec::{
    CodingScheme, Coefficients, DecodeError, Decoder, DecoderConfig, EmissionKind, Encoder,
    EncoderConfig, Outcome, SymbolState, coefficients_from_seed,
};
use tcpnc_field::mul_reference as mul;

/// Indices the tests ever use.
const COLUMNS: usize = 64;
/// Longest symbol in the tests.
const MAX_LEN: usize = 24;

/// A row of the oracle: one coefficient per index `0..COLUMNS`, payload padded to `MAX_LEN`.
#[derive(Clone, Debug, PartialEq)]
struct Equation {
    coefs: Vec<u8>,
    payload: Vec<u8>,
}

fn inverse(a: u8) -> u8 {
    (1..=255u8).find(|&b| mul(a, b) == 1).expect("non-zero")
}

/// Plain batch Gauss-Jordan: reduced row echelon form, each pivot the row's first non-zero
/// column, rows sorted by pivot. Returns `(pivot, row)` pairs.
fn rref(equations: &[Equation]) -> Vec<(usize, Equation)> {
    let mut rows: Vec<Equation> = equations.to_vec();
    let mut result: Vec<(usize, Equation)> = Vec::new();
    for col in 0..COLUMNS {
        let Some(at) = rows.iter().position(|r| r.coefs[col] != 0) else {
            continue;
        };
        let mut pivot_row = rows.swap_remove(at);
        let scale = inverse(pivot_row.coefs[col]);
        for x in pivot_row
            .coefs
            .iter_mut()
            .chain(pivot_row.payload.iter_mut())
        {
            *x = mul(*x, scale);
        }
        for other in rows.iter_mut().chain(result.iter_mut().map(|(_, r)| r)) {
            let f = other.coefs[col];
            if f == 0 {
                continue;
            }
            for (x, y) in other.coefs.iter_mut().zip(&pivot_row.coefs) {
                *x ^= mul(f, *y);
            }
            for (x, y) in other.payload.iter_mut().zip(&pivot_row.payload) {
                *x ^= mul(f, *y);
            }
        }
        result.push((col, pivot_row));
    }
    result.sort_by_key(|(pivot, _)| *pivot);
    result
}

struct Oracle {
    basis: Vec<Equation>,
    base: u64,
    max_rows: usize,
    max_span: u64,
}

impl Oracle {
    fn reduced(&self) -> Vec<(usize, Equation)> {
        rref(&self.basis)
    }

    fn is_unit(row: &Equation, pivot: usize) -> bool {
        row.coefs
            .iter()
            .enumerate()
            .all(|(c, &v)| c == pivot || v == 0)
    }

    /// The expected result of receiving `(first, coefs, payload)`, applying it if accepted.
    fn receive(
        &mut self,
        first: u64,
        coefs: &[u8],
        payload: &[u8],
    ) -> Result<Outcome, DecodeError> {
        let Some(lead) = coefs.iter().position(|&c| c != 0) else {
            return Ok(Outcome::Redundant);
        };
        let trail = coefs.iter().rposition(|&c| c != 0).unwrap();
        let (lo, hi) = (first + lead as u64, first + trail as u64);
        if lo < self.base {
            return Ok(Outcome::Stale);
        }
        if hi - self.base >= self.max_span {
            return Err(DecodeError::SpanExceeded {
                index: hi,
                base: self.base,
                limit: self.max_span,
            });
        }
        let mut equation = Equation {
            coefs: vec![0; COLUMNS],
            payload: vec![0; MAX_LEN],
        };
        equation.coefs[first as usize..first as usize + coefs.len()].copy_from_slice(coefs);
        equation.payload[..payload.len()].copy_from_slice(payload);
        let before = self.reduced();
        let mut extended = self.basis.clone();
        extended.push(equation);
        let after = rref(&extended);
        if after.len() == before.len() {
            return Ok(Outcome::Redundant);
        }
        let undecoded = before.iter().filter(|(p, r)| !Self::is_unit(r, *p)).count();
        if undecoded >= self.max_rows {
            return Err(DecodeError::TooManyRows {
                limit: self.max_rows,
            });
        }
        self.basis = after.into_iter().map(|(_, r)| r).collect();
        Ok(Outcome::Innovative)
    }

    /// Knowledge after a drop: the known combinations that involve no index below `base`.
    fn drop_below(&mut self, base: u64) {
        self.base = self.base.max(base);
        let keep = self.base as usize;
        self.basis = self
            .reduced()
            .into_iter()
            .filter(|(p, _)| *p >= keep)
            .map(|(_, r)| r)
            .collect();
    }

    fn expected_state(&self, reduced: &[(usize, Equation)], index: usize) -> SymbolState {
        if (index as u64) < self.base {
            return SymbolState::Dropped;
        }
        match reduced.iter().find(|(p, _)| *p == index) {
            None => SymbolState::Unseen,
            Some((p, row)) if Self::is_unit(row, *p) => SymbolState::Decoded,
            Some(_) => SymbolState::Seen,
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Push,
    Emit { window: usize, seed: u32 },
    EncodeExplicit { offset: u64, coefs: Vec<u8> },
    Deliver(usize),
    Duplicate(usize),
    Lose(usize),
    Ack { back: u64 },
    DecoderDrop { ahead: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Push),
        4 => (1..12usize, any::<u32>()).prop_map(|(window, seed)| Op::Emit { window, seed }),
        1 => (0..6u64, prop::collection::vec(any::<u8>(), 1..6))
            .prop_map(|(offset, coefs)| Op::EncodeExplicit { offset, coefs }),
        5 => any::<usize>().prop_map(Op::Deliver),
        1 => any::<usize>().prop_map(Op::Duplicate),
        2 => any::<usize>().prop_map(Op::Lose),
        1 => (0..3u64).prop_map(|back| Op::Ack { back }),
        1 => (0..4u64).prop_map(|ahead| Op::DecoderDrop { ahead }),
    ]
}

#[derive(Clone, Debug)]
struct Scenario {
    systematic: bool,
    max_rows: usize,
    max_span: u64,
    symbols: Vec<Vec<u8>>,
    ops: Vec<Op>,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        any::<bool>(),
        1..20usize,
        4..64u64,
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..=MAX_LEN), COLUMNS),
        prop::collection::vec(op(), 0..120),
    )
        .prop_map(|(systematic, max_rows, max_span, symbols, ops)| Scenario {
            systematic,
            max_rows,
            max_span,
            symbols,
            ops,
        })
}

fn check(decoder: &mut Decoder, oracle: &Oracle, symbols: &[Vec<u8>], decoded: &mut [bool]) {
    let reduced = oracle.reduced();
    assert_eq!(decoder.rank(), reduced.len(), "rank");
    let mut first_unseen = None;
    for index in 0..COLUMNS {
        let expected = oracle.expected_state(&reduced, index);
        assert_eq!(decoder.state(index as u64), expected, "state of {index}");
        if expected == SymbolState::Unseen && first_unseen.is_none() {
            first_unseen = Some(index as u64);
        }
    }
    let first_unseen = first_unseen.unwrap_or(oracle.base.max(COLUMNS as u64));
    assert_eq!(decoder.first_unseen(), first_unseen, "first unseen");
    let seen = (oracle.base..COLUMNS as u64)
        .filter(|&i| matches!(decoder.state(i), SymbolState::Seen | SymbolState::Decoded))
        .count();
    assert_eq!(decoder.rank(), seen, "rank == number of seen indices");
    while let Some((index, symbol)) = decoder.poll_decoded() {
        let i = index as usize;
        assert!(!decoded[i], "{index} reported twice");
        decoded[i] = true;
        let truth = &symbols[i];
        assert!(symbol.len() >= truth.len() && symbol.len() <= MAX_LEN);
        assert_eq!(&symbol[..truth.len()], truth.as_slice(), "decoded {index}");
        assert!(
            symbol[truth.len()..].iter().all(|&b| b == 0),
            "padding of {index}"
        );
        let (_, row) = reduced
            .iter()
            .find(|(p, _)| *p == i)
            .expect("oracle decoded it too");
        assert_eq!(
            &row.payload[..symbol.len()],
            symbol,
            "oracle payload of {index}"
        );
    }
    for (index, &was_decoded) in decoded.iter().enumerate() {
        let state = decoder.state(index as u64);
        assert_eq!(
            was_decoded && state != SymbolState::Dropped,
            state == SymbolState::Decoded
        );
    }
}

#[derive(Clone)]
struct Packet {
    first: u64,
    coefs: Vec<u8>,
    payload: Vec<u8>,
}

/// The encoder's next emission for its mode, put on the network with its coefficients.
fn emit(encoder: &mut Encoder, window: usize, seed: u32, network: &mut Vec<Packet>) {
    let mut out = Vec::new();
    if let Ok(emission) = encoder.next_emission(window, seed, &mut out) {
        let mut coefs = vec![1u8; (emission.range.end - emission.range.start) as usize];
        if let EmissionKind::Combination { seed } = emission.kind {
            coefficients_from_seed(seed, &mut coefs);
        }
        network.push(Packet {
            first: emission.range.start,
            coefs,
            payload: out,
        });
    }
}

/// Delivers, duplicates or loses the packet at `at` (modulo the network's size); a delivered
/// packet must get the oracle's outcome.
fn deliver(
    op: &Op,
    at: usize,
    network: &mut Vec<Packet>,
    oracle: &mut Oracle,
    decoder: &mut Decoder,
) {
    if network.is_empty() {
        return;
    }
    let at = at % network.len();
    let packet = match op {
        Op::Duplicate(_) => network[at].clone(),
        _ => network.swap_remove(at),
    };
    if matches!(op, Op::Lose(_)) {
        return;
    }
    let expected = oracle.receive(packet.first, &packet.coefs, &packet.payload);
    let receipt = decoder.receive(packet.first, &packet.coefs, &packet.payload);
    assert_eq!(receipt.clone().map(|r| r.outcome), expected);
    if let Ok(receipt) = receipt {
        assert_eq!(receipt.first_unseen, decoder.first_unseen());
        assert_eq!(
            receipt.newly_seen.is_some(),
            receipt.outcome == Outcome::Innovative
        );
    }
}

fn run(s: &Scenario) {
    let mode = if s.systematic {
        CodingScheme::Systematic
    } else {
        CodingScheme::Dense
    };
    let mut encoder = Encoder::new(EncoderConfig {
        mode,
        max_symbols: 16,
        max_symbol_len: MAX_LEN,
    });
    let config = DecoderConfig {
        max_rows: s.max_rows,
        max_span: s.max_span,
        max_symbol_len: MAX_LEN,
    };
    let mut decoder = Decoder::new(config);
    let mut oracle = Oracle {
        basis: Vec::new(),
        base: 0,
        max_rows: s.max_rows,
        max_span: s.max_span,
    };
    let mut network: Vec<Packet> = Vec::new();
    let mut decoded = vec![false; COLUMNS];
    let mut out = Vec::new();
    for op in &s.ops {
        match op {
            Op::Push => {
                if encoder.end_index() < COLUMNS as u64 {
                    let _ = encoder.push(&s.symbols[encoder.end_index() as usize]);
                }
            }
            Op::Emit { window, seed } => emit(&mut encoder, *window, *seed, &mut network),
            Op::EncodeExplicit { offset, coefs } => {
                let first = encoder.start_index() + offset;
                let range = first..first + coefs.len() as u64;
                if encoder
                    .encode(range, Coefficients::Explicit(coefs), &mut out)
                    .is_ok()
                {
                    network.push(Packet {
                        first,
                        coefs: coefs.clone(),
                        payload: out.clone(),
                    });
                }
            }
            Op::Deliver(at) | Op::Duplicate(at) | Op::Lose(at) => {
                deliver(op, *at, &mut network, &mut oracle, &mut decoder);
            }
            Op::Ack { back } => {
                encoder.drop_below(decoder.first_unseen().saturating_sub(*back));
            }
            Op::DecoderDrop { ahead } => {
                let base = decoder.first_unseen().saturating_sub(2) + ahead;
                decoder.drop_below(base);
                oracle.drop_below(base);
            }
        }
        check(&mut decoder, &oracle, &s.symbols, &mut decoded);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn decoder_agrees_with_batch_elimination(s in scenario()) {
        run(&s);
    }

    #[test]
    fn fuzz_driver_holds_on_random_operations(data in prop::collection::vec(any::<u8>(), 0..3000)) {
        tcpnc_codec::fuzzing::decoder_ops(&data);
    }
}
