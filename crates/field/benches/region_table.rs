//! A preemption-robust throughput table for `docs/field.md`: for every available tier, the best
//! (minimum) time of many short batches of calls on cache-hot buffers of 1400 B (a packet) and
//! 64 KiB (a block). The minimum filters out time slices lost to other processes, which on a
//! shared machine distort criterion's means. With `--features isal`, Intel ISA-L's AVX2 kernels
//! (`gf_vect_mad_avx2`, `gf_vect_dot_prod_avx2`, tables precomputed) get a row of their own, and
//! so do its AVX-512 kernels (`gf_vect_mad_avx512`, `gf_vect_dot_prod_avx512`) on a CPU with
//! AVX-512BW.
//!
//! Run: `cargo bench -p tcpnc-field --bench region_table [--features isal]`.
//! GB/s are 10^9 bytes per second: `dst` bytes for memcpy / mul_add / mul_region, source bytes
//! (W × size) for dot.

mod common;

use std::hint::black_box;
use std::time::Instant;

use common::bytes;
use tcpnc_field::region::{Kernels, Tier, with_tier};

const SIZES: [usize; 2] = [1400, 65536];
const DOTS: [usize; 4] = [8, 12, 16, 64];

/// Best per-call time in nanoseconds over batches of calls, about 5 × 10^7 bytes processed per
/// batch set. (A fractional figure: at tens of GB/s a call takes a few ns, and whole nanoseconds
/// would quantise the table by 10 % or more.)
fn best(bytes: usize, mut f: impl FnMut()) -> f64 {
    let batch = (200_000 / bytes).clamp(4, 200) as u32;
    let batches = 300;
    for _ in 0..batch {
        f();
    }
    (0..batches)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed().as_secs_f64() * 1e9 / f64::from(batch)
        })
        .fold(f64::INFINITY, f64::min)
}

fn gbps(bytes: usize, ns: f64) -> String {
    format!("{:6.2}", bytes as f64 / ns)
}

/// `len + 64` bytes; [`window`] is the `len` of them that start at a 64-byte boundary (as in
/// `tcpnc bench codec`), so every run sees the same alignment.
fn aligned(seed: u64, len: usize) -> Vec<u8> {
    bytes(seed, len + 64)
}

fn window(v: &mut [u8], len: usize) -> &mut [u8] {
    let skip = v.as_ptr().align_offset(64).min(64);
    &mut v[skip..skip + len]
}

struct Data {
    len: usize,
    src: Vec<u8>,
    dst: Vec<u8>,
    sources: Vec<Vec<u8>>,
    coefs: Vec<u8>,
}

/// Whose kernels a row measures.
enum Impl {
    Ours(Kernels),
    /// ISA-L's AVX2 (`false`) or AVX-512 (`true`) kernels.
    Isal {
        avx512: bool,
    },
}

fn row(name: &str, d: &mut Data, which: Impl) -> String {
    let len = d.len;
    let mut cells = vec![name.to_owned()];
    let src = &*window(&mut d.src, len);
    let (sources, coefs) = (&d.sources, &d.coefs);
    let srcs: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
    let dst = window(&mut d.dst, len);
    if let Impl::Ours(k) = which {
        cells.push(gbps(
            len,
            best(len, || {
                k.mul_add(black_box(dst), black_box(src), black_box(0x53))
            }),
        ));
        cells.push(gbps(
            len,
            best(len, || k.mul_region(black_box(dst), black_box(0x53))),
        ));
        for w in DOTS {
            let t = best(w * len, || {
                k.dot(black_box(dst), black_box(&srcs[..w]), black_box(coefs))
            });
            cells.push(gbps(w * len, t));
        }
    } else if let Impl::Isal { avx512 } = which {
        isal_cells(avx512, &mut cells, len, dst, src, &srcs, coefs);
    }
    format!("| {} |", cells.join(" | "))
}

#[cfg(all(feature = "isal", target_arch = "x86_64"))]
fn isa(avx512: bool) -> tcpnc_field::isal::IsalIsa {
    use tcpnc_field::isal::IsalIsa;
    if avx512 {
        IsalIsa::Avx512
    } else {
        IsalIsa::Avx2
    }
}

/// Why ISA-L's AVX2 / AVX-512 row cannot run, if it cannot.
#[cfg(all(feature = "isal", target_arch = "x86_64"))]
fn isal_missing(avx512: bool) -> Option<String> {
    let isa = isa(avx512);
    (!isa.is_available()).then(|| format!("this CPU cannot run ISA-L's {isa} kernels"))
}

#[cfg(not(all(feature = "isal", target_arch = "x86_64")))]
fn isal_missing(_: bool) -> Option<String> {
    Some("built without feature `isal`".to_owned())
}

#[cfg(all(feature = "isal", target_arch = "x86_64"))]
fn isal_cells(
    avx512: bool,
    cells: &mut Vec<String>,
    len: usize,
    dst: &mut [u8],
    src: &[u8],
    srcs: &[&[u8]],
    coefs: &[u8],
) {
    use tcpnc_field::isal;
    let isa = isa(avx512);
    let one = isal::IsalCoefs::new(&coefs[..1]).unwrap();
    let t = best(len, || {
        isal::mad(isa, black_box(dst), black_box(src), &one, 0).unwrap()
    });
    cells.push(gbps(len, t));
    cells.push("—".to_owned());
    for w in DOTS {
        let tables = isal::IsalCoefs::new(&coefs[..w]).unwrap();
        let t = best(w * len, || {
            isal::dot_prod(isa, black_box(dst), black_box(&srcs[..w]), &tables).unwrap()
        });
        cells.push(gbps(w * len, t));
    }
}

#[cfg(not(all(feature = "isal", target_arch = "x86_64")))]
fn isal_cells(
    _: bool,
    _: &mut Vec<String>,
    _: usize,
    _: &mut [u8],
    _: &[u8],
    _: &[&[u8]],
    _: &[u8],
) {
}

fn main() {
    for len in SIZES {
        let mut d = Data {
            len,
            src: aligned(1, len),
            dst: aligned(2, len),
            sources: (0..64).map(|k| bytes(10 + k, len)).collect(),
            coefs: (0..64u8).map(|k| k.wrapping_mul(37) | 2).collect(),
        };
        let t = best(len, || {
            black_box(&mut d.dst[..len]).copy_from_slice(black_box(&d.src[..len]))
        });
        println!("\nmemcpy {len} B: {} GB/s ({t:.1} ns/call)\n", gbps(len, t));
        println!("| {len} B | mul_add | mul_region | dot W=8 | dot W=12 | dot W=16 | dot W=64 |");
        println!("| --- | --- | --- | --- | --- | --- | --- |");
        for tier in Tier::ALL {
            match with_tier(tier) {
                Ok(k) => println!("{}", row(tier.name(), &mut d, Impl::Ours(k))),
                Err(e) => println!("| {tier} | skipped: {e} | | | | | |"),
            }
        }
        if cfg!(all(feature = "isal", target_arch = "x86_64")) {
            for (avx512, name) in [(false, "ISA-L 2.30 avx2"), (true, "ISA-L 2.30 avx512")] {
                match isal_missing(avx512) {
                    None => println!("{}", row(name, &mut d, Impl::Isal { avx512 })),
                    Some(why) => println!("| {name} | skipped: {why} | | | | | |"),
                }
            }
        }
    }
}
