//! The region-kernel part of `tcpnc bench codec`: our `mul_add` and W-source `dot` beside Intel
//! ISA-L's (`gf_vect_mad_avx2` / `gf_vect_dot_prod_avx2` and `gf_vect_mad_avx512` /
//! `gf_vect_dot_prod_avx512`; feature `isal`, which links Debian's `libisal-dev`, ISA-L 2.30) on
//! the same buffers, in the same run, at a packet size and at a 64 KiB block (issue 14, "Codec").
//!
//! * GB/s are 10^9 bytes/s of the destination for `mul_add`, of *source* bytes (W × size) for
//!   `dot`, for every implementation.
//! * Ours runs on the process's selected tier ([`tcpnc_field::selected_tier`]); ISA-L's kernels
//!   are named explicitly, so compare its AVX2 column with the `avx2` tier (`--tier avx2`) and its
//!   AVX-512 column with `avx512bw` (ISA-L 2.30 has no GFNI kernels).
//! * ISA-L's tables are built once, outside the timed loop (its intended use); ours are built
//!   inside every call. ISA-L's `dot` overwrites the destination, ours accumulates into it.
//! * The implementations alternate in three rounds each (ours, ISA-L AVX2, ISA-L AVX-512, ours,
//!   …) and each keeps its best rate, so a burst of load from other processes cannot favour one
//!   of them.

use std::hint::black_box;
use std::time::Duration;

#[cfg(all(feature = "isal", target_arch = "x86_64"))]
use tcpnc_field::isal::{self, IsalIsa};

use super::rate;

/// Region sizes compared: a packet (1400 B, a typical tunnel payload) and a 64 KiB block.
pub const KERNEL_SIZES: [usize; 2] = [1400, 65536];
/// Source counts of the `dot` comparison.
pub const DOT_SOURCES: [usize; 3] = [8, 12, 16];
/// Alternating rounds per implementation.
const ROUNDS: u32 = 3;

/// One point of the kernel comparison.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct KernelFigure {
    /// `mul_add` or `dot`.
    pub kernel: &'static str,
    /// Sources combined (1 for `mul_add`).
    pub sources: usize,
    /// Bytes per region.
    pub bytes: usize,
    /// Ours, GB/s.
    pub tcpnc_gbps: f64,
    /// ISA-L's AVX2 kernel, GB/s; `None` when not built in (feature `isal`) or no AVX2.
    pub isal_gbps: Option<f64>,
    /// ISA-L's AVX-512 kernel, GB/s; `None` when not built in (feature `isal`) or no
    /// AVX-512BW (see [`isal_avx512_status`]).
    pub isal_avx512_gbps: Option<f64>,
}

/// What the ISA-L AVX2 column (`isal_gbps`) holds, or why it is empty.
pub fn isal_status() -> String {
    column_status(false)
}

/// What the ISA-L AVX-512 column (`isal_avx512_gbps`) holds, or why it is empty.
pub fn isal_avx512_status() -> String {
    column_status(true)
}

#[cfg(all(feature = "isal", target_arch = "x86_64"))]
fn column_status(avx512: bool) -> String {
    let isa = if avx512 {
        IsalIsa::Avx512
    } else {
        IsalIsa::Avx2
    };
    if isa.is_available() {
        format!("ISA-L 2.30 (system libisal) gf_vect_mad_{isa} / gf_vect_dot_prod_{isa}")
    } else if avx512 {
        "absent: this CPU lacks AVX-512BW (or AVX-512VL / BMI2)".to_owned()
    } else {
        "absent: this CPU lacks AVX2".to_owned()
    }
}

#[cfg(not(all(feature = "isal", target_arch = "x86_64")))]
fn column_status(_avx512: bool) -> String {
    "absent: built without feature `isal` (needs libisal-dev)".to_owned()
}

/// Multiplies in one step of [`measure_clock_ghz`].
const CHAIN: u32 = 3000;

/// The core clock while this thread runs, in GHz, estimated from a chain of dependent 64-bit
/// multiplies: `imul r64, r64` has a latency of 3 cycles on every x86-64 core since Nehalem and
/// Zen (Agner Fog, instruction tables), so calls/s × 3 × [`CHAIN`] is cycles/s. Used to turn
/// GB/s into bytes per cycle, which is what the per-tier bounds in `docs/field.md` are in.
/// (Meaningless off x86-64.)
pub fn measure_clock_ghz(budget: Duration, now: &mut dyn FnMut() -> Duration) -> f64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    let calls = rate(budget, now, || {
        for _ in 0..CHAIN {
            // Odd stays odd, so the chain never collapses to a constant.
            x = x.wrapping_mul(x);
        }
    });
    black_box(x);
    calls * f64::from(3 * CHAIN) / 1e9
}

/// Whether the ISA-L AVX2 column is measured.
pub fn isal_runs() -> bool {
    isal_status().starts_with("ISA-L")
}

/// Whether the ISA-L AVX-512 column is measured.
pub fn isal_avx512_runs() -> bool {
    isal_avx512_status().starts_with("ISA-L")
}

/// The ISA-L kernels of one point (AVX2, AVX-512), each `None` when its column is absent.
type Theirs<'a> = [Option<&'a mut dyn FnMut()>; 2];

/// A 64-byte-aligned buffer of `len` pseudo-random bytes (a window into a larger `Vec`).
struct Aligned {
    buf: Vec<u8>,
    start: usize,
    len: usize,
}

impl Aligned {
    fn new(seed: u64, len: usize) -> Aligned {
        let mut rng = crate::SplitMix64::new(seed);
        let buf: Vec<u8> = (0..len + 64).map(|_| rng.next_u64() as u8).collect();
        let start = buf.as_ptr().align_offset(64).min(64);
        Aligned { buf, start, len }
    }
    fn get(&self) -> &[u8] {
        &self.buf[self.start..self.start + self.len]
    }
    fn get_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..self.start + self.len]
    }
}

/// Best calls/s of `ours` and of each of `theirs` that is present, alternating rounds of
/// `budget / ROUNDS`.
fn side_by_side(
    budget: Duration,
    now: &mut dyn FnMut() -> Duration,
    mut ours: impl FnMut(),
    mut theirs: Theirs<'_>,
) -> (f64, [Option<f64>; 2]) {
    let round = budget / ROUNDS;
    let (mut a, mut b) = (0.0f64, [None::<f64>; 2]);
    for _ in 0..ROUNDS {
        a = a.max(rate(round, now, &mut ours));
        for (f, b) in theirs.iter_mut().zip(&mut b) {
            if let Some(f) = f.as_deref_mut() {
                let r = rate(round, now, f);
                *b = Some(b.map_or(r, |b| b.max(r)));
            }
        }
    }
    (a, b)
}

/// Measures every point of the comparison with `budget` per implementation and point.
pub fn measure_kernels(budget: Duration, now: &mut dyn FnMut() -> Duration) -> Vec<KernelFigure> {
    let mut figures = Vec::new();
    for bytes in KERNEL_SIZES {
        figures.push(measure_mul_add(budget, bytes, now));
        for sources in DOT_SOURCES {
            figures.push(measure_dot(budget, bytes, sources, now));
        }
    }
    figures
}

fn measure_mul_add(
    budget: Duration,
    bytes: usize,
    now: &mut dyn FnMut() -> Duration,
) -> KernelFigure {
    let src = Aligned::new(1, bytes);
    let dst = std::cell::RefCell::new(Aligned::new(2, bytes));
    let c = 0x57;
    let ours = || tcpnc_field::mul_add(dst.borrow_mut().get_mut(), black_box(src.get()), c);
    #[cfg(all(feature = "isal", target_arch = "x86_64"))]
    let tables = isal::IsalCoefs::new(&[c]).ok();
    #[cfg(all(feature = "isal", target_arch = "x86_64"))]
    let theirs = |isa: IsalIsa| {
        let (tables, dst, src) = (&tables, &dst, &src);
        move || {
            if let Some(t) = tables {
                let mut dst = dst.borrow_mut();
                let _ = isal::mad(isa, dst.get_mut(), black_box(src.get()), t, 0);
            }
        }
    };
    #[cfg(all(feature = "isal", target_arch = "x86_64"))]
    let (mut avx2, mut avx512) = (theirs(IsalIsa::Avx2), theirs(IsalIsa::Avx512));
    #[cfg(all(feature = "isal", target_arch = "x86_64"))]
    let theirs: Theirs<'_> = [
        isal_runs().then_some(&mut avx2),
        isal_avx512_runs().then_some(&mut avx512),
    ];
    #[cfg(not(all(feature = "isal", target_arch = "x86_64")))]
    let theirs: Theirs<'_> = [None, None];
    let (a, [b, b512]) = side_by_side(budget, now, ours, theirs);
    let gbps = |calls: f64| calls * bytes as f64 / 1e9;
    KernelFigure {
        kernel: "mul_add",
        sources: 1,
        bytes,
        tcpnc_gbps: gbps(a),
        isal_gbps: b.map(gbps),
        isal_avx512_gbps: b512.map(gbps),
    }
}

fn measure_dot(
    budget: Duration,
    bytes: usize,
    sources: usize,
    now: &mut dyn FnMut() -> Duration,
) -> KernelFigure {
    let pool: Vec<Aligned> = (0..sources as u64)
        .map(|k| Aligned::new(10 + k, bytes))
        .collect();
    let srcs: Vec<&[u8]> = pool.iter().map(Aligned::get).collect();
    let coefs: Vec<u8> = (0..sources)
        .map(|k| (k as u8).wrapping_mul(37) | 2)
        .collect();
    let dst = std::cell::RefCell::new(Aligned::new(3, bytes));
    let ours = || {
        tcpnc_field::dot(
            dst.borrow_mut().get_mut(),
            black_box(&srcs),
            black_box(&coefs),
        )
    };
    #[cfg(all(feature = "isal", target_arch = "x86_64"))]
    let tables = isal::IsalCoefs::new(&coefs).ok();
    #[cfg(all(feature = "isal", target_arch = "x86_64"))]
    let theirs = |isa: IsalIsa| {
        let (tables, dst, srcs) = (&tables, &dst, &srcs);
        move || {
            if let Some(t) = tables {
                let _ = isal::dot_prod(isa, dst.borrow_mut().get_mut(), black_box(srcs), t);
            }
        }
    };
    #[cfg(all(feature = "isal", target_arch = "x86_64"))]
    let (mut avx2, mut avx512) = (theirs(IsalIsa::Avx2), theirs(IsalIsa::Avx512));
    #[cfg(all(feature = "isal", target_arch = "x86_64"))]
    let theirs: Theirs<'_> = [
        isal_runs().then_some(&mut avx2),
        isal_avx512_runs().then_some(&mut avx512),
    ];
    #[cfg(not(all(feature = "isal", target_arch = "x86_64")))]
    let theirs: Theirs<'_> = [None, None];
    let (a, [b, b512]) = side_by_side(budget, now, ours, theirs);
    let gbps = |calls: f64| calls * (sources * bytes) as f64 / 1e9;
    KernelFigure {
        kernel: "dot",
        sources,
        bytes,
        tcpnc_gbps: gbps(a),
        isal_gbps: b.map(gbps),
        isal_avx512_gbps: b512.map(gbps),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_point_is_measured_and_isal_is_present_exactly_when_built_in() {
        let mut t = Duration::ZERO;
        let mut clock = move || {
            t += Duration::from_micros(500);
            t
        };
        let figures = measure_kernels(Duration::from_millis(2), &mut clock);
        assert_eq!(figures.len(), KERNEL_SIZES.len() * (1 + DOT_SOURCES.len()));
        let (with_isal, with_avx512) = (isal_runs(), isal_avx512_runs());
        for f in &figures {
            assert!(f.tcpnc_gbps > 0.0, "{f:?}");
            assert_eq!(f.isal_gbps.is_some(), with_isal, "{f:?}");
            assert_eq!(f.isal_avx512_gbps.is_some(), with_avx512, "{f:?}");
            assert!(
                f.isal_gbps
                    .into_iter()
                    .chain(f.isal_avx512_gbps)
                    .all(|g| g > 0.0)
            );
        }
        assert!(
            figures
                .iter()
                .any(|f| f.kernel == "dot" && f.sources == 16 && f.bytes == 65536)
        );
    }
}
