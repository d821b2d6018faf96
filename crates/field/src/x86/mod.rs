//! x86_64 SIMD tiers.
//!
//! Every tier module provides the same small set of vector primitives, all
//! `#[target_feature]` + `#[inline]` so they inline into the kernels:
//!
//! * `W`: vector width in bytes; `V`: the vector type;
//! * `loadu`/`storeu`: unaligned full-width access (any alignment is fine);
//! * `load_partial`/`store_partial`: access to the first `len <= W` bytes only, the rest of the
//!   vector reading as zero (masked instructions on AVX-512, a zeroed stack buffer otherwise);
//! * `WIDE`: whether `dot` may hold eight accumulators plus tables in registers without spilling;
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
/// Layout of every kernel: blocks of independent vectors (`mul_add` 2, `mul_region` 4, `dot` 8
/// where registers allow, else 4), then whole vectors, then — instead of a
/// partial vector — the last `W` bytes as one full window that overlaps bytes already done. That
/// window is computed from the *original* bytes (loaded before anything is stored), so the
/// overlapped bytes are written twice with the same value. Partial (`< W`) accesses remain only
/// for regions shorter than one vector. Unaligned loads/stores are used throughout: on every CPU
/// with these extensions they cost the same as aligned ones when the data happens to be aligned,
/// and avoiding a peeling prologue keeps short (packet-sized) regions cheap.
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
            if n < W {
                // SAFETY: n < W bytes at the start of both slices; the partial primitives
                // touch exactly the first `n` bytes.
                unsafe {
                    let x = load_partial(s, n);
                    let y = load_partial(d, n);
                    store_partial(d, mul_xor(t, x, y), n);
                }
                return;
            }
            let last = n - W;
            // The last full window, computed from the original bytes before any store and
            // stored after the loops: its bytes that the loops also cover receive the same
            // value (orig ^ c·src) twice, so no partial vector is needed.
            // SAFETY: W <= n, so last..n is inside both (non-overlapping) slices.
            let tail = unsafe { mul_xor(t, loadu(s.add(last)), loadu(d.add(last))) };
            let mut o = 0;
            while n - o >= 2 * W {
                // SAFETY: o + 2·W <= n <= min(dst.len(), src.len()): both windows are inside
                // both slices; `dst` is `&mut` and `src` is `&`, so they do not overlap.
                unsafe {
                    let x0 = loadu(s.add(o));
                    let y0 = loadu(d.add(o));
                    storeu(d.add(o), mul_xor(t, x0, y0));
                    let x1 = loadu(s.add(o + W));
                    let y1 = loadu(d.add(o + W));
                    storeu(d.add(o + W), mul_xor(t, x1, y1));
                }
                o += 2 * W;
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
                // SAFETY: last + W = n, inside `dst`.
                unsafe { storeu(d.add(last), tail) };
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
            if n < W {
                // SAFETY: n < W bytes at `d`; the partial primitives touch only those.
                unsafe { store_partial(d, mul(t, load_partial(d, n)), n) };
                return;
            }
            let last = n - W;
            // As in `mul_add`: the last window from the original bytes, stored last.
            // SAFETY: W <= n, so last..n is inside `dst`.
            let tail = unsafe { mul(t, loadu(d.add(last))) };
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
                // SAFETY: last + W = n = dst.len().
                unsafe { storeu(d.add(last), tail) };
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

        /// One pass of the fused `dot` over the `M` windows `d + offs[i] .. + W`:
        /// `window ^= Σ_j tabs[j]·(ptrs[j] + offs[i])`, every window loaded before and stored
        /// after the whole pass. Windows may overlap (then they receive equal values: each is
        /// computed from the original bytes).
        ///
        /// # Safety
        /// `ptrs.len() == tabs.len()`, every entry of `tabs` is initialised, and for every
        /// `i`, `offs[i] + W` is at most the length `n` of the destination at `d`, which is
        /// valid for reads and writes, and every `ptrs[j]` is valid for reads of `n` bytes
        /// that do not overlap the destination.
        #[target_feature(enable = $features)]
        #[inline]
        unsafe fn dot_pass<const M: usize>(
            d: *mut u8,
            offs: [usize; M],
            ptrs: &[*const u8],
            tabs: &[core::mem::MaybeUninit<Coef>],
        ) {
            let g = ptrs.len().min(tabs.len());
            // SAFETY: by the contract every window `offs[i]..offs[i] + W` is inside the
            // destination and inside every source; the first `g` tables are initialised.
            unsafe {
                let mut a = [loadu(d.add(offs[0])); M];
                for (a, &off) in a.iter_mut().zip(&offs).skip(1) {
                    *a = loadu(d.add(off));
                }
                for j in 0..g {
                    let t = tabs.get_unchecked(j).assume_init();
                    let s = *ptrs.get_unchecked(j);
                    for (a, &off) in a.iter_mut().zip(&offs) {
                        *a = mul_xor(t, loadu(s.add(off)), *a);
                    }
                }
                for (a, &off) in a.iter().zip(&offs) {
                    storeu(d.add(off), *a);
                }
            }
        }

        /// The fused part of [`dot`]: `dst ^= Σ_j tabs[j]·(ptrs[j][..dst.len()])`.
        ///
        /// Blocks of 8 vectors where the registers allow (fewer table and pointer loads per
        /// vector; else 4), then one pass over the rest: its whole vectors plus the last `W`
        /// bytes of `dst` as an overlapping window (see [`dot_pass`]), so no partial vector is
        /// needed unless `dst` is shorter than one vector.
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
            const B: usize = if WIDE { 8 } else { 4 };
            let n = dst.len();
            let d = dst.as_mut_ptr();
            if n < W {
                // SAFETY: forwarded contract.
                unsafe { dot_short(dst, ptrs, tabs) };
                return;
            }
            let last = n - W;
            // The original last window, for the case where it overlaps the final block below.
            // SAFETY: W <= n, so last..n is inside `dst`.
            let orig_last = unsafe { loadu(d.add(last)) };
            let mut o = 0;
            let g = ptrs.len().min(tabs.len());
            while n - o >= B * W {
                // SAFETY: o + B·W <= n: the B windows are inside `dst` and, by the contract,
                // inside every source; the first `g` tables are initialised.
                unsafe {
                    let mut a = [loadu(d.add(o)); B];
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
                o += B * W;
            }
            // SAFETY: o <= n, W <= n, `orig_last` is the original last window; forwarded
            // contract.
            unsafe { dot_rest(d, n, o, orig_last, ptrs, tabs) };
        }

        /// `dot_full` for `dst` shorter than one vector: one partial vector per source.
        ///
        /// # Safety
        /// As `dot_full`.
        #[target_feature(enable = $features)]
        unsafe fn dot_short(
            dst: &mut [u8],
            ptrs: &[*const u8],
            tabs: &[core::mem::MaybeUninit<Coef>],
        ) {
            let n = dst.len().min(W);
            let d = dst.as_mut_ptr();
            // SAFETY: n <= dst.len() bytes at the start of `dst` and (contract) of every source;
            // the partial primitives touch only those; the first `g` tables are initialised.
            unsafe {
                let mut a = load_partial(d, n);
                for j in 0..ptrs.len().min(tabs.len()) {
                    let t = tabs.get_unchecked(j).assume_init();
                    a = mul_xor(t, load_partial(*ptrs.get_unchecked(j), n), a);
                }
                store_partial(d, a, n);
            }
        }

        /// The rest of `dot_full` after its blocks: bytes `o..n` of the destination at `d`.
        ///
        /// # Safety
        /// `W <= n`, `o <= n`, bytes `o..n` of the destination are still original and
        /// `orig_last` holds the original bytes `n - W..n`; `d`, `ptrs` and `tabs` satisfy
        /// `dot_full`'s contract for a destination of `n` bytes.
        #[target_feature(enable = $features)]
        unsafe fn dot_rest(
            d: *mut u8,
            n: usize,
            o: usize,
            orig_last: V,
            ptrs: &[*const u8],
            tabs: &[core::mem::MaybeUninit<Coef>],
        ) {
            let last = n - W;
            if o == n {
                return;
            }
            if o > 0 && n - o < W {
                // Fewer than W bytes remain after a block: the last window overlaps bytes that
                // block already stored, so it starts from the original bytes saved before it.
                // SAFETY: last..n is inside `dst` and every source; tables initialised (contract).
                unsafe {
                    let mut a = orig_last;
                    for j in 0..ptrs.len().min(tabs.len()) {
                        let t = tabs.get_unchecked(j).assume_init();
                        a = mul_xor(t, loadu(ptrs.get_unchecked(j).add(last)), a);
                    }
                    storeu(d.add(last), a);
                }
                return;
            }
            // W <= n - o < 8·W, or o = 0: ceil((n - o) / W) <= 8 windows in one pass, the last
            // one ending at n and overlapping only windows of the same pass.
            let m = (n - o).div_ceil(W);
            let at = |i: usize| (o + i * W).min(last);
            // SAFETY (every arm): each window at(i) = min(o + i·W, n - W) starts at or after 0
            // and ends at or before n: inside `dst` and every source.
            unsafe {
                match m {
                    0 => {}
                    1 => dot_pass::<1>(d, [at(0)], ptrs, tabs),
                    2 => dot_pass::<2>(d, [at(0), at(1)], ptrs, tabs),
                    3 => dot_pass::<3>(d, [at(0), at(1), at(2)], ptrs, tabs),
                    4 => dot_pass::<4>(d, [at(0), at(1), at(2), at(3)], ptrs, tabs),
                    5 => dot_pass::<5>(d, core::array::from_fn(at), ptrs, tabs),
                    6 => dot_pass::<6>(d, core::array::from_fn(at), ptrs, tabs),
                    7 => dot_pass::<7>(d, core::array::from_fn(at), ptrs, tabs),
                    _ => dot_pass::<8>(d, core::array::from_fn(at), ptrs, tabs),
                }
            }
        }
    };
}

pub(crate) use region_kernels;
