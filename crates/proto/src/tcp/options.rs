//! TCP options (RFC 9293 §3.2) and the SYN rewrite of the coding layer (paper §V-E, design
//! brief "The SYN path").
//!
//! Policy applied by [`rewrite_syn`] to every SYN and SYN-ACK crossing the gateway:
//!
//! * **MSS** (RFC 9293 §3.7.1): a present MSS above the configured maximum is lowered to it, so
//!   a coded packet (NC header + subheader + MSS bytes) fits the tunnel's path MTU. An absent MSS
//!   means the RFC default (536 for IPv4, 1220 for IPv6); only if that default exceeds the
//!   maximum is an MSS option inserted, and only into a run of at least four NOPs (which the
//!   removals below usually create), because growing the header would change every length.
//!   [`SynRewrite::mss_unclamped`] reports when that was impossible.
//! * **SACK-permitted** (RFC 2018) is overwritten with NOPs: SACK blocks would describe the
//!   receiving kernel's view of bytes that the decoder acknowledged before delivering (the
//!   seen-ACK, §IV-A), which the sender's TCP must not mix with the NC-ACKs. With SACK-permitted
//!   gone from the SYN, neither side sends SACK blocks (RFC 2018 §2), so later segments need no
//!   rewriting.
//! * **Timestamps** (RFC 7323 §3) are overwritten with NOPs: an NC-ACK is sent before the packet
//!   it acknowledges is decoded, so there is no TSval to echo (§V-E). RFC 7323 §3.2: timestamps
//!   are used only when both SYNs carried the option, so removing it from either SYN turns them
//!   off for the whole connection and later segments carry none.
//! * **Window scale** (RFC 7323 §2) is left in place and reported. Scaling is in force only when
//!   *both* the SYN and the SYN-ACK carry the option; the engine must record the shift from each
//!   direction's SYN and combine them with [`effective_window_shift`] (the shift applied to a
//!   window field is the one advertised by the side that sent that field).
//!
//! Options are replaced in place with NOPs of the same length, so the header length and IP
//! length never change; the TCP checksum is updated incrementally (RFC 1624), which keeps an
//! already-wrong checksum wrong rather than laundering it.

use super::TcpError;
use super::checksum::checksum_update_block;
use super::segment::{TCP_HEADER_MIN, TcpFlags, TcpPacket};

/// End of option list.
pub const OPT_EOL: u8 = 0;
/// No-operation (padding).
pub const OPT_NOP: u8 = 1;
/// Maximum segment size (length 4).
pub const OPT_MSS: u8 = 2;
/// Window scale (length 3).
pub const OPT_WSCALE: u8 = 3;
/// SACK permitted (length 2).
pub const OPT_SACK_PERMITTED: u8 = 4;
/// SACK blocks.
pub const OPT_SACK: u8 = 5;
/// Timestamps (length 10).
pub const OPT_TIMESTAMPS: u8 = 8;
/// Largest window shift honoured (RFC 7323 §2.3).
pub const MAX_WINDOW_SHIFT: u8 = 14;
/// Default send MSS without an MSS option, IPv4 (RFC 9293 §3.7.1).
pub const DEFAULT_MSS_V4: u16 = 536;
/// Default send MSS without an MSS option, IPv6 (RFC 8200 §5: 1280 − 60).
pub const DEFAULT_MSS_V6: u16 = 1220;

/// One option: kind, its bytes (kind and length included) and its offset in the option area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpOption<'a> {
    /// Option kind.
    pub kind: u8,
    /// Offset of the kind byte within the option area.
    pub offset: usize,
    /// All bytes of the option (one byte for EOL and NOP).
    pub bytes: &'a [u8],
}

/// Iterate the options of an option area. Stops after EOL; yields `Err(MalformedOptions)`
/// (once, then ends) for a length below 2 or running past the area.
pub fn options(area: &[u8]) -> impl Iterator<Item = Result<TcpOption<'_>, TcpError>> {
    let mut off = 0usize;
    let mut done = false;
    std::iter::from_fn(move || {
        if done || off >= area.len() {
            return None;
        }
        let kind = area[off];
        let len = match kind {
            OPT_EOL | OPT_NOP => 1,
            _ => match area.get(off + 1) {
                Some(&l) if l >= 2 && off + usize::from(l) <= area.len() => usize::from(l),
                _ => {
                    done = true;
                    return Some(Err(TcpError::MalformedOptions));
                }
            },
        };
        let opt = TcpOption {
            kind,
            offset: off,
            bytes: &area[off..off + len],
        };
        off += len;
        done = kind == OPT_EOL;
        Some(Ok(opt))
    })
}

/// What an option area announces. Options of a known kind with a wrong length are ignored, as
/// Linux does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OptionSummary {
    /// MSS value.
    pub mss: Option<u16>,
    /// Window-scale shift as advertised (may exceed 14; see [`effective_window_shift`]).
    pub window_scale: Option<u8>,
    /// SACK-permitted present.
    pub sack_permitted: bool,
    /// SACK blocks present.
    pub sack_blocks: bool,
    /// Timestamps present.
    pub timestamps: bool,
}

/// Summarise an option area.
pub fn scan_options(area: &[u8]) -> Result<OptionSummary, TcpError> {
    let mut s = OptionSummary::default();
    for o in options(area) {
        let o = o?;
        match (o.kind, o.bytes.len()) {
            (OPT_MSS, 4) => s.mss = Some(u16::from_be_bytes([o.bytes[2], o.bytes[3]])),
            (OPT_WSCALE, 3) => s.window_scale = Some(o.bytes[2]),
            (OPT_SACK_PERMITTED, 2) => s.sack_permitted = true,
            (OPT_SACK, _) => s.sack_blocks = true,
            (OPT_TIMESTAMPS, 10) => s.timestamps = true,
            _ => {}
        }
    }
    Ok(s)
}

/// The shift to apply to window fields sent by one side (RFC 7323 §2.2–2.3): that side's own
/// advertised shift, but only when both SYNs carried the option; capped at 14; 0 otherwise.
pub fn effective_window_shift(own: Option<u8>, peer: Option<u8>) -> u8 {
    match (own, peer) {
        (Some(s), Some(_)) => s.min(MAX_WINDOW_SHIFT),
        _ => 0,
    }
}

/// What [`rewrite_syn`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynPolicy {
    /// Largest MSS allowed through.
    pub max_mss: u16,
    /// Overwrite SACK-permitted with NOPs.
    pub remove_sack_permitted: bool,
    /// Overwrite timestamps with NOPs.
    pub remove_timestamps: bool,
}

impl SynPolicy {
    /// Clamp to `max_mss`, remove SACK-permitted and timestamps.
    pub fn new(max_mss: u16) -> Self {
        SynPolicy {
            max_mss,
            remove_sack_permitted: true,
            remove_timestamps: true,
        }
    }
}

/// What [`rewrite_syn`] saw and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynRewrite {
    /// SYN-ACK (rather than a plain SYN).
    pub syn_ack: bool,
    /// MSS option as received (`None`: absent).
    pub mss_seen: Option<u16>,
    /// MSS option now in the packet.
    pub mss_now: Option<u16>,
    /// An MSS option was written into NOP padding.
    pub mss_inserted: bool,
    /// The effective MSS still exceeds the maximum (absent option, no room to insert one).
    pub mss_unclamped: bool,
    /// Window-scale shift advertised (raw; `None`: absent).
    pub window_scale: Option<u8>,
    /// SACK-permitted was present and removed.
    pub sack_permitted_removed: bool,
    /// Timestamps were present and removed.
    pub timestamps_removed: bool,
    /// Any byte of the packet changed.
    pub modified: bool,
}

/// Apply `policy` to the SYN or SYN-ACK in `packet` (a whole IP packet), in place. Errors
/// ([`TcpError::NotSyn`], parse errors, [`TcpError::MalformedOptions`]) leave `packet` unchanged.
pub fn rewrite_syn(packet: &mut [u8], policy: &SynPolicy) -> Result<SynRewrite, TcpError> {
    let (opt_start, opt_end, flags, is_v6, old_cksum) = {
        let p = TcpPacket::parse(packet)?;
        let start = p.ip.header_len + TCP_HEADER_MIN;
        (
            start,
            p.ip.header_len + p.tcp.header_len,
            p.tcp.flags,
            p.ip.is_ipv6(),
            p.tcp.checksum,
        )
    };
    if !flags.contains(TcpFlags::SYN) {
        return Err(TcpError::NotSyn);
    }
    let old = packet[opt_start..opt_end].to_vec();
    let seen = scan_options(&old)?;
    let mut area = old.clone();
    let mut r = SynRewrite {
        syn_ack: flags.contains(TcpFlags::ACK),
        mss_seen: seen.mss,
        mss_now: seen.mss,
        mss_inserted: false,
        mss_unclamped: false,
        window_scale: seen.window_scale,
        sack_permitted_removed: false,
        timestamps_removed: false,
        modified: false,
    };
    let found: Vec<(u8, usize, usize)> = options(&old)
        .filter_map(Result::ok)
        .map(|o| (o.kind, o.offset, o.bytes.len()))
        .collect();
    for (kind, off, len) in found {
        match (kind, len) {
            (OPT_MSS, 4) => {
                let v = u16::from_be_bytes([area[off + 2], area[off + 3]]);
                if v > policy.max_mss {
                    area[off + 2..off + 4].copy_from_slice(&policy.max_mss.to_be_bytes());
                    r.mss_now = Some(policy.max_mss);
                }
            }
            (OPT_SACK_PERMITTED, 2) if policy.remove_sack_permitted => {
                area[off..off + len].fill(OPT_NOP);
                r.sack_permitted_removed = true;
            }
            (OPT_TIMESTAMPS, 10) if policy.remove_timestamps => {
                area[off..off + len].fill(OPT_NOP);
                r.timestamps_removed = true;
            }
            _ => {}
        }
    }
    let default_mss = if is_v6 {
        DEFAULT_MSS_V6
    } else {
        DEFAULT_MSS_V4
    };
    if seen.mss.is_none() && default_mss > policy.max_mss {
        match nop_run(&area, 4) {
            Some(off) => {
                let m = policy.max_mss.to_be_bytes();
                area[off..off + 4].copy_from_slice(&[OPT_MSS, 4, m[0], m[1]]);
                r.mss_now = Some(policy.max_mss);
                r.mss_inserted = true;
            }
            None => r.mss_unclamped = true,
        }
    }
    if area != old {
        // Options start at TCP offset 20 (even): block update is word-aligned.
        let c = checksum_update_block(old_cksum, &old, &area);
        packet[opt_start..opt_end].copy_from_slice(&area);
        let ck = opt_start - TCP_HEADER_MIN + 16;
        packet[ck..ck + 2].copy_from_slice(&c.to_be_bytes());
        r.modified = true;
    }
    Ok(r)
}

/// Offset of the first run of at least `n` NOP bytes that are option boundaries.
fn nop_run(area: &[u8], n: usize) -> Option<usize> {
    let mut run_start = None;
    for o in options(area).map_while(Result::ok) {
        if o.kind == OPT_NOP {
            let s = *run_start.get_or_insert(o.offset);
            if o.offset + 1 - s >= n {
                return Some(s);
            }
        } else {
            run_start = None;
        }
    }
    None
}
