//! The one payload primitive of the codec: `dst ^= Σ c_k · src_k`, fed to the field's fused
//! multi-source [`tcpnc_field::dot`] kernel in batches, without allocating.

/// Sources handed to one `dot` call.
const BATCH: usize = 32;

/// `dst ^= Σ c · src` over `terms`; zero coefficients are skipped; each source is read up to
/// `dst.len()` and counts as zero-padded when shorter.
pub(crate) fn accumulate<'a>(dst: &mut [u8], terms: impl IntoIterator<Item = (&'a [u8], u8)>) {
    let mut srcs: [&[u8]; BATCH] = [&[]; BATCH];
    let mut coefs = [0u8; BATCH];
    let mut n = 0;
    for (src, c) in terms {
        if c == 0 || src.is_empty() {
            continue;
        }
        srcs[n] = src;
        coefs[n] = c;
        n += 1;
        if n == BATCH {
            tcpnc_field::dot(dst, &srcs, &coefs);
            n = 0;
        }
    }
    if n > 0 {
        tcpnc_field::dot(dst, &srcs[..n], &coefs[..n]);
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
        accumulate(
            &mut dst,
            sources
                .iter()
                .enumerate()
                .map(|(k, s)| (s.as_slice(), (k * 13) as u8)),
        );
        assert_eq!(dst, expected);
    }
}
