use super::*;
use tcpnc_field::mul;

fn decoder(max_rows: usize, max_span: u64) -> Decoder {
    Decoder::new(DecoderConfig {
        max_rows,
        max_span,
        max_symbol_len: 16,
    })
}

/// `Σ coefs[k] · symbols[first + k]`, zero-padded to the longest symbol involved.
fn combine(symbols: &[&[u8]], first: usize, coefs: &[u8]) -> Vec<u8> {
    let involved = &symbols[first..first + coefs.len()];
    let len = involved.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![0u8; len];
    for (symbol, &c) in involved.iter().zip(coefs) {
        for (o, &s) in out.iter_mut().zip(symbol.iter()) {
            *o ^= mul(c, s);
        }
    }
    out
}

fn polled(dec: &mut Decoder) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some((index, symbol)) = dec.poll_decoded() {
        out.push((index, symbol.to_vec()));
    }
    out
}

const SYMBOLS: [&[u8]; 4] = [b"abcd", b"ef", b"ghijk", b"l"];

#[test]
fn source_symbols_in_order_decode_at_once() {
    let mut dec = decoder(8, 16);
    for (k, symbol) in SYMBOLS.iter().enumerate() {
        let receipt = dec.receive(k as u64, &[1], symbol).unwrap();
        assert_eq!(receipt.outcome, Outcome::Innovative);
        assert_eq!(receipt.newly_seen, Some(k as u64));
        assert_eq!(receipt.newly_decoded, 1);
        assert_eq!(receipt.first_unseen, k as u64 + 1);
        assert_eq!(polled(&mut dec), vec![(k as u64, symbol.to_vec())]);
    }
    assert_eq!(dec.rank(), 4);
}

#[test]
fn a_combination_makes_its_first_index_seen_before_it_decodes() {
    let mut dec = decoder(8, 16);
    let receipt = dec
        .receive(0, &[3, 7], &combine(&SYMBOLS, 0, &[3, 7]))
        .unwrap();
    assert_eq!(
        receipt.newly_seen,
        Some(0),
        "pivot is the first non-zero column"
    );
    assert_eq!(receipt.newly_decoded, 0);
    assert_eq!(receipt.first_unseen, 1);
    assert_eq!(dec.state(0), SymbolState::Seen);
    assert_eq!(dec.state(1), SymbolState::Unseen);
    assert_eq!(dec.symbol(0), None);

    let receipt = dec.receive(1, &[5], &combine(&SYMBOLS, 1, &[5])).unwrap();
    assert_eq!(receipt.newly_seen, Some(1));
    assert_eq!(receipt.newly_decoded, 2);
    assert_eq!(receipt.first_unseen, 2);
    let mut got = polled(&mut dec);
    got.sort();
    // Each comes out as long as the combinations it was solved from.
    assert_eq!(got, vec![(0, b"abcd".to_vec()), (1, b"ef".to_vec())]);
}

#[test]
fn duplicates_and_dependent_combinations_are_redundant() {
    let mut dec = decoder(8, 16);
    let packet = combine(&SYMBOLS, 0, &[1, 2, 3]);
    assert_eq!(
        dec.receive(0, &[1, 2, 3], &packet).unwrap().outcome,
        Outcome::Innovative
    );
    let again = dec.receive(0, &[1, 2, 3], &packet).unwrap();
    assert_eq!(again.outcome, Outcome::Redundant);
    assert_eq!(again.newly_seen, None);
    let scaled = combine(&SYMBOLS, 0, &[4, 8, 12]);
    assert_eq!(
        dec.receive(0, &[4, 8, 12], &scaled).unwrap().outcome,
        Outcome::Redundant
    );
    assert_eq!(
        dec.receive(0, &[], b"").unwrap().outcome,
        Outcome::Redundant
    );
    assert_eq!(
        dec.receive(2, &[0, 0], b"xyz").unwrap().outcome,
        Outcome::Redundant
    );
    assert_eq!(dec.rank(), 1);
}

#[test]
fn out_of_order_arrivals_and_references_to_decoded_symbols() {
    let mut dec = decoder(8, 16);
    // The newest source arrives first; then combinations that also involve it.
    dec.receive(2, &[1], SYMBOLS[2]).unwrap();
    assert_eq!(dec.first_unseen(), 0);
    let r = dec
        .receive(1, &[9, 4], &combine(&SYMBOLS, 1, &[9, 4]))
        .unwrap();
    assert_eq!(
        (r.newly_seen, r.newly_decoded, r.first_unseen),
        (Some(1), 1, 0)
    );
    let r = dec
        .receive(0, &[6, 1, 200], &combine(&SYMBOLS, 0, &[6, 1, 200]))
        .unwrap();
    assert_eq!(
        (r.newly_seen, r.newly_decoded, r.first_unseen),
        (Some(0), 1, 3)
    );
    let mut got = polled(&mut dec);
    got.sort();
    assert_eq!(got[0], (0, b"abcd\0".to_vec()));
    assert_eq!(got[1], (1, b"ef\0\0\0".to_vec()));
    assert_eq!(got[2], (2, b"ghijk".to_vec()));
}

#[test]
fn leading_and_trailing_zero_coefficients_are_ignored() {
    let mut dec = decoder(8, 16);
    let r = dec.receive(0, &[0, 0, 1, 0], SYMBOLS[2]).unwrap();
    assert_eq!((r.newly_seen, r.newly_decoded), (Some(2), 1));
    assert_eq!(dec.end_index(), 3);
}

#[test]
fn drop_below_releases_decoded_symbols_and_abandons_undecoded_rows() {
    let mut dec = decoder(8, 16);
    dec.receive(0, &[1], SYMBOLS[0]).unwrap();
    dec.receive(1, &[1, 1], &combine(&SYMBOLS, 1, &[1, 1]))
        .unwrap();
    dec.receive(3, &[1], SYMBOLS[3]).unwrap();
    assert_eq!(dec.first_unseen(), 2);
    assert_eq!(
        dec.drop_below(2),
        Dropped {
            decoded: 1,
            undecoded: 1
        }
    );
    assert_eq!(dec.base(), 2);
    assert_eq!(dec.state(0), SymbolState::Dropped);
    assert_eq!(
        dec.first_unseen(),
        2,
        "index 2 lost the only row that saw it"
    );
    assert_eq!(dec.rank(), 1);
    // A combination that still involves a dropped index cannot be used.
    let stale = dec
        .receive(1, &[1, 1], &combine(&SYMBOLS, 1, &[1, 1]))
        .unwrap();
    assert_eq!(stale.outcome, Outcome::Stale);
    // Dropped-but-unpolled symbols are never reported.
    let mut got = polled(&mut dec);
    got.sort();
    assert_eq!(got, vec![(3, b"l".to_vec())]);
    assert_eq!(
        dec.drop_below(1),
        Dropped::default(),
        "the base never goes back"
    );
    assert_eq!(
        dec.drop_below(100),
        Dropped {
            decoded: 1,
            undecoded: 1
        }
    );
    assert_eq!(
        (dec.base(), dec.first_unseen(), dec.end_index()),
        (100, 100, 100)
    );
}

#[test]
fn limits_are_typed_errors_that_change_nothing() {
    let mut dec = decoder(2, 4);
    assert_eq!(
        dec.receive(0, &[1], &[0; 17]),
        Err(DecodeError::PayloadTooLong { len: 17, limit: 16 })
    );
    assert_eq!(
        dec.receive(u64::MAX, &[1, 1], b"x"),
        Err(DecodeError::IndexOverflow)
    );
    assert_eq!(
        dec.receive(3, &[1, 1], b"x"),
        Err(DecodeError::SpanExceeded {
            index: 4,
            base: 0,
            limit: 4
        })
    );
    assert_eq!(
        dec.receive_seeded(0, usize::MAX, 1, b"x"),
        Err(DecodeError::SpanExceeded {
            index: usize::MAX as u64 - 1,
            base: 0,
            limit: 4
        })
    );
    dec.receive(0, &[1, 1], b"a").unwrap();
    dec.receive(1, &[1, 1], b"b").unwrap();
    let before = (dec.rank(), dec.first_unseen(), dec.end_index());
    assert_eq!(
        dec.receive(2, &[1, 1], b"c"),
        Err(DecodeError::TooManyRows { limit: 2 })
    );
    assert_eq!((dec.rank(), dec.first_unseen(), dec.end_index()), before);
    // A redundant combination is still fine when the rows are full.
    assert_eq!(
        dec.receive(0, &[1, 1], b"a").unwrap().outcome,
        Outcome::Redundant
    );
}

#[test]
fn seeded_reception_matches_explicit_coefficients() {
    let mut coefs = [0u8; 3];
    crate::coefficients_from_seed(42, &mut coefs);
    let packet = combine(&SYMBOLS, 1, &coefs);
    let mut explicit = decoder(8, 16);
    let mut seeded = decoder(8, 16);
    assert_eq!(
        explicit.receive(1, &coefs, &packet),
        seeded.receive_seeded(1, 3, 42, &packet)
    );
    assert_eq!(
        seeded.receive_seeded(1, 0, 42, b"").unwrap().outcome,
        Outcome::Redundant
    );
}
