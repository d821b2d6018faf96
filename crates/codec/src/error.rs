//! Typed errors of the encoder and the decoder.
//!
//! An operation that returns an error leaves the encoder or decoder exactly as it was.

use std::ops::Range;

/// Why the [`Encoder`](crate::Encoder) refused an operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// The coding buffer already holds `limit` symbols.
    #[error("coding buffer full: it already holds {limit} symbols")]
    BufferFull {
        /// The configured `max_symbols`.
        limit: usize,
    },
    /// A pushed symbol is longer than `max_symbol_len`.
    #[error("symbol of {len} bytes exceeds the limit of {limit} bytes")]
    SymbolTooLong {
        /// Length of the rejected symbol.
        len: usize,
        /// The configured `max_symbol_len`.
        limit: usize,
    },
    /// The requested range is empty.
    #[error("empty symbol range")]
    EmptyRange,
    /// The requested range is not entirely inside the buffered symbols.
    #[error("range {requested:?} is not inside the buffered symbols {buffered:?}")]
    RangeNotBuffered {
        /// The range asked for.
        requested: Range<u64>,
        /// The indices currently buffered.
        buffered: Range<u64>,
    },
    /// Explicit coefficients whose count differs from the range length.
    #[error("{got} coefficients given for a range of {expected} symbols")]
    CoefficientCount {
        /// The range length.
        expected: u64,
        /// The number of coefficients given.
        got: usize,
    },
    /// A coding window of zero symbols was asked for.
    #[error("the coding window must hold at least one symbol")]
    ZeroWindow,
    /// Nothing is buffered, so there is nothing to emit.
    #[error("the coding buffer is empty")]
    NothingBuffered,
}

/// Why the [`Decoder`](crate::Decoder) refused a combination.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The coded payload is longer than `max_symbol_len`.
    #[error("payload of {len} bytes exceeds the limit of {limit} bytes")]
    PayloadTooLong {
        /// Length of the rejected payload.
        len: usize,
        /// The configured `max_symbol_len`.
        limit: usize,
    },
    /// The combination's indices do not fit in a `u64`.
    #[error("symbol index overflows u64")]
    IndexOverflow,
    /// Accepting the combination would make the decoder track more than `max_span` indices
    /// (from its base to the highest referenced index); drop old symbols first.
    #[error("index {index} is beyond the span limit: base {base} + {limit} indices")]
    SpanExceeded {
        /// The highest index the combination references with a non-zero coefficient.
        index: u64,
        /// The decoder's base.
        base: u64,
        /// The configured `max_span`.
        limit: u64,
    },
    /// The combination is innovative but the decoder already holds `max_rows` undecoded rows.
    #[error("decoding buffer full: {limit} undecoded rows")]
    TooManyRows {
        /// The configured `max_rows`.
        limit: usize,
    },
}
