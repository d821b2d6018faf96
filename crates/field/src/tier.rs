//! Implementation tiers: run-time CPU detection, the once-per-process choice, and forcing.
//!
//! The tier is chosen the first time any region kernel (or [`selected_tier`]) runs:
//!
//! 1. If the environment variable [`TIER_ENV`] (`TCPNC_GF_TIER`) is set to a tier name
//!    ([`Tier::name`]) and that tier is available on this CPU, it is used.
//! 2. Otherwise the best available tier in [`Tier::ALL`] order is used. A request that could not
//!    be honoured (unknown name, or a tier this CPU lacks) is *not* an error: the process runs on
//!    the best available tier, and [`tier_selection`] reports what was asked for and why it fell
//!    back ([`Selection::fallback`]). Empty or `auto` means "no request".
//!
//! [`force_tier`] switches tiers later (benchmarks, `tcpnc bench --tier`); it refuses tiers the
//! CPU lacks, so the tier in use is always one whose instructions exist.

#![forbid(unsafe_code)]

use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

/// Environment variable that forces a tier by name, read once at first selection.
pub const TIER_ENV: &str = "TCPNC_GF_TIER";

/// An implementation tier of the region kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Tier {
    /// Portable table-driven code (`MUL[c][x]` per byte). Always available.
    Scalar = 0,
    /// 128-bit split-nibble `pshufb` (SSSE3).
    Ssse3 = 1,
    /// 256-bit split-nibble `vpshufb` (AVX2).
    Avx2 = 2,
    /// 512-bit split-nibble `vpshufb` (AVX-512F + AVX-512BW), masked tails.
    Avx512bw = 3,
    /// 256-bit `vgf2p8affineqb` (GFNI + AVX; the integer XOR/broadcast also need AVX2, which every
    /// GFNI+AVX CPU has).
    GfniAvx = 4,
    /// 512-bit `vgf2p8affineqb` (GFNI + AVX-512F + AVX-512BW), masked tails.
    GfniAvx512 = 5,
}

impl Tier {
    /// Every tier, in order of preference (fastest first). Automatic selection picks the first
    /// available one.
    pub const ALL: [Tier; 6] = [
        Tier::GfniAvx512,
        Tier::GfniAvx,
        Tier::Avx512bw,
        Tier::Avx2,
        Tier::Ssse3,
        Tier::Scalar,
    ];

    /// Stable lower-case name, used in benchmark output and `TCPNC_GF_TIER`.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Scalar => "scalar",
            Tier::Ssse3 => "ssse3",
            Tier::Avx2 => "avx2",
            Tier::Avx512bw => "avx512bw",
            Tier::GfniAvx => "gfni-avx",
            Tier::GfniAvx512 => "gfni-avx512",
        }
    }

    /// Parses a [`name`](Tier::name); ASCII case and surrounding whitespace are ignored and `_`
    /// may stand for `-`.
    pub fn from_name(name: &str) -> Option<Tier> {
        let name = name.trim();
        Tier::ALL.into_iter().find(|t| {
            let want = t.name().as_bytes();
            name.len() == want.len()
                && name.bytes().zip(want).all(|(a, &b)| {
                    let a = a.to_ascii_lowercase();
                    a == b || (a == b'_' && b == b'-')
                })
        })
    }

    /// The CPU features the tier needs (as `is_x86_feature_detected!` spells them).
    pub fn required_features(self) -> &'static [&'static str] {
        match self {
            Tier::Scalar => &[],
            Tier::Ssse3 => &["ssse3"],
            Tier::Avx2 => &["avx2"],
            Tier::Avx512bw => &["avx512f", "avx512bw"],
            Tier::GfniAvx => &["gfni", "avx", "avx2"],
            Tier::GfniAvx512 => &["gfni", "avx512f", "avx512bw"],
        }
    }

    /// Whether this CPU (and OS, for the AVX register state) can run the tier.
    /// `std`'s detection caches its answer, so this is cheap after the first call.
    pub fn is_available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                Tier::Scalar => true,
                Tier::Ssse3 => std::is_x86_feature_detected!("ssse3"),
                Tier::Avx2 => std::is_x86_feature_detected!("avx2"),
                Tier::Avx512bw => {
                    std::is_x86_feature_detected!("avx512f")
                        && std::is_x86_feature_detected!("avx512bw")
                }
                Tier::GfniAvx => {
                    std::is_x86_feature_detected!("gfni")
                        && std::is_x86_feature_detected!("avx")
                        && std::is_x86_feature_detected!("avx2")
                }
                Tier::GfniAvx512 => {
                    std::is_x86_feature_detected!("gfni")
                        && std::is_x86_feature_detected!("avx512f")
                        && std::is_x86_feature_detected!("avx512bw")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Tier::Scalar
        }
    }

    /// The fastest tier this CPU can run.
    pub fn best_available() -> Tier {
        Tier::ALL
            .into_iter()
            .find(|t| t.is_available())
            .unwrap_or(Tier::Scalar)
    }

    fn from_index(i: u8) -> Tier {
        match i {
            1 => Tier::Ssse3,
            2 => Tier::Avx2,
            3 => Tier::Avx512bw,
            4 => Tier::GfniAvx,
            5 => Tier::GfniAvx512,
            _ => Tier::Scalar,
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tier was requested that this CPU cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TierUnavailable {
    /// The tier that was asked for.
    pub tier: Tier,
}

impl fmt::Display for TierUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GF(2^8) tier `{}` is not available on this CPU (needs {})",
            self.tier,
            self.tier.required_features().join(" + ")
        )
    }
}

impl std::error::Error for TierUnavailable {}

/// Why a `TCPNC_GF_TIER` request was not honoured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// The value is not a tier name.
    UnknownName,
    /// The named tier exists but this CPU cannot run it.
    Unavailable(Tier),
}

/// How the process-wide tier was chosen at first use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The tier chosen.
    pub tier: Tier,
    /// The `TCPNC_GF_TIER` value, if one was given (not empty, not `auto`).
    pub requested: Option<String>,
    /// Set when `requested` could not be honoured and `tier` is the best available instead.
    pub fallback: Option<Fallback>,
}

impl Selection {
    /// What a `TCPNC_GF_TIER` value would select on this CPU (pure; no global state).
    pub fn resolve(requested: Option<&str>) -> Selection {
        let requested = requested
            .map(str::trim)
            .filter(|r| !r.is_empty() && !r.eq_ignore_ascii_case("auto"));
        let Some(requested) = requested else {
            return Selection {
                tier: Tier::best_available(),
                requested: None,
                fallback: None,
            };
        };
        let (tier, fallback) = match Tier::from_name(requested) {
            Some(t) if t.is_available() => (t, None),
            Some(t) => (Tier::best_available(), Some(Fallback::Unavailable(t))),
            None => (Tier::best_available(), Some(Fallback::UnknownName)),
        };
        Selection {
            tier,
            requested: Some(requested.to_owned()),
            fallback,
        }
    }

    /// Whether a request was made and not honoured.
    pub fn fell_back(&self) -> bool {
        self.fallback.is_some()
    }
}

const UNSET: u8 = u8::MAX;
/// The tier in use; `UNSET` until first selection. Only ever holds available tiers.
static CURRENT: AtomicU8 = AtomicU8::new(UNSET);
static INITIAL: OnceLock<Selection> = OnceLock::new();

/// The selection made from the environment at first use (later [`force_tier`] calls do not
/// change it). Use this to learn whether `TCPNC_GF_TIER` was honoured.
pub fn tier_selection() -> &'static Selection {
    INITIAL.get_or_init(|| {
        let env = std::env::var_os(TIER_ENV);
        let selection = Selection::resolve(env.as_ref().map(|v| v.to_string_lossy()).as_deref());
        // A `force_tier` racing with first use may already have stored a tier; keep it.
        let _ = CURRENT.compare_exchange(
            UNSET,
            selection.tier as u8,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        selection
    })
}

/// The tier the crate-level region functions use now.
#[inline]
pub fn selected_tier() -> Tier {
    let t = CURRENT.load(Ordering::Relaxed);
    if t != UNSET {
        return Tier::from_index(t);
    }
    tier_selection();
    Tier::from_index(CURRENT.load(Ordering::Relaxed))
}

/// Makes every later crate-level region call use `tier`, process-wide. Fails (and changes
/// nothing) if this CPU cannot run it. `force_tier(Tier::best_available())` restores the default.
pub fn force_tier(tier: Tier) -> Result<(), TierUnavailable> {
    if !tier.is_available() {
        return Err(TierUnavailable { tier });
    }
    tier_selection();
    CURRENT.store(tier as u8, Ordering::Relaxed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in Tier::ALL {
            assert_eq!(Tier::from_name(t.name()), Some(t));
            assert_eq!(
                Tier::from_name(&t.name().to_uppercase().replace('-', "_")),
                Some(t)
            );
            assert_eq!(Tier::from_index(t as u8), t);
        }
        assert_eq!(Tier::from_name("avx3"), None);
        assert_eq!(Tier::from_name(""), None);
    }

    #[test]
    fn resolve_honours_available_and_falls_back_otherwise() {
        let best = Tier::best_available();
        assert!(best.is_available());
        assert_eq!(Selection::resolve(None).tier, best);
        assert_eq!(Selection::resolve(Some(" auto ")).requested, None);
        let s = Selection::resolve(Some("scalar"));
        assert_eq!((s.tier, s.fallback), (Tier::Scalar, None));
        let s = Selection::resolve(Some("nonsense"));
        assert_eq!((s.tier, s.fallback), (best, Some(Fallback::UnknownName)));
        assert!(s.fell_back());
        for t in Tier::ALL {
            let s = Selection::resolve(Some(t.name()));
            if t.is_available() {
                assert_eq!((s.tier, s.fallback), (t, None));
            } else {
                assert_eq!((s.tier, s.fallback), (best, Some(Fallback::Unavailable(t))));
            }
        }
    }
}
