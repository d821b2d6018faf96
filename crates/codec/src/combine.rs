//! The one combination routine of tcpnc: `out = Σ c_k · symbol_k` over borrowed symbols
//! (Sundararajan et al. §III-C: a random linear combination of the coding window), fed to the
//! field's fused multi-source [`tcpnc_field::dot`] kernel in batches of up to `BATCH` sources,
//! without allocating.
//!
//! [`combine`] is the entry point that both [`Encoder::encode`](crate::Encoder::encode) and the
//! engine's sender (`tcpnc_proto`, over its coding buffer's packets) call, so what
//! `tcpnc bench codec` measures and the fuzz targets exercise is the path the product runs.

use crate::error::EncodeError;
use crate::prng::CoefficientStream;

/// Sources handed to one `dot` call (the field's AVX-512/AVX2 `dot` fuses up to 32 per pass).
const BATCH: usize = 32;

/// The coefficients of one combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coefficients<'a> {
    /// One coefficient per symbol, in order (zero leaves a symbol out).
    Explicit(&'a [u8]),
    /// Coefficients expanded from a seed by [`coefficients_from_seed`](crate::coefficients_from_seed).
    Seeded(u32),
}

/// Writes `Σ c_k · symbol_k` into `out` (cleared first, then as long as the longest symbol;
/// shorter symbols read as zero-padded, §III-A) and returns that length.
///
/// Fails, leaving `out` untouched, when `symbols` is empty or when explicit coefficients are
/// not exactly one per symbol. Terms are accumulated in batches of up to 32 sources per
/// [`tcpnc_field::dot`] pass; GF(2^8) addition is XOR, so the result does not depend on the
/// batching.
pub fn combine<'a, I>(
    symbols: I,
    coefficients: Coefficients<'_>,
    out: &mut Vec<u8>,
) -> Result<usize, EncodeError>
where
    I: Iterator<Item = &'a [u8]> + Clone,
{
    let len = check(symbols.clone(), coefficients)?;
    out.clear();
    append_checked(symbols, coefficients, len, out);
    Ok(len)
}

/// [`combine`] appended after what `out` already holds (a frame's header, so the sender
/// combines straight into the frame): the bytes before are kept, and the combination's length
/// is returned. Fails, leaving `out` untouched, as [`combine`] does.
pub fn combine_append<'a, I>(
    symbols: I,
    coefficients: Coefficients<'_>,
    out: &mut Vec<u8>,
) -> Result<usize, EncodeError>
where
    I: Iterator<Item = &'a [u8]> + Clone,
{
    let len = check(symbols.clone(), coefficients)?;
    append_checked(symbols, coefficients, len, out);
    Ok(len)
}

/// Appends the combination of `symbols`, `len` bytes long ([`check`]'s answer), to `out`.
fn append_checked<'a>(
    symbols: impl Iterator<Item = &'a [u8]>,
    coefficients: Coefficients<'_>,
    len: usize,
    out: &mut Vec<u8>,
) {
    let start = out.len();
    out.resize(start + len, 0);
    let dst = &mut out[start..];
    match coefficients {
        Coefficients::Explicit(coefs) => {
            let mut rest = coefs;
            accumulate_batched(dst, symbols, |batch| {
                let (head, tail) = rest.split_at(batch.len());
                batch.copy_from_slice(head);
                rest = tail;
            });
        }
        Coefficients::Seeded(seed) => {
            let mut stream = CoefficientStream::new(seed);
            accumulate_batched(dst, symbols, |batch| {
                for c in batch {
                    *c = stream.next_coefficient();
                }
            });
        }
    }
}

/// The length of the combination of `symbols` (the longest), or why there is none: no
/// symbols, or explicit coefficients not one per symbol.
fn check<'a>(
    symbols: impl Iterator<Item = &'a [u8]>,
    coefficients: Coefficients<'_>,
) -> Result<usize, EncodeError> {
    let (count, len) = symbols.fold((0u64, 0usize), |(n, len), s| (n + 1, len.max(s.len())));
    if count == 0 {
        return Err(EncodeError::EmptyRange);
    }
    if let Coefficients::Explicit(coefs) = coefficients
        && coefs.len() as u64 != count
    {
        return Err(EncodeError::CoefficientCount {
            expected: count,
            got: coefs.len(),
        });
    }
    Ok(len)
}

/// Terms of `dst ^= Σ c · src` collected into fixed arrays and handed to `dot` a batch at a
/// time (zero coefficients and empty sources are skipped by `dot` itself).
pub(crate) struct Batch<'a> {
    srcs: [&'a [u8]; BATCH],
    coefs: [u8; BATCH],
    len: usize,
}

impl<'a> Batch<'a> {
    pub(crate) fn new() -> Self {
        Self {
            srcs: [&[]; BATCH],
            coefs: [0; BATCH],
            len: 0,
        }
    }

    /// Adds `c · src` (to `dst`, which must be the same slice for every call until `flush`).
    #[inline]
    pub(crate) fn add(&mut self, dst: &mut [u8], src: &'a [u8], c: u8) {
        if let (Some(slot), Some(coef)) =
            (self.srcs.get_mut(self.len), self.coefs.get_mut(self.len))
        {
            *slot = src;
            *coef = c;
            self.len += 1;
        }
        if self.len == BATCH {
            self.flush(dst);
        }
    }

    /// Applies the pending terms to `dst`.
    pub(crate) fn flush(&mut self, dst: &mut [u8]) {
        if self.len > 0 {
            tcpnc_field::dot(dst, &self.srcs[..self.len], &self.coefs[..self.len]);
            self.len = 0;
        }
    }
}

/// `dst ^= Σ c_k · src_k` for sources from `srcs` and their coefficients written by `coefs`
/// (called once per batch with a slice as long as that batch, in order; a stream of coefficients
/// must simply continue from one call to the next). Same semantics as [`Batch`]; this form
/// keeps the per-source work to copying a slice reference, which matters when the sources are
/// many and the coefficients come from a generator.
pub(crate) fn accumulate_batched<'a>(
    dst: &mut [u8],
    mut srcs: impl Iterator<Item = &'a [u8]>,
    mut coefs: impl FnMut(&mut [u8]),
) {
    let mut batch: [&[u8]; BATCH] = [&[]; BATCH];
    let mut values = [0u8; BATCH];
    loop {
        let mut n = 0;
        for (slot, src) in batch.iter_mut().zip(&mut srcs) {
            *slot = src;
            n += 1;
        }
        if n == 0 {
            return;
        }
        coefs(&mut values[..n]);
        tcpnc_field::dot(dst, &batch[..n], &values[..n]);
        if n < BATCH {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_scalar_sum_across_batches() {
        let sources: Vec<Vec<u8>> = (0..100u32)
            .map(|k| {
                (0..(k % 37) as usize)
                    .map(|i| (i as u32 * 7 + k) as u8)
                    .collect()
            })
            .collect();
        let mut dst = vec![0x5Au8; 30];
        let mut expected = dst.clone();
        for (k, src) in sources.iter().enumerate() {
            let c = (k * 13) as u8;
            for (e, s) in expected.iter_mut().zip(src) {
                *e ^= tcpnc_field::mul_reference(c, *s);
            }
        }
        let mut batch = Batch::new();
        for (k, src) in sources.iter().enumerate() {
            batch.add(&mut dst, src, (k * 13) as u8);
        }
        batch.flush(&mut dst);
        assert_eq!(dst, expected);
        let mut batched = vec![0x5Au8; 30];
        let mut k = 0;
        accumulate_batched(
            &mut batched,
            sources.iter().map(Vec::as_slice),
            |coefs: &mut [u8]| {
                for c in coefs {
                    *c = (k * 13) as u8;
                    k += 1;
                }
            },
        );
        assert_eq!(batched, expected);
        // The public entry point: same sum into a zeroed, longest-symbol-long buffer.
        let coefs: Vec<u8> = (0..sources.len()).map(|k| (k * 13) as u8).collect();
        let mut out = vec![0xFF; 3];
        let len = combine(
            sources.iter().map(Vec::as_slice),
            Coefficients::Explicit(&coefs),
            &mut out,
        )
        .unwrap();
        assert_eq!(len, 36);
        let mut zero_based = vec![0u8; 36];
        for (k, src) in sources.iter().enumerate() {
            for (e, s) in zero_based.iter_mut().zip(src) {
                *e ^= tcpnc_field::mul_reference((k * 13) as u8, *s);
            }
        }
        assert_eq!(out, zero_based);
    }

    #[test]
    fn combine_checks_its_arguments_and_expands_seeds() {
        let symbols: [&[u8]; 3] = [&[1, 2, 3], &[4], &[5, 6]];
        let mut out = vec![9];
        assert_eq!(
            combine(std::iter::empty(), Coefficients::Seeded(1), &mut out),
            Err(EncodeError::EmptyRange)
        );
        assert_eq!(
            combine(
                symbols.iter().copied(),
                Coefficients::Explicit(&[1, 2]),
                &mut out
            ),
            Err(EncodeError::CoefficientCount {
                expected: 3,
                got: 2
            })
        );
        assert_eq!(
            out,
            vec![9],
            "a refused combination leaves the output alone"
        );
        let mut coefs = [0u8; 3];
        crate::coefficients_from_seed(0xBEEF, &mut coefs);
        let mut explicit = Vec::new();
        combine(
            symbols.iter().copied(),
            Coefficients::Explicit(&coefs),
            &mut explicit,
        )
        .unwrap();
        combine(
            symbols.iter().copied(),
            Coefficients::Seeded(0xBEEF),
            &mut out,
        )
        .unwrap();
        assert_eq!(out, explicit);
        // Systematic: one symbol with coefficient 1 is the symbol itself.
        combine(
            [&[7u8, 8][..]].into_iter(),
            Coefficients::Explicit(&[1]),
            &mut out,
        )
        .unwrap();
        assert_eq!(out, vec![7, 8]);
    }

    /// Appending keeps what the buffer held and adds exactly what `combine` writes; a refused
    /// combination leaves the buffer alone.
    #[test]
    fn append_keeps_the_prefix() {
        let symbols: [&[u8]; 3] = [&[1, 2, 3], &[4, 5], &[6, 7, 8, 9]];
        for coefficients in [
            Coefficients::Explicit(&[3, 0, 200]),
            Coefficients::Seeded(77),
        ] {
            let mut alone = vec![0xaa; 5];
            combine(symbols.iter().copied(), coefficients, &mut alone).unwrap();
            let mut framed = vec![0xee, 0xff];
            let n = combine_append(symbols.iter().copied(), coefficients, &mut framed).unwrap();
            assert_eq!(n, 4);
            assert_eq!(&framed[..2], &[0xee, 0xff]);
            assert_eq!(&framed[2..], &alone[..]);
        }
        let mut framed = vec![1];
        assert!(combine_append([].into_iter(), Coefficients::Seeded(1), &mut framed).is_err());
        assert_eq!(framed, vec![1]);
    }
}
