//! The sliding-window encoder: a bounded coding buffer of source symbols and the random linear
//! combinations formed from it (Sundararajan et al. §III: coding buffer, §III-C: coding window).

use std::collections::VecDeque;
use std::ops::Range;

use crate::combine::{Coefficients, combine};
use crate::error::EncodeError;

/// What the emissions of [`Encoder::next_emission`] are: the engine's coding scheme (the one
/// vocabulary's [`CodingScheme`]). Dense: every emission is a random linear combination of the
/// coding window (§II-B). Systematic: a newly added symbol is first emitted alone with
/// coefficient 1; every further emission is a random linear combination (a repair).
pub use tcpnc_settings::CodingScheme;

/// Limits and mode of an [`Encoder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncoderConfig {
    /// Dense or systematic emissions.
    pub mode: CodingScheme,
    /// The most symbols the coding buffer holds; [`Encoder::push`] fails beyond it.
    pub max_symbols: usize,
    /// The longest symbol accepted, in bytes.
    pub max_symbol_len: usize,
}

/// How the payload written by [`Encoder::next_emission`] was formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmissionKind {
    /// The single symbol of the range, uncoded (coefficient 1); systematic mode only.
    Source,
    /// A combination of the range with the coefficients expanded from `seed`.
    Combination {
        /// The seed to carry (or to expand into explicit coefficients) in the header.
        seed: u32,
    },
}

/// One packet's worth of coding produced by [`Encoder::next_emission`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Emission {
    /// The contiguous indices combined.
    pub range: Range<u64>,
    /// Source symbol or seeded combination.
    pub kind: EmissionKind,
}

/// A bounded sliding-window encoder. See the crate documentation for an example.
#[derive(Debug)]
pub struct Encoder {
    config: EncoderConfig,
    /// `symbols[k]` has index `start + k`.
    symbols: VecDeque<Vec<u8>>,
    start: u64,
    /// Systematic mode: the lowest index not yet emitted alone.
    next_source: u64,
    /// Buffers of dropped symbols, reused by `push`.
    spare: Vec<Vec<u8>>,
}

impl Encoder {
    /// An empty encoder whose first symbol will get index 0.
    pub fn new(config: EncoderConfig) -> Self {
        Self {
            config,
            symbols: VecDeque::new(),
            start: 0,
            next_source: 0,
            spare: Vec::new(),
        }
    }

    /// The configuration given to [`Encoder::new`].
    pub fn config(&self) -> &EncoderConfig {
        &self.config
    }

    /// Adds a source symbol and returns its index (one more than the previous symbol's).
    pub fn push(&mut self, symbol: &[u8]) -> Result<u64, EncodeError> {
        if symbol.len() > self.config.max_symbol_len {
            return Err(EncodeError::SymbolTooLong {
                len: symbol.len(),
                limit: self.config.max_symbol_len,
            });
        }
        if self.symbols.len() >= self.config.max_symbols {
            return Err(EncodeError::BufferFull {
                limit: self.config.max_symbols,
            });
        }
        let mut buffer = self.spare.pop().unwrap_or_default();
        buffer.clear();
        buffer.extend_from_slice(symbol);
        self.symbols.push_back(buffer);
        Ok(self.end_index() - 1)
    }

    /// Forgets every symbol whose index is below `index` (e.g. once it is acknowledged, §III-D);
    /// returns how many were dropped. Indices never go back: `index` beyond
    /// [`end_index`](Self::end_index) drops everything and the next symbol still gets
    /// `end_index()`.
    pub fn drop_below(&mut self, index: u64) -> usize {
        let mut dropped = 0;
        while self.start < index {
            let Some(buffer) = self.symbols.pop_front() else {
                break;
            };
            if self.spare.len() < 64 {
                self.spare.push(buffer);
            }
            self.start += 1;
            dropped += 1;
        }
        dropped
    }

    /// Index of the oldest buffered symbol (equals `end_index()` when empty).
    pub fn start_index(&self) -> u64 {
        self.start
    }

    /// One past the newest symbol's index: the index the next `push` returns.
    pub fn end_index(&self) -> u64 {
        self.start + self.symbols.len() as u64
    }

    /// Number of buffered symbols.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// Whether no symbol is buffered.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The buffered symbol with this index.
    pub fn symbol(&self, index: u64) -> Option<&[u8]> {
        let offset = usize::try_from(index.checked_sub(self.start)?).ok()?;
        self.symbols.get(offset).map(Vec::as_slice)
    }

    /// The coding window of at most `window` symbols: the newest symbol and the `window - 1`
    /// before it that are still buffered (§III-C).
    pub fn window_range(&self, window: usize) -> Range<u64> {
        let end = self.end_index();
        let len = (window as u64).min(self.symbols.len() as u64);
        end - len..end
    }

    /// Writes `Σ c_i · symbol_i` over `range` into `out` (cleared first; as long as the longest
    /// symbol of the range, shorter ones read as zero-padded) and returns that length.
    pub fn encode(
        &self,
        range: Range<u64>,
        coefficients: Coefficients<'_>,
        out: &mut Vec<u8>,
    ) -> Result<usize, EncodeError> {
        let symbols = self.symbols_in(range)?;
        combine(symbols.map(Vec::as_slice), coefficients, out)
    }

    /// Produces the next packet for the configured [`CodingScheme`] into `out`: in systematic mode the
    /// oldest buffered symbol not yet emitted alone (copied, coefficient 1), otherwise a
    /// combination of [`window_range(window)`](Self::window_range) with coefficients from `seed`.
    pub fn next_emission(
        &mut self,
        window: usize,
        seed: u32,
        out: &mut Vec<u8>,
    ) -> Result<Emission, EncodeError> {
        if window == 0 {
            return Err(EncodeError::ZeroWindow);
        }
        if self.symbols.is_empty() {
            return Err(EncodeError::NothingBuffered);
        }
        if self.config.mode == CodingScheme::Systematic && self.has_unsent_source() {
            let index = self.next_source.max(self.start);
            out.clear();
            out.extend_from_slice(&self.symbols[(index - self.start) as usize]);
            self.next_source = index + 1;
            return Ok(Emission {
                range: index..index + 1,
                kind: EmissionKind::Source,
            });
        }
        let range = self.window_range(window);
        self.encode(range.clone(), Coefficients::Seeded(seed), out)?;
        Ok(Emission {
            range,
            kind: EmissionKind::Combination { seed },
        })
    }

    /// Systematic mode: whether a buffered symbol has not been emitted alone yet.
    pub fn has_unsent_source(&self) -> bool {
        self.config.mode == CodingScheme::Systematic
            && self.next_source.max(self.start) < self.end_index()
    }

    fn symbols_in(
        &self,
        range: Range<u64>,
    ) -> Result<std::collections::vec_deque::Iter<'_, Vec<u8>>, EncodeError> {
        if range.start >= range.end {
            return Err(EncodeError::EmptyRange);
        }
        if range.start < self.start || range.end > self.end_index() {
            return Err(EncodeError::RangeNotBuffered {
                requested: range,
                buffered: self.start..self.end_index(),
            });
        }
        let first = (range.start - self.start) as usize;
        let last = (range.end - self.start) as usize;
        Ok(self.symbols.range(first..last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcpnc_field::mul;

    fn encoder(mode: CodingScheme) -> Encoder {
        Encoder::new(EncoderConfig {
            mode,
            max_symbols: 4,
            max_symbol_len: 8,
        })
    }

    #[test]
    fn push_assigns_increasing_indices_and_enforces_limits() {
        let mut enc = encoder(CodingScheme::Dense);
        for expected in 0..4 {
            assert_eq!(enc.push(&[expected as u8]), Ok(expected));
        }
        assert_eq!(enc.push(&[9]), Err(EncodeError::BufferFull { limit: 4 }));
        assert_eq!(
            enc.push(&[0; 9]),
            Err(EncodeError::SymbolTooLong { len: 9, limit: 8 })
        );
        assert_eq!(enc.drop_below(2), 2);
        assert_eq!(enc.start_index(), 2);
        assert_eq!(enc.symbol(1), None);
        assert_eq!(enc.symbol(3), Some(&[3u8][..]));
        assert_eq!(enc.push(&[4]), Ok(4));
        assert_eq!(enc.drop_below(100), 3);
        assert_eq!(enc.push(&[5]), Ok(5), "indices never go back");
    }

    #[test]
    fn encode_pads_shorter_symbols_and_checks_arguments() {
        let mut enc = encoder(CodingScheme::Dense);
        enc.push(&[1, 2, 3]).unwrap();
        enc.push(&[4]).unwrap();
        let mut out = Vec::new();
        assert_eq!(
            enc.encode(0..2, Coefficients::Explicit(&[2, 3]), &mut out),
            Ok(3)
        );
        assert_eq!(
            out,
            vec![mul(2, 1) ^ mul(3, 4), mul(2, 2), mul(2, 3)],
            "the second symbol reads as [4, 0, 0]"
        );
        assert_eq!(
            enc.encode(0..2, Coefficients::Explicit(&[1]), &mut out),
            Err(EncodeError::CoefficientCount {
                expected: 2,
                got: 1
            })
        );
        assert_eq!(
            enc.encode(1..1, Coefficients::Seeded(1), &mut out),
            Err(EncodeError::EmptyRange)
        );
        assert!(matches!(
            enc.encode(1..3, Coefficients::Seeded(1), &mut out),
            Err(EncodeError::RangeNotBuffered { .. })
        ));
    }

    #[test]
    fn seeded_encode_equals_explicit_encode_with_expanded_coefficients() {
        let mut enc = encoder(CodingScheme::Dense);
        for k in 0..4u8 {
            enc.push(&[k, k.wrapping_mul(31), 200]).unwrap();
        }
        let mut coefs = [0u8; 3];
        crate::coefficients_from_seed(77, &mut coefs);
        let (mut seeded, mut explicit) = (Vec::new(), Vec::new());
        enc.encode(1..4, Coefficients::Seeded(77), &mut seeded)
            .unwrap();
        enc.encode(1..4, Coefficients::Explicit(&coefs), &mut explicit)
            .unwrap();
        assert_eq!(seeded, explicit);
    }

    #[test]
    fn dense_mode_always_combines_the_window() {
        let mut enc = encoder(CodingScheme::Dense);
        let mut out = Vec::new();
        assert_eq!(
            enc.next_emission(2, 5, &mut out),
            Err(EncodeError::NothingBuffered)
        );
        for k in 0..3u8 {
            enc.push(&[k + 1]).unwrap();
        }
        let emission = enc.next_emission(2, 5, &mut out).unwrap();
        assert_eq!(emission.range, 1..3);
        assert_eq!(emission.kind, EmissionKind::Combination { seed: 5 });
        assert_eq!(
            enc.next_emission(0, 5, &mut out),
            Err(EncodeError::ZeroWindow)
        );
    }

    #[test]
    fn systematic_mode_sends_each_new_symbol_alone_first() {
        let mut enc = encoder(CodingScheme::Systematic);
        let mut out = Vec::new();
        enc.push(&[10, 11]).unwrap();
        enc.push(&[12]).unwrap();
        let first = enc.next_emission(4, 9, &mut out).unwrap();
        assert_eq!((first.range, first.kind), (0..1, EmissionKind::Source));
        assert_eq!(out, vec![10, 11]);
        let second = enc.next_emission(4, 9, &mut out).unwrap();
        assert_eq!((second.range, second.kind), (1..2, EmissionKind::Source));
        let repair = enc.next_emission(4, 9, &mut out).unwrap();
        assert_eq!(repair.range, 0..2);
        assert_eq!(repair.kind, EmissionKind::Combination { seed: 9 });
        enc.push(&[13]).unwrap();
        enc.push(&[14]).unwrap();
        enc.drop_below(3);
        assert!(enc.has_unsent_source());
        let third = enc.next_emission(4, 9, &mut out).unwrap();
        assert_eq!((third.range, third.kind), (3..4, EmissionKind::Source));
        assert!(!enc.has_unsent_source());
    }
}
