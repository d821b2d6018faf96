//! x86_64 SIMD tiers.
//!
//! Every tier module provides the same small set of vector primitives, all
//! `#[target_feature]` + `#[inline]` so they inline into the kernels:
//!
//! * `W`: vector width in bytes; `V`: the vector type;
//! * `loadu`/`storeu`: unaligned full-width access (any alignment is fine);
//! * `load_partial`/`store_partial`: access to the first `len <= W` bytes only, the rest of the
//!   vector reading as zero (masked instructions on AVX-512, a zeroed stack buffer otherwise);
//! * `MASKED`: whether partial accesses are masked instructions (cheap) rather than a bounce buffer;
//!   `WIDE`: whether `dot` may hold eight accumulators plus tables in registers without spilling;
//! * `Coef` + `coef(c)`: per-coefficient constants kept in registers; `mul(t, x)` = `c·x`
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

/// Sources fused per pass of `dot`: their per-coefficient constants sit in a stack array of
/// this many entries (at most 4 KiB for AVX-512), and `dst` is loaded and stored once per group.
const GROUP: usize = 32;

/// Generates `mul_add`, `mul_region` and `dot` (plus the helper `dot_full`) in the invoking
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
        /// Sources at least as long as `dst` (the common case: equal-length packets) are fused
        /// in groups of up to `GROUP` (see there): their per-coefficient constants are computed once per
        /// call into a stack array (which stays in L1) and, per block of `dst`, the accumulators
        /// stay in registers across the group while `dst` is loaded and stored once. A source
        /// shorter than `dst` contributes exactly `mul_add(dst, src, c)` (it touches only the
        /// bytes it covers), so it is applied that way, outside the fused loop.
        #[target_feature(enable = $features)]
        pub(crate) fn dot(dst: &mut [u8], srcs: &[&[u8]], coefs: &[u8]) {
            let n = dst.len();
            if n == 0 {
                return;
            }
            let mut tabs = [const { core::mem::MaybeUninit::<Coef>::uninit() }; crate::x86::GROUP];
            let mut ptrs = [core::ptr::null::<u8>(); crate::x86::GROUP];
            let mut g = 0;
            for (src, &c) in srcs.iter().zip(coefs) {
                if c == 0 || src.is_empty() {
                    continue;
                }
                if src.len() < n {
                    mul_add(dst, src, c);
                    continue;
                }
                tabs[g].write(coef(c));
                ptrs[g] = src.as_ptr();
                g += 1;
                if g == crate::x86::GROUP {
                    // SAFETY: the first `g` entries of `tabs` were just written, and each of
                    // the first `g` pointers is the start of a live source of at least
                    // `n = dst.len()` bytes that cannot overlap `dst` (`&` vs `&mut`).
                    unsafe { dot_full(dst, &ptrs[..g], &tabs[..g]) };
                    g = 0;
                }
            }
            if g > 0 {
                // SAFETY: as above, for the first `g` entries.
                unsafe { dot_full(dst, &ptrs[..g], &tabs[..g]) };
            }
        }

        /// The fused part of [`dot`]: `dst ^= Σ_j tabs[j]·(ptrs[j][..dst.len()])`.
        ///
        /// # Safety
        /// `ptrs.len() == tabs.len()`, every entry of `tabs` is initialised, and every
        /// `ptrs[j]` is valid for reads of `dst.len()` bytes that do not overlap `dst`.
        #[target_feature(enable = $features)]
        unsafe fn dot_full(
            dst: &mut [u8],
            ptrs: &[*const u8],
            tabs: &[core::mem::MaybeUninit<Coef>],
        ) {
            let n = dst.len();
            let d = dst.as_mut_ptr();
            let g = ptrs.len().min(tabs.len());
            let mut o = 0;
            // Eight-vector blocks where the registers allow (fewer table and pointer loads per
            // vector), then four-vector blocks.
            while WIDE && n - o >= 8 * W {
                // SAFETY: o + 8·W <= n: the eight windows are inside `dst` and, by the
                // contract, inside every source; the first `g` tables are initialised.
                unsafe {
                    let mut a = [loadu(d.add(o)); 8];
                    for (i, a) in a.iter_mut().enumerate().skip(1) {
                        *a = loadu(d.add(o + i * W));
                    }
                    for j in 0..g {
                        let t = tabs.get_unchecked(j).assume_init();
                        let s = ptrs.get_unchecked(j).add(o);
                        for (i, a) in a.iter_mut().enumerate() {
                            *a = mul_xor(t, loadu(s.add(i * W)), *a);
                        }
                    }
                    for (i, a) in a.iter().enumerate() {
                        storeu(d.add(o + i * W), *a);
                    }
                }
                o += 8 * W;
            }
            while n - o >= 4 * W {
                // SAFETY: o + 4·W <= n: the four windows are inside `dst` and, by the
                // contract, inside every source; the first `g` tables are initialised.
                unsafe {
                    let mut a0 = loadu(d.add(o));
                    let mut a1 = loadu(d.add(o + W));
                    let mut a2 = loadu(d.add(o + 2 * W));
                    let mut a3 = loadu(d.add(o + 3 * W));
                    for j in 0..g {
                        let t = tabs.get_unchecked(j).assume_init();
                        let s = ptrs.get_unchecked(j).add(o);
                        a0 = mul_xor(t, loadu(s), a0);
                        a1 = mul_xor(t, loadu(s.add(W)), a1);
                        a2 = mul_xor(t, loadu(s.add(2 * W)), a2);
                        a3 = mul_xor(t, loadu(s.add(3 * W)), a3);
                    }
                    storeu(d.add(o), a0);
                    storeu(d.add(o + W), a1);
                    storeu(d.add(o + 2 * W), a2);
                    storeu(d.add(o + 3 * W), a3);
                }
                o += 4 * W;
            }
            if o == n {
                return;
            }
            if MASKED {
                // One last block of < 4·W bytes through masked (fault-suppressing) partial
                // accesses: lengths are clamped to 0..=W per vector.
                let rem = n - o;
                let l0 = rem.min(W);
                let l1 = rem.saturating_sub(W).min(W);
                let l2 = rem.saturating_sub(2 * W).min(W);
                let l3 = rem.saturating_sub(3 * W);
                // SAFETY: o + l0 + l1 + l2 + l3 = n, so each window touches only bytes below
                // `n`, inside `dst` and every source; a zero length touches nothing.
                unsafe {
                    let mut a0 = load_partial(d.add(o), l0);
                    let mut a1 = load_partial(d.wrapping_add(o + W), l1);
                    let mut a2 = load_partial(d.wrapping_add(o + 2 * W), l2);
                    let mut a3 = load_partial(d.wrapping_add(o + 3 * W), l3);
                    for j in 0..g {
                        let t = tabs.get_unchecked(j).assume_init();
                        let s = ptrs.get_unchecked(j).add(o);
                        a0 = mul_xor(t, load_partial(s, l0), a0);
                        a1 = mul_xor(t, load_partial(s.wrapping_add(W), l1), a1);
                        a2 = mul_xor(t, load_partial(s.wrapping_add(2 * W), l2), a2);
                        a3 = mul_xor(t, load_partial(s.wrapping_add(3 * W), l3), a3);
                    }
                    store_partial(d.add(o), a0, l0);
                    store_partial(d.wrapping_add(o + W), a1, l1);
                    store_partial(d.wrapping_add(o + 2 * W), a2, l2);
                    store_partial(d.wrapping_add(o + 3 * W), a3, l3);
                }
                return;
            }
            while n - o >= W {
                // SAFETY: o + W <= n: inside `dst` and every source.
                unsafe {
                    let mut a = loadu(d.add(o));
                    for j in 0..g {
                        let t = tabs.get_unchecked(j).assume_init();
                        a = mul_xor(t, loadu(ptrs.get_unchecked(j).add(o)), a);
                    }
                    storeu(d.add(o), a);
                }
                o += W;
            }
            if o < n {
                let len = n - o;
                // SAFETY: len < W bytes remain at o in `dst` and every source; the partial
                // primitives touch only those.
                unsafe {
                    let mut a = load_partial(d.add(o), len);
                    for j in 0..g {
                        let t = tabs.get_unchecked(j).assume_init();
                        a = mul_xor(t, load_partial(ptrs.get_unchecked(j).add(o), len), a);
                    }
                    store_partial(d.add(o), a, len);
                }
            }
        }
    };
}

pub(crate) use region_kernels;
