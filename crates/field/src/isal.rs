//! Intel ISA-L's GF(2^8) kernels, for side-by-side benchmarks and as an independent oracle in
//! tests. Only with the `isal` feature, which links the system `libisal` (Debian `libisal-dev`,
//! ISA-L 2.30); the product never enables it.
//!
//! ISA-L's erasure-code field is ours (polynomial `0x11D`), and its per-coefficient table
//! (`gf_vect_mul_init`, 32 bytes: `c·i` then `c·(i << 4)` for `i < 16`) is our split-nibble
//! `NIBBLE[c]`, so results are comparable byte for byte. Two kernels are wrapped, the AVX2
//! versions named explicitly so that a comparison is tier against tier:
//!
//! * `gf_vect_mad_avx2(len, vec, vec_i, tables, src, dest)`: `dest ^= c·src`, the
//!   counterpart of [`Kernels::mul_add`](crate::Kernels::mul_add);
//! * `gf_vect_dot_prod_avx2(len, vlen, tables, srcs, dest)`: `dest = Σ c_k·srcs[k]` (it
//!   *overwrites* `dest`, where our `dot` accumulates into it).
//!
//! Tables are built once by [`IsalCoefs::new`] (`ec_init_tables`), outside any timed loop, which
//! is how ISA-L is meant to be used; our kernels build theirs inside every call.

use std::os::raw::{c_int, c_uchar};

/// Most sources [`dot_prod_avx2`] accepts (its pointer array lives on the stack).
pub const MAX_SOURCES: usize = 64;
/// Shortest region ISA-L's AVX2 kernels accept (ISA-L 2.30: `len >= 32`; its generic
/// dispatchers ask for 64, which is what we require).
pub const MIN_LEN: usize = 64;

#[link(name = "isal")]
unsafe extern "C" {
    fn ec_init_tables(k: c_int, rows: c_int, a: *mut c_uchar, gftbls: *mut c_uchar);
    fn gf_vect_mad_avx2(
        len: c_int,
        vec: c_int,
        vec_i: c_int,
        gftbls: *mut c_uchar,
        src: *mut c_uchar,
        dest: *mut c_uchar,
    );
    fn gf_vect_dot_prod_avx2(
        len: c_int,
        vlen: c_int,
        gftbls: *mut c_uchar,
        src: *mut *mut c_uchar,
        dest: *mut c_uchar,
    );
}

/// Why an ISA-L call was refused (nothing was written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsalError {
    /// This CPU lacks AVX2.
    NoAvx2,
    /// The region is shorter than [`MIN_LEN`] or longer than `i32::MAX`.
    Length(usize),
    /// More than [`MAX_SOURCES`] sources, or not one coefficient per source, or a coefficient
    /// index out of range.
    Sources(usize),
    /// A source is shorter than the destination.
    ShortSource(usize),
}

impl std::fmt::Display for IsalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IsalError::NoAvx2 => write!(f, "ISA-L AVX2 kernels need an AVX2 CPU"),
            IsalError::Length(n) => write!(f, "ISA-L needs {MIN_LEN}..=2^31-1 bytes, got {n}"),
            IsalError::Sources(n) => write!(f, "bad source/coefficient count or index {n}"),
            IsalError::ShortSource(k) => write!(f, "source {k} is shorter than the destination"),
        }
    }
}

impl std::error::Error for IsalError {}

/// ISA-L's expanded tables for a list of coefficients (`ec_init_tables`, 32 bytes each).
#[derive(Debug, Clone)]
pub struct IsalCoefs {
    tables: Vec<u8>,
    count: usize,
}

impl IsalCoefs {
    /// Tables for `coefs` (at most [`MAX_SOURCES`]).
    pub fn new(coefs: &[u8]) -> Result<IsalCoefs, IsalError> {
        if coefs.len() > MAX_SOURCES {
            return Err(IsalError::Sources(coefs.len()));
        }
        let mut a = coefs.to_vec();
        let mut tables = vec![0u8; 32 * coefs.len()];
        if !coefs.is_empty() {
            // SAFETY: `ec_init_tables(k, 1, a, g)` reads k bytes of `a` and writes 32·k bytes of
            // `g` (ISA-L erasure_code.h); both buffers have exactly that size, k <= 64.
            unsafe { ec_init_tables(coefs.len() as c_int, 1, a.as_mut_ptr(), tables.as_mut_ptr()) };
        }
        Ok(IsalCoefs {
            tables,
            count: coefs.len(),
        })
    }

    /// ISA-L's 32-byte table of coefficient `k`.
    pub fn table(&self, k: usize) -> Option<&[u8]> {
        self.tables.get(32 * k..32 * k + 32)
    }
}

fn check_len(n: usize) -> Result<c_int, IsalError> {
    if !std::is_x86_feature_detected!("avx2") {
        return Err(IsalError::NoAvx2);
    }
    if n < MIN_LEN {
        return Err(IsalError::Length(n));
    }
    c_int::try_from(n).map_err(|_| IsalError::Length(n))
}

/// `dst[i] ^= coefs[k]·src[i]` for `i < min(dst.len(), src.len())`, by `gf_vect_mad_avx2`.
pub fn mad_avx2(dst: &mut [u8], src: &[u8], coefs: &IsalCoefs, k: usize) -> Result<(), IsalError> {
    let len = check_len(dst.len().min(src.len()))?;
    if k >= coefs.count {
        return Err(IsalError::Sources(k));
    }
    // SAFETY: the CPU has AVX2 (checked); ISA-L reads `len` bytes of `src` and of the 32-byte
    // table at `gftbls + 32·vec_i` (k < count, so inside `tables`, which holds 32·count bytes)
    // and reads/writes `len` bytes of `dest`; len <= both slice lengths. `src` is only read
    // although the C prototype is not const; `&mut dst` cannot alias `src`.
    unsafe {
        gf_vect_mad_avx2(
            len,
            coefs.count as c_int,
            k as c_int,
            coefs.tables.as_ptr().cast_mut(),
            src.as_ptr().cast_mut(),
            dst.as_mut_ptr(),
        )
    };
    Ok(())
}

/// `dst = Σ_k coefs[k]·srcs[k][..dst.len()]` (overwrites `dst`), by `gf_vect_dot_prod_avx2`.
/// Needs one coefficient per source and every source at least as long as `dst`.
pub fn dot_prod_avx2(dst: &mut [u8], srcs: &[&[u8]], coefs: &IsalCoefs) -> Result<(), IsalError> {
    let len = check_len(dst.len())?;
    if srcs.len() != coefs.count || srcs.is_empty() {
        return Err(IsalError::Sources(srcs.len()));
    }
    let mut ptrs = [core::ptr::null_mut::<u8>(); MAX_SOURCES];
    for (k, (p, s)) in ptrs.iter_mut().zip(srcs).enumerate() {
        if s.len() < dst.len() {
            return Err(IsalError::ShortSource(k));
        }
        *p = s.as_ptr().cast_mut();
    }
    // SAFETY: AVX2 checked; ISA-L reads `len` bytes through each of the first `vlen` pointers
    // (each a live source of >= len bytes, only read), 32·vlen table bytes (`tables` holds
    // exactly that, vlen = count = srcs.len() <= 64) and writes `len` bytes of `dst`, which
    // cannot alias the shared sources.
    unsafe {
        gf_vect_dot_prod_avx2(
            len,
            srcs.len() as c_int,
            coefs.tables.as_ptr().cast_mut(),
            ptrs.as_mut_ptr(),
            dst.as_mut_ptr(),
        )
    };
    Ok(())
}
