//! Advance redundancy for a lone flow (`redundancy_when_alone`, docs/engine.md "Advance
//! redundancy for a lone flow"): eight local TCPs, each keeping a window of up to 64 segments
//! in flight as far as the flight cap lets it (a loss-based TCP whose losses the coding
//! hides), share one bottleneck whose queue holds about one round trip of datagrams, behind
//! 10 % random loss. The queue overflows again and again, and each flow's loss record takes
//! its drops with the random loss.
//!
//! With the rule every flow keeps R = 1 beside the others, its deficit repair does not
//! foresee the flight's losses, and its pauses get no tail repairs before its FIN: the deficit
//! repair answers what the NC-ACKs report. Without it R follows each flow's loss floor above 1,
//! and the extra combinations that arrive where nothing was missing are non-innovative. The
//! test asserts, in each of seeds 1–10, R = 1 for every flow with the rule (1.00–1.15
//! without), and over the ten seeds together at most a quarter of the non-innovative datagrams
//! (47–75 a seed against 788–1 104: 7 %) and at most half the extra combinations (2.2–2.6
//! thousand against 5.9–7.4) with no more than 1 % fewer segments acknowledged (6 % more). It
//! fails with the rule off. (Stop 54's rule, R = 1 only, gave 9 % fewer non-innovative over the
//! ten seeds and up to 16 % fewer segments acknowledged in single seeds. The lab's flood, R up
//! to 1.28 and tens of thousands of non-innovative datagrams in some runs of 8 × 20 MB, does
//! not build in this toy, whose TCPs never cut their windows.)
//!
//! The path: a drop-tail queue of 40 datagrams served at one datagram per millisecond, then
//! 20 ms one way and 10 % random loss; NC-ACKs back in 20 ms.

mod common;

use common::TestRng;
use common::bottleneck::Bottleneck;
use common::flows::FlowTcp;
use tcpnc_proto::Engine;
use tcpnc_proto::config::{EngineConfig, Policies, Switch};

const FLOWS: u16 = 8;
const SEG: u32 = 1_000;
/// Each local TCP's own window, segments.
const CWND: u32 = 64;
const DELAY_MS: u64 = 20;
const QUEUE: usize = 40;
const LOSS: f64 = 0.1;
const RUN_MS: u64 = 15_000;
/// Segments of the transfer that ends (about 2.5 s of its share of the link).
const LAST: u32 = 300;

/// What the run did.
struct Run {
    /// Segments acknowledged, all flows.
    acked: u64,
    /// Combinations the peer found non-innovative, all flows.
    non_innovative: u64,
    /// Each flow's R at the end, per mille.
    redundancy: Vec<u64>,
    /// Combinations sent beyond the new packets' own (R's and the repairs), all flows.
    extra: u64,
}

fn engine(rule: Switch, seed: u64) -> Engine {
    let mut cfg = EngineConfig::new(&Policies::product(), 1472);
    cfg.policies.redundancy_when_alone = rule;
    Engine::new(cfg, seed).unwrap()
}

/// The eight flows for [`RUN_MS`] of virtual time.
fn run(rule: Switch, seed: u64) -> Run {
    run_flows(rule, seed, false).0
}

/// The eight flows, the first of them ending after [`LAST`] segments with `ending`; and each
/// flow's tail repairs, by flow.
fn run_flows(rule: Switch, seed: u64, ending: bool) -> (Run, Vec<u64>) {
    let (mut a, mut b) = (engine(rule, seed), engine(rule, seed ^ 0x5EED));
    let mut rng = TestRng(seed | 1);
    let mut tcps = [FlowTcp::START; FLOWS as usize];
    if ending {
        tcps[0].written = LAST;
    }
    let mut link = Bottleneck::new(QUEUE, LOSS, DELAY_MS, 0);
    for now in 0..RUN_MS {
        link.step_window_flows((&mut a, &mut b), &mut tcps, (SEG, CWND), now, &mut rng);
    }
    let mut tails: Vec<(u16, u64)> = a
        .stats()
        .flows
        .iter()
        .map(|(id, f)| (id.src_port, f.tail_repairs))
        .collect();
    tails.sort_unstable();
    let run = Run {
        acked: tcps.iter().map(|t| u64::from(t.acked)).sum(),
        non_innovative: b.stats().flows.values().map(|f| f.non_innovative).sum(),
        redundancy: a
            .stats()
            .flows
            .values()
            .map(|f| f.redundancy_permille)
            .collect(),
        extra: a.stats().flows.values().map(|f| f.redundant_sent).sum(),
    };
    (run, tails.into_iter().map(|(_, t)| t).collect())
}

#[test]
fn flows_beside_busy_flows_send_no_advance_redundancy() {
    let (mut on_sum, mut off_sum) = ((0, 0), (0, 0));
    let (mut on_extra, mut off_extra) = (0, 0);
    for seed in 1..=10 {
        let on = run(Switch::On, seed);
        let off = run(Switch::Off, seed);
        eprintln!(
            "seed {seed}: with the rule R {:?}, {} extra, {} non-innovative, {} acknowledged; \
             without R {:?}, {} extra, {} non-innovative, {} acknowledged",
            on.redundancy,
            on.extra,
            on.non_innovative,
            on.acked,
            off.redundancy,
            off.extra,
            off.non_innovative,
            off.acked
        );
        assert_eq!(on.redundancy.len(), usize::from(FLOWS), "seed {seed}");
        assert!(
            on.redundancy.iter().all(|&r| r == 1000),
            "seed {seed}: R {:?} beside busy flows",
            on.redundancy
        );
        assert!(
            off.redundancy.iter().any(|&r| r > 1000),
            "seed {seed}: without the rule R {:?}",
            off.redundancy
        );
        (on_extra, off_extra) = (on_extra + on.extra, off_extra + off.extra);
        on_sum = (on_sum.0 + on.non_innovative, on_sum.1 + on.acked);
        off_sum = (off_sum.0 + off.non_innovative, off_sum.1 + off.acked);
    }
    let ((on_waste, on_acked), (off_waste, off_acked)) = (on_sum, off_sum);
    assert!(
        on_waste * 4 <= off_waste,
        "seeds 1-10: {on_waste} non-innovative with the rule, {off_waste} without"
    );
    assert!(
        on_extra * 2 <= off_extra,
        "seeds 1-10: {on_extra} extra combinations with the rule, {off_extra} without"
    );
    assert!(
        on_acked * 100 >= off_acked * 99,
        "seeds 1-10: {on_acked} segments acknowledged with the rule, {off_acked} without"
    );
}

/// A transfer that ends beside seven bulk flows: its TCP writes [`LAST`] segments, the last
/// with FIN. Beside busy flows a TCP's pauses are its ACK clock's among the others', and the
/// bulk TCPs get no tail repairs with the rule (once the flows have reported their flights);
/// the ending transfer's last flight, after its FIN, still does (`sender/tail.rs`). Without
/// the rule both do. Seeds 1–3.
#[test]
fn beside_busy_flows_a_tcp_gets_tail_repairs_after_its_fin_only() {
    for seed in 1..=3 {
        let (_, on) = run_flows(Switch::On, seed, true);
        let (_, off) = run_flows(Switch::Off, seed, true);
        eprintln!(
            "seed {seed}: tail repairs by flow, the ending one first: with the rule {on:?}, without {off:?}"
        );
        let bulk = |t: &[u64]| t[1..].iter().sum::<u64>();
        assert!(
            on[0] * 7 > bulk(&on) * 2,
            "seed {seed}: the ending flow's tail repairs with the rule: {on:?}"
        );
        assert!(
            bulk(&on) * 10 <= bulk(&off),
            "seed {seed}: the bulk flows' tail repairs with the rule {on:?}, without {off:?}"
        );
    }
}
