//! A sliding-window random linear code over GF(2^8), independent of TCP.
//!
//! This is the coding core of TCP/NC (Sundararajan et al., "Interfacing network coding with TCP:
//! an implementation"); `docs/codec.md` describes the design and `docs/prng.md` the coefficient
//! generator. The crate is sans-IO: no clock, no I/O, no hidden randomness (seeds are passed in).
//!
//! * **Symbols** are byte strings of any length up to a limit, identified by an increasing `u64`
//!   index. In a combination, shorter symbols read as zero-padded to the longest one (§III-A).
//! * **[`Encoder`]**: a bounded coding buffer. [`Encoder::push`] adds a symbol (it gets the next
//!   index), [`Encoder::drop_below`] forgets acknowledged ones, [`Encoder::encode`] forms the
//!   combination of any contiguous buffered range with [`Coefficients`] given explicitly or as a
//!   seed, and [`Encoder::next_emission`] forms the next packet of the configured [`CodingScheme`]
//!   (dense: always a combination of the coding window; systematic: each new symbol first alone
//!   with coefficient 1, then combinations).
//! * **Coefficients from a seed**: [`coefficients_from_seed`] expands a `u32` with SplitMix64
//!   into non-zero bytes — wire format, specified with golden vectors in `docs/prng.md`.
//! * **[`Decoder`]**: online Gauss-Jordan elimination. [`Decoder::receive`] (or
//!   [`Decoder::receive_seeded`]) returns a [`Receipt`]: whether the combination was innovative,
//!   the index that became *seen* (Definition 1: the pivot, i.e. the first non-zero column, of
//!   the new row), how many indices became decoded, and [`Decoder::first_unseen`] — the index
//!   the receiver acknowledges (§IV-A). Decoded symbols come out of [`Decoder::poll_decoded`]
//!   (possibly out of index order) and stay readable through [`Decoder::symbol`] until
//!   [`Decoder::drop_below`] releases them (§IV-C).
//! * Everything is bounded by its config; exceeding a limit is a typed error ([`EncodeError`],
//!   [`DecodeError`]) that leaves the state unchanged. No input makes the decoder panic.
//!
//! ```
//! use tcpnc_codec::{Decoder, DecoderConfig, Encoder, EncoderConfig, EmissionKind, CodingScheme, Outcome};
//!
//! let mut encoder = Encoder::new(EncoderConfig { mode: CodingScheme::Dense, max_symbols: 64, max_symbol_len: 1500 });
//! let mut decoder = Decoder::new(DecoderConfig { max_rows: 64, max_span: 1024, max_symbol_len: 1500 });
//! let mut packet = Vec::new();
//! for (k, message) in [&b"hello"[..], b"network", b"coding"].iter().enumerate() {
//!     encoder.push(message).unwrap();
//!     // One combination of the last W = 2 symbols per new symbol; the seed would travel in the header.
//!     let emission = encoder.next_emission(2, 1000 + k as u32, &mut packet).unwrap();
//!     let EmissionKind::Combination { seed } = emission.kind else { unreachable!() };
//!     let count = (emission.range.end - emission.range.start) as usize;
//!     let receipt = decoder.receive_seeded(emission.range.start, count, seed, &packet).unwrap();
//!     assert_eq!(receipt.outcome, Outcome::Innovative);
//!     assert_eq!(receipt.first_unseen, k as u64 + 1); // the ACK
//!     // Acknowledged symbols leave the coding buffer (§III-D).
//!     encoder.drop_below(receipt.first_unseen.saturating_sub(1));
//! }
//! let mut delivered = Vec::new();
//! while let Some((index, symbol)) = decoder.poll_decoded() {
//!     delivered.push((index, symbol.to_vec()));
//! }
//! assert_eq!(delivered[2], (2, b"coding\0".to_vec())); // zero-padded to the combination's length
//! ```

#![forbid(unsafe_code)]

pub mod bench;
mod combine;
mod decoder;
mod encoder;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod prng;

pub use combine::{Coefficients, combine, combine_append};
pub use decoder::{Decoder, DecoderConfig, Dropped, Outcome, Receipt, SymbolState};
pub use encoder::{CodingScheme, Emission, EmissionKind, Encoder, EncoderConfig};
pub use error::{DecodeError, EncodeError};
pub use prng::{CoefficientStream, SplitMix64, coefficients_from_seed};
