//! Tail repair: repairs sent when the local TCP pauses, sized so that the sink can decode
//! everything sent so far.
//!
//! The redundancy accumulator (§II-B) interleaves its redundant combinations with new packets,
//! so a loss is covered by the combinations that *follow* it. At the end of a burst of sending
//! — a video frame, a request, the last flight before TCP waits for ACKs — nothing follows: a
//! loss among the burst's last combinations waits until the next burst brings more
//! combinations, and then a round trip for the deficit repair (`repair.rs`), or two round trips
//! for the repair probe. A stream at 30 frames/s over a 40 ms round trip then shows a tail of
//! ≈ 100–170 ms on 5–10 % loss (docs/streaming.md), although every frame's own loss was within
//! what R repairs on average.
//!
//! Karafillis et al. (§II, EOT) send N_lp combinations when the transfer ends; RFC 8985's tail
//! loss probe retransmits when a flight ends without ACKs. The tail repair does both jobs at the
//! coding layer, at every pause:
//!
//! * a pause is [`pause_gap`] without a new arrival from the local TCP (an eighth of the
//!   combination round trip, 2–20 ms, or on a path that reorders three mean deviations of its
//!   samples where that is longer, up to half the round trip; 10 ms before one is measured)
//!   while packets are unacknowledged;
//! * a local TCP that has sent up to the edge of the window it was given (the flight cap, the
//!   peer's window) sends again on the next ACK that advances: its tail repairs go only if all
//!   of them cross the bottleneck within a pause gap (`SenderHalf::edge_allowance`). A longer
//!   train held the seen-ACK, and so that TCP, still for longer than a pause gap, and its next
//!   flight paused too, a round trip later: on Ha & Tsuru's Fig. 5 path (1 Mbit/s, 576-byte
//!   MTU) a third of the datagrams were repairs and goodput fell by a fifth at 10 % loss
//!   (docs/engine.md, deficit repair part 7);
//! * at a pause, with `n_s` the new packets first sent since the previous pause or the Pid the
//!   latest NC-ACK echoed (whichever is later), `n_c` the combinations sent since then (repairs
//!   included) and `q` the estimated delivery rate, the sink needs `n_s` of the `n_c`
//!   combinations in flight; the sender adds the fewest repairs `k` with
//!   P[Binomial(n_c + k, q) ≥ n_s] ≥ [`TAIL_SUCCESS`] (Karafillis' R_a argument, applied to
//!   the flight instead of the whole file), at most [`MAX_TAIL_REPAIRS`], each combining the
//!   newest packets; a deficit the NC-ACKs already reported is the deficit repair's (and, while
//!   paused, `tail_recovery`'s: `sender/tail.rs`);
//! * the repairs count in the deficit repair's in-flight accounting like any other, so the
//!   NC-ACKs that follow do not repair the same DoF again; with `repair_budget` they draw on the
//!   peer's bucket.
//!
//! Without loss (q = 1) a pause sends nothing; a bulk transfer whose ACK clock keeps the local
//! TCP sending never pauses.

use std::time::Duration;

use crate::loss_burst::BurstFit;

/// Probability with which the flight, with the tail repairs, carries every DoF the sink
/// misses.
pub const TAIL_SUCCESS: f64 = 0.99;

/// Most tail repairs at one pause.
pub const MAX_TAIL_REPAIRS: u32 = 8;

/// The pause before the round trip is measured.
pub const PAUSE_UNMEASURED: Duration = Duration::from_millis(10);

/// The time without a new arrival from the local TCP after which the sender calls it a pause:
/// srtt/8 within 2–20 ms ([`PAUSE_UNMEASURED`] before a round trip is measured). Longer than
/// the gaps of an ACK-clocked bulk transfer (a segment per ACK, an ACK every few hundred
/// microseconds at tens of Mbit/s), short against the round trip a deficit repair costs.
///
/// On a path whose delay jitters, the NC-ACKs, and so the local TCP's segments, come in
/// bunches with gaps of up to the jitter's spread between them: an ACK-clocked transfer looks
/// paused there. The gap is then at least [`JITTER_DEVIATIONS`] times `jitter`, the mean
/// deviation of the round-trip samples (RFC 6298's RTTVAR; the sender passes it once the path
/// reorders, zero otherwise), up to half the round trip, after which the deficit repair's
/// round trip is near. (20 ms of reordering jitter each way: about 7 ms.)
pub fn pause_gap(srtt: Option<Duration>, jitter: Duration) -> Duration {
    srtt.map_or(PAUSE_UNMEASURED, |s| {
        let base = (s / 8).clamp(Duration::from_millis(2), Duration::from_millis(20));
        base.max((jitter * JITTER_DEVIATIONS).min(s / 2))
    })
}

/// Mean round-trip deviations a pause must outlast ([`pause_gap`]): the spread of two uniform
/// jitters (forward and back) is about three of their sum's mean deviations.
pub const JITTER_DEVIATIONS: u32 = 3;

/// Repairs to add at a pause after a burst of `sources` new packets in `combinations`
/// combinations, for a coding window of `window` packets and a delivery rate `q`: the fewest
/// `k` (at most [`MAX_TAIL_REPAIRS`]) for which both the whole burst and its last `window`
/// packets (with their share of the combinations) are decodable with probability
/// [`TAIL_SUCCESS`]. The suffix matters on its own: a hole early in a long burst is reported by
/// the NC-ACKs of the packets after it and repaired by the deficit repair, a hole among the
/// last packets has nothing after it.
///
/// With `bursts` (`tail_burst`) the last packets are also sized for the path's fitted loss
/// bursts ([`needed_in_bursts`]): they and the repairs go out back to back, and one burst can
/// take them together far more often than independent losses would.
pub fn tail_repairs(
    sources: u64,
    combinations: u64,
    window: u64,
    q: f64,
    bursts: Option<BurstFit>,
) -> u32 {
    if sources == 0 {
        return 0;
    }
    let last = sources.min(window.max(1));
    let last_combinations = (last * combinations).div_ceil(sources);
    let in_bursts = bursts.map_or(0, |fit| needed_in_bursts(last, last_combinations, fit));
    needed_for(sources, combinations, q)
        .max(needed_for(last, last_combinations, q))
        .max(in_bursts)
}

/// The longest run of combinations [`needed_in_bursts`] sizes: a longer flight's losses come in
/// many bursts and average out, and the binomial rule ([`needed_for`]) covers it.
pub const BURST_SIZED_SPAN: u64 = 128;

/// The fewest `k` ≤ [`MAX_TAIL_REPAIRS`] for which `in_flight` + k combinations sent back to
/// back carry `needed` DoFs with probability [`TAIL_SUCCESS`] on a path whose loss is the
/// Gilbert model `fit` (Ha & Tsuru §3.1's burstiness; the emulator's and the fit's chain
/// advance per packet): P[at least in_flight + k − needed + 1 of them lost] ≤ 1 − TAIL_SUCCESS.
/// 0 for a flight longer than [`BURST_SIZED_SPAN`]. At 5 % loss in bursts of 4 a frame's last
/// 12 packets in 13 combinations need 11 (the binomial rule: 2, which a burst defeats 8 % of
/// the time); the cap leaves 1.7 %.
pub fn needed_in_bursts(needed: u64, in_flight: u64, fit: BurstFit) -> u32 {
    if needed == 0 || in_flight > BURST_SIZED_SPAN {
        return 0;
    }
    (0..=MAX_TAIL_REPAIRS)
        .find(|&k| {
            let sent = in_flight + u64::from(k);
            sent >= needed
                && fit.lost_at_least(sent as u32, (sent - needed + 1) as u32) <= 1.0 - TAIL_SUCCESS
        })
        .unwrap_or(MAX_TAIL_REPAIRS)
}

/// The fewest `k` ≤ [`MAX_TAIL_REPAIRS`] with P[Binomial(`in_flight` + k, `q`) ≥ `needed`] ≥
/// [`TAIL_SUCCESS`].
pub fn needed_for(needed: u64, in_flight: u64, q: f64) -> u32 {
    if needed == 0 {
        return 0;
    }
    let q = q.clamp(0.0, 1.0);
    (0..=MAX_TAIL_REPAIRS)
        .find(|&k| at_least(in_flight + u64::from(k), needed, q) >= TAIL_SUCCESS)
        .unwrap_or(MAX_TAIL_REPAIRS)
}

/// P[Binomial(n, q) ≥ m], from the pmf's recurrence in logarithms (a flight of thousands of
/// combinations would underflow (1 − q)^n).
fn at_least(n: u64, m: u64, q: f64) -> f64 {
    if m == 0 {
        return 1.0;
    }
    if m > n || q <= 0.0 {
        return 0.0;
    }
    if q >= 1.0 {
        return 1.0;
    }
    // ln P[X < m] = ln Σ_{i<m} C(n,i) q^i (1−q)^(n−i), each term from the previous one.
    let odds = (q / (1.0 - q)).ln();
    let mut term = n as f64 * (1.0 - q).ln(); // i = 0
    let mut below = f64::NEG_INFINITY;
    for i in 0..m {
        below = log_add(below, term);
        term += ((n - i) as f64 / (i + 1) as f64).ln() + odds;
    }
    (1.0 - below.exp()).clamp(0.0, 1.0)
}

/// ln(e^a + e^b).
fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + (lo - hi).exp().ln_1p()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_tail_matches_small_cases() {
        assert!((at_least(1, 1, 0.9) - 0.9).abs() < 1e-12);
        assert!((at_least(2, 1, 0.5) - 0.75).abs() < 1e-12);
        assert!((at_least(3, 2, 0.5) - 0.5).abs() < 1e-12);
        assert_eq!(at_least(3, 4, 0.9), 0.0);
        assert_eq!(at_least(3, 0, 0.1), 1.0);
        // Large flights do not underflow: 3000 at 10 % loss, mean 2700, sd ≈ 16.
        assert!(at_least(3000, 2600, 0.9) > 0.999);
        assert!(at_least(3000, 2800, 0.9) < 1e-6);
    }

    #[test]
    fn nothing_missing_or_no_loss_sends_nothing() {
        assert_eq!(tail_repairs(0, 10, 12, 0.9, None), 0);
        assert_eq!(tail_repairs(12, 12, 12, 1.0, None), 0);
        assert_eq!(tail_repairs(300, 300, 12, 1.0, None), 0);
    }

    #[test]
    fn a_frame_at_ten_percent_gets_a_few() {
        // 12 new packets in 14 combinations (R ≈ 1.17) at 10 % loss: 84 % decodable alone.
        let k = tail_repairs(12, 14, 12, 0.9, None);
        assert!((2..=4).contains(&k), "{k}");
        assert!(at_least(14 + u64::from(k), 12, 0.9) >= TAIL_SUCCESS);
        assert!(at_least(14 + u64::from(k) - 1, 12, 0.9) < TAIL_SUCCESS);
        // A long flight: its surplus covers the whole on average, not its last packets.
        assert_eq!(needed_for(226, 248, 0.958), 0);
        let k = tail_repairs(226, 248, 12, 0.958, None);
        assert!((1..=3).contains(&k), "{k}");
    }

    #[test]
    fn pause_gap_is_bounded() {
        let calm = Duration::from_millis(1);
        assert_eq!(pause_gap(None, calm), PAUSE_UNMEASURED);
        assert_eq!(
            pause_gap(Some(Duration::from_millis(40)), calm),
            Duration::from_millis(5)
        );
        assert_eq!(
            pause_gap(Some(Duration::from_millis(1)), Duration::ZERO),
            Duration::from_millis(2)
        );
        assert_eq!(
            pause_gap(Some(Duration::from_secs(1)), calm),
            Duration::from_millis(20)
        );
    }

    #[test]
    fn jitter_lengthens_the_pause_gap_up_to_half_the_round_trip() {
        let srtt = Some(Duration::from_millis(60));
        // 20 ms of jitter each way: samples deviate by about 7 ms.
        assert_eq!(
            pause_gap(srtt, Duration::from_millis(7)),
            Duration::from_millis(21)
        );
        assert_eq!(
            pause_gap(srtt, Duration::from_millis(15)),
            Duration::from_millis(30)
        );
        // A deviation under srtt/24 leaves srtt/8.
        assert_eq!(
            pause_gap(srtt, Duration::from_millis(2)),
            Duration::from_micros(7500)
        );
    }

    /// Bursts of 4 at 5 % defeat the binomial rule's two repairs for a frame's last 12 packets
    /// 8 % of the time; the burst rule sizes for them (up to the cap), and asks for no more
    /// than the binomial rule on independent loss.
    #[test]
    fn bursts_ask_for_more_than_the_mean() {
        let bursty = BurstFit {
            p: 0.05 / 0.95 / 4.0,
            r: 0.25,
        };
        assert_eq!(needed_for(12, 13, 0.95), 2);
        assert!(bursty.lost_at_least(15, 4) > 0.05);
        assert_eq!(needed_in_bursts(12, 13, bursty), MAX_TAIL_REPAIRS);
        assert_eq!(
            tail_repairs(12, 13, 12, 0.95, Some(bursty)),
            MAX_TAIL_REPAIRS
        );
        // A shorter frame's need is met below the cap, and one less would not do.
        let k = needed_in_bursts(2, 2, bursty);
        assert!((3..MAX_TAIL_REPAIRS).contains(&k), "{k}");
        let sent = 2 + u64::from(k);
        assert!(bursty.lost_at_least(sent as u32, (sent - 1) as u32) <= 1.0 - TAIL_SUCCESS);
        assert!(bursty.lost_at_least(sent as u32 - 1, (sent - 2) as u32) > 1.0 - TAIL_SUCCESS);
        let independent = BurstFit { p: 0.05, r: 0.95 };
        assert!(needed_in_bursts(12, 13, independent) <= needed_for(12, 13, 0.95));
        assert_eq!(needed_in_bursts(0, 13, bursty), 0);
        assert_eq!(needed_in_bursts(12, BURST_SIZED_SPAN + 1, bursty), 0);
    }
}
