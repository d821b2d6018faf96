//! x86_64 SIMD tiers.
//!
//! Every tier module provides the same small set of vector primitives, all
//! `#[target_feature]` + `#[inline]` so they inline into the kernels:
//!
//! * `W`: vector width in bytes; `V`: the vector type;
//! * `loadu`/`storeu`: unaligned full-width access (any alignment is fine);
//! * `load_partial`/`store_partial`: access to the first `len <= W` bytes only, the rest of the
//!   vector reading as zero (masked instructions on AVX-512, a zeroed stack buffer otherwise);
//! * `zero`; `Coef` + `coef(c)`: per-coefficient constants kept in registers; `mul(t, x)` = `c·x`
//!   and `mul_xor(t, x, acc)` = `acc ^ c·x` per byte.
//!
//! [`region_kernels!`] then generates the three kernels once, with identical block/tail logic
//! for every tier, so a tail bug cannot hide in one tier only. The generated kernels are *safe*
//! `#[target_feature]` functions: the only obligation on callers is that the CPU has the
//! features, which `region::Kernels` guarantees.

pub(crate) mod avx2;
pub(crate) mod avx512;
pub(crate) mod gfni;
pub(crate) mod ssse3;

/// Generates `mul_add`, `mul_region` and `dot` (plus the helper `load_src`) in the invoking
/// module, from the primitives described in the module docs, with `#[target_feature(enable =
/// $features)]`.
///
/// Layout of every kernel: blocks of `4·W` bytes (four independent vectors, to hide shuffle /
/// affine latency), then single vectors, then one partial vector of `< W` bytes. Unaligned
/// loads/stores are used throughout: on every CPU with these extensions they cost the same as
/// aligned ones when the data happens to be aligned, and avoiding a peeling prologue keeps short
/// (packet-sized) regions cheap.
macro_rules! region_kernels {
    ($features:literal) => {
        /// `dst[i] ^= c·src[i]` for `i < min(dst.len(), src.len())`.
        #[target_feature(enable = $features)]
        pub(crate) fn mul_add(dst: &mut [u8], src: &[u8], c: u8) {
            if c == 0 {
                return;
            }
            let n = dst.len().min(src.len());
            let t = coef(c);
            let d = dst.as_mut_ptr();
            let s = src.as_ptr();
            let mut o = 0;
            while n - o >= 4 * W {
                // SAFETY: o + 4·W <= n <= min(dst.len(), src.len()), so the four W-byte windows
                // at o, o+W, o+2W, o+3W are inside both slices; `dst` is `&mut` and `src` is `&`,
                // so they do not overlap.
                unsafe {
                    let x0 = loadu(s.add(o));
                    let x1 = loadu(s.add(o + W));
                    let x2 = loadu(s.add(o + 2 * W));
                    let x3 = loadu(s.add(o + 3 * W));
                    let y0 = loadu(d.add(o));
                    let y1 = loadu(d.add(o + W));
                    let y2 = loadu(d.add(o + 2 * W));
                    let y3 = loadu(d.add(o + 3 * W));
                    storeu(d.add(o), mul_xor(t, x0, y0));
                    storeu(d.add(o + W), mul_xor(t, x1, y1));
                    storeu(d.add(o + 2 * W), mul_xor(t, x2, y2));
                    storeu(d.add(o + 3 * W), mul_xor(t, x3, y3));
                }
                o += 4 * W;
            }
            while n - o >= W {
                // SAFETY: o + W <= n, so the window is inside both (non-overlapping) slices.
                unsafe {
                    let x = loadu(s.add(o));
                    let y = loadu(d.add(o));
                    storeu(d.add(o), mul_xor(t, x, y));
                }
                o += W;
            }
            if o < n {
                let len = n - o;
                // SAFETY: len = n - o < W bytes remain at o in both slices, and the partial
                // primitives touch exactly the first `len` bytes.
                unsafe {
                    let x = load_partial(s.add(o), len);
                    let y = load_partial(d.add(o), len);
                    store_partial(d.add(o), mul_xor(t, x, y), len);
                }
            }
        }

        /// `dst[i] = c·dst[i]`.
        #[target_feature(enable = $features)]
        pub(crate) fn mul_region(dst: &mut [u8], c: u8) {
            match c {
                0 => {
                    dst.fill(0);
                    return;
                }
                1 => return,
                _ => {}
            }
            let n = dst.len();
            let t = coef(c);
            let d = dst.as_mut_ptr();
            let mut o = 0;
            while n - o >= 4 * W {
                // SAFETY: o + 4·W <= n = dst.len(): all four windows are inside `dst`.
                unsafe {
                    let y0 = loadu(d.add(o));
                    let y1 = loadu(d.add(o + W));
                    let y2 = loadu(d.add(o + 2 * W));
                    let y3 = loadu(d.add(o + 3 * W));
                    storeu(d.add(o), mul(t, y0));
                    storeu(d.add(o + W), mul(t, y1));
                    storeu(d.add(o + 2 * W), mul(t, y2));
                    storeu(d.add(o + 3 * W), mul(t, y3));
                }
                o += 4 * W;
            }
            while n - o >= W {
                // SAFETY: o + W <= n = dst.len().
                unsafe { storeu(d.add(o), mul(t, loadu(d.add(o)))) };
                o += W;
            }
            if o < n {
                let len = n - o;
                // SAFETY: len < W bytes remain at o; the partial primitives touch only those.
                unsafe { store_partial(d.add(o), mul(t, load_partial(d.add(o), len)), len) };
            }
        }

        /// `dst ^= Σ coefs[k]·srcs[k]`, sources zero-padded (or cut) to `dst.len()`.
        ///
        /// Fused: per block of `dst`, the accumulators stay in registers across all sources and
        /// `dst` is loaded and stored once. A source that ends inside a block is read through
        /// `load_src`, which zero-fills past its end (`c·0 = 0`, so those `dst` bytes are
        /// unchanged by it).
        #[target_feature(enable = $features)]
        pub(crate) fn dot(dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
            let k = srcs.len().min(coefs.len());
            if k == 0 {
                return;
            }
            let (srcs, coefs) = (&srcs[..k], &coefs[..k]);
            let n = dst.len();
            let d = dst.as_mut_ptr();
            let mut o = 0;
            while n - o >= 4 * W {
                // SAFETY: o + 4·W <= n = dst.len(): all four windows are inside `dst`.
                let (mut a0, mut a1, mut a2, mut a3) = unsafe {
                    (
                        loadu(d.add(o)),
                        loadu(d.add(o + W)),
                        loadu(d.add(o + 2 * W)),
                        loadu(d.add(o + 3 * W)),
                    )
                };
                for (src, &c) in srcs.iter().zip(coefs) {
                    if c == 0 || src.len() <= o {
                        continue;
                    }
                    let t = coef(c);
                    if src.len() - o >= 4 * W {
                        let s = src.as_ptr();
                        // SAFETY: o + 4·W <= src.len(): all four windows are inside `src`.
                        unsafe {
                            a0 = mul_xor(t, loadu(s.add(o)), a0);
                            a1 = mul_xor(t, loadu(s.add(o + W)), a1);
                            a2 = mul_xor(t, loadu(s.add(o + 2 * W)), a2);
                            a3 = mul_xor(t, loadu(s.add(o + 3 * W)), a3);
                        }
                    } else {
                        // The source ends inside this block (once per source at most).
                        a0 = mul_xor(t, load_src(src, o), a0);
                        a1 = mul_xor(t, load_src(src, o + W), a1);
                        a2 = mul_xor(t, load_src(src, o + 2 * W), a2);
                        a3 = mul_xor(t, load_src(src, o + 3 * W), a3);
                    }
                }
                // SAFETY: same windows of `dst` as the loads above; no source aliases `dst`
                // (`dst` is `&mut`, the sources are `&`).
                unsafe {
                    storeu(d.add(o), a0);
                    storeu(d.add(o + W), a1);
                    storeu(d.add(o + 2 * W), a2);
                    storeu(d.add(o + 3 * W), a3);
                }
                o += 4 * W;
            }
            while o < n {
                let len = (n - o).min(W);
                // SAFETY: o + len <= n = dst.len(); a full load when len == W, else a partial
                // one touching exactly `len` bytes.
                let mut a = unsafe {
                    if len == W {
                        loadu(d.add(o))
                    } else {
                        load_partial(d.add(o), len)
                    }
                };
                for (src, &c) in srcs.iter().zip(coefs) {
                    if c != 0 && src.len() > o {
                        // Lanes past `len` may pick up source bytes; they are never stored.
                        a = mul_xor(coef(c), load_src(src, o), a);
                    }
                }
                // SAFETY: as for the load of `a` just above.
                unsafe {
                    if len == W {
                        storeu(d.add(o), a)
                    } else {
                        store_partial(d.add(o), a, len)
                    }
                };
                o += len;
            }
        }

        /// The `W` bytes of `src` from offset `o`, bytes past `src`'s end reading as zero.
        #[target_feature(enable = $features)]
        #[inline]
        fn load_src(src: &[u8], o: usize) -> V {
            let avail = src.len().saturating_sub(o);
            if avail >= W {
                // SAFETY: o + W <= src.len().
                unsafe { loadu(src.as_ptr().add(o)) }
            } else if avail == 0 {
                zero()
            } else {
                // SAFETY: 0 < avail < W bytes exist at o (so `add(o)` stays in bounds), and
                // the partial load reads only those.
                unsafe { load_partial(src.as_ptr().add(o), avail) }
            }
        }
    };
}

pub(crate) use region_kernels;
