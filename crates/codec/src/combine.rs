//! The one payload primitive of the codec: `dst ^= Σ c_k · src_k`, fed to the field's fused
//! multi-source [`tcpnc_field::dot`] kernel in batches of up to `BATCH` sources, without
//! allocating.

/// Sources handed to one `dot` call (the field's AVX-512/AVX2 `dot` fuses up to 32 per pass).
const BATCH: usize = 32;

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
    }
}
