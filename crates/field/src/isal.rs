//! Intel ISA-L's GF(2^8) kernels, for side-by-side benchmarks and as an independent oracle in
//! tests. Only with the `isal` feature, which links the system `libisal` (Debian `libisal-dev`,
//! ISA-L 2.30); the product never enables it.
//!
//! ISA-L's erasure-code field is ours (polynomial `0x11D`), and its per-coefficient table
//! (`gf_vect_mul_init`, 32 bytes: `c·i` then `c·(i << 4)` for `i < 16`) is our split-nibble
//! `NIBBLE[c]`, so results are comparable byte for byte. Two kernels are wrapped, each in its
//! AVX2 and its AVX-512 version ([`IsalIsa`]), named explicitly so that a comparison is tier
//! against tier (ISA-L 2.30 has no GFNI kernels):
//!
//! * `gf_vect_mad_{avx2,avx512}(len, vec, vec_i, tables, src, dest)`: `dest ^= c·src`, the
//!   counterpart of [`Kernels::mul_add`](crate::Kernels::mul_add);
//! * `gf_vect_dot_prod_{avx2,avx512}(len, vlen, tables, srcs, dest)`: `dest = Σ c_k·srcs[k]`
//!   (it *overwrites* `dest`, where our `dot` accumulates into it).
//!
//! The AVX-512 versions take the same arguments as the AVX2 ones (prototypes in ISA-L 2.30's
//! `erasure_code/ec_highlevel_func.c`; the dot product returns 0, or 1 when it refused the
//! length). Their assembly (`gf_vect_{mad,dot_prod}_avx512.asm`) handles any length from 64 (the
//! dot product also 32..64 with 32-byte vectors) with a last overlapping 64-byte window, and
//! uses AVX-512F/BW/VL instructions and BMI2's `sarx`, which is what [`IsalIsa::Avx512`] checks.
//! All four read their `int` arguments as 64-bit registers; every one passed here is a
//! non-negative `usize` below 2^31 narrowed to `c_int`, as in ISA-L's own C callers.
//!
//! Tables are built once by [`IsalCoefs::new`] (`ec_init_tables`), outside any timed loop, which
//! is how ISA-L is meant to be used; our kernels build theirs inside every call.

use std::os::raw::{c_int, c_uchar};

/// Most sources [`dot_prod`] accepts (its pointer array lives on the stack).
pub const MAX_SOURCES: usize = 64;
/// Shortest region the wrappers accept. ISA-L 2.30's AVX2 kernels and `gf_vect_dot_prod_avx512`
/// take `len >= 32`, `gf_vect_mad_avx512` `len >= 64` (its `ec_encode_data*_avx512` dispatchers
/// call the AVX-512 kernels only from 64 bytes); we require 64 of all four, so that every version
/// accepts the same lengths.
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
    fn gf_vect_mad_avx512(
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
    fn gf_vect_dot_prod_avx512(
        len: c_int,
        vlen: c_int,
        gftbls: *mut c_uchar,
        src: *mut *mut c_uchar,
        dest: *mut c_uchar,
    ) -> c_int;
}

/// Which instruction-set version of ISA-L's kernels to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IsalIsa {
    /// `gf_vect_mad_avx2` / `gf_vect_dot_prod_avx2`; needs AVX2.
    Avx2,
    /// `gf_vect_mad_avx512` / `gf_vect_dot_prod_avx512`; needs AVX-512F, AVX-512BW,
    /// AVX-512VL and BMI2 (the instructions its assembly uses).
    Avx512,
}

impl IsalIsa {
    /// Both versions, narrowest first.
    pub const ALL: [IsalIsa; 2] = [IsalIsa::Avx2, IsalIsa::Avx512];

    /// `avx2` or `avx512`, the suffix of ISA-L's function names.
    pub fn name(self) -> &'static str {
        match self {
            IsalIsa::Avx2 => "avx2",
            IsalIsa::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run this version.
    pub fn is_available(self) -> bool {
        match self {
            IsalIsa::Avx2 => std::is_x86_feature_detected!("avx2"),
            IsalIsa::Avx512 => {
                std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
                    && std::is_x86_feature_detected!("avx512vl")
                    && std::is_x86_feature_detected!("bmi2")
            }
        }
    }

    fn check(self) -> Result<(), IsalError> {
        if self.is_available() {
            return Ok(());
        }
        Err(match self {
            IsalIsa::Avx2 => IsalError::NoAvx2,
            IsalIsa::Avx512 => IsalError::NoAvx512,
        })
    }
}

impl std::fmt::Display for IsalIsa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an ISA-L call was refused (nothing was written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsalError {
    /// This CPU lacks AVX2.
    NoAvx2,
    /// This CPU lacks AVX-512BW (or AVX-512F, AVX-512VL or BMI2, which ISA-L's AVX-512 kernels
    /// also use).
    NoAvx512,
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
            IsalError::NoAvx512 => write!(
                f,
                "ISA-L AVX-512 kernels need AVX-512F, AVX-512BW, AVX-512VL and BMI2"
            ),
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

fn check_len(isa: IsalIsa, n: usize) -> Result<c_int, IsalError> {
    isa.check()?;
    if n < MIN_LEN {
        return Err(IsalError::Length(n));
    }
    c_int::try_from(n).map_err(|_| IsalError::Length(n))
}

/// `dst[i] ^= coefs[k]·src[i]` for `i < min(dst.len(), src.len())`, by `gf_vect_mad_<isa>`.
pub fn mad(
    isa: IsalIsa,
    dst: &mut [u8],
    src: &[u8],
    coefs: &IsalCoefs,
    k: usize,
) -> Result<(), IsalError> {
    let len = check_len(isa, dst.len().min(src.len()))?;
    if k >= coefs.count {
        return Err(IsalError::Sources(k));
    }
    let (vec, vec_i) = (coefs.count as c_int, k as c_int);
    let tables = coefs.tables.as_ptr().cast_mut();
    let (s, d) = (src.as_ptr().cast_mut(), dst.as_mut_ptr());
    match isa {
        // SAFETY: the CPU has AVX2 (checked); ISA-L reads `len` bytes of `src` and of the
        // 32-byte table at `gftbls + 32·vec_i` (k < count, so inside `tables`, which holds
        // 32·count bytes) and reads/writes `len` bytes of `dest`; len <= both slice lengths.
        // `src` is only read although the C prototype is not const; `&mut dst` cannot alias
        // `src`.
        IsalIsa::Avx2 => unsafe { gf_vect_mad_avx2(len, vec, vec_i, tables, s, d) },
        // SAFETY: as for AVX2, with AVX-512F/BW/VL and BMI2 checked: the same bytes of `src`,
        // the table and `dest`, in 64-byte windows; the last window is the overlapping one at
        // `len - 64 >= 0` (its already-done bytes masked to zero in registers), never past `len`.
        IsalIsa::Avx512 => unsafe { gf_vect_mad_avx512(len, vec, vec_i, tables, s, d) },
    }
    Ok(())
}

/// [`mad`] by `gf_vect_mad_avx2`.
pub fn mad_avx2(dst: &mut [u8], src: &[u8], coefs: &IsalCoefs, k: usize) -> Result<(), IsalError> {
    mad(IsalIsa::Avx2, dst, src, coefs, k)
}

/// [`mad`] by `gf_vect_mad_avx512`.
pub fn mad_avx512(
    dst: &mut [u8],
    src: &[u8],
    coefs: &IsalCoefs,
    k: usize,
) -> Result<(), IsalError> {
    mad(IsalIsa::Avx512, dst, src, coefs, k)
}

/// `dst = Σ_k coefs[k]·srcs[k][..dst.len()]` (overwrites `dst`), by `gf_vect_dot_prod_<isa>`.
/// Needs one coefficient per source and every source at least as long as `dst`.
pub fn dot_prod(
    isa: IsalIsa,
    dst: &mut [u8],
    srcs: &[&[u8]],
    coefs: &IsalCoefs,
) -> Result<(), IsalError> {
    let len = check_len(isa, dst.len())?;
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
    let vlen = srcs.len() as c_int;
    let (tables, d) = (coefs.tables.as_ptr().cast_mut(), dst.as_mut_ptr());
    let refused = match isa {
        IsalIsa::Avx2 => {
            // SAFETY: AVX2 checked; ISA-L reads `len` bytes through each of the first `vlen`
            // pointers (each a live source of >= len bytes, only read), 32·vlen table bytes
            // (`tables` holds exactly that, vlen = count = srcs.len() in 1..=64) and writes
            // `len` bytes of `dst`, which cannot alias the shared sources.
            unsafe { gf_vect_dot_prod_avx2(len, vlen, tables, ptrs.as_mut_ptr(), d) };
            false
        }
        // SAFETY: as for AVX2, with AVX-512F/BW/VL and BMI2 checked: the same bytes, in 64-byte
        // windows, the last one overlapping at `len - 64 >= 0` (recomputed from the sources);
        // vlen >= 1, which its do-while loop over the sources needs.
        IsalIsa::Avx512 => unsafe {
            gf_vect_dot_prod_avx512(len, vlen, tables, ptrs.as_mut_ptr(), d) != 0
        },
    };
    // It refuses only `len < 32` (before writing anything), which `check_len` excluded.
    if refused {
        return Err(IsalError::Length(dst.len()));
    }
    Ok(())
}

/// [`dot_prod`] by `gf_vect_dot_prod_avx2`.
pub fn dot_prod_avx2(dst: &mut [u8], srcs: &[&[u8]], coefs: &IsalCoefs) -> Result<(), IsalError> {
    dot_prod(IsalIsa::Avx2, dst, srcs, coefs)
}

/// [`dot_prod`] by `gf_vect_dot_prod_avx512`.
pub fn dot_prod_avx512(dst: &mut [u8], srcs: &[&[u8]], coefs: &IsalCoefs) -> Result<(), IsalError> {
    dot_prod(IsalIsa::Avx512, dst, srcs, coefs)
}
