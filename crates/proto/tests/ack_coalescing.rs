//! ACK coalescing (`coalesce_acks`, `coalesce.rs`; docs/engine.md, "ACK coalescing"), checked
//! against the engine without it as an oracle.
//!
//! Coalescing changes only the output queues, never an engine's state, so two engines fed the
//! same inputs, one coalescing and one not, must stay identical; between two polls the
//! coalescing one's ACKs must be the other's with some removed, where a removed ACK
//! (1) advanced the ack over the ACK before it and carried no flag, and (2) was overtaken in
//! the same poll by a kept ACK that acknowledges more (and, for an NC-ACK, reports its Pid in
//! its loss bitmap); no duplicate is ever removed, and the newest ACK always leaves. The path
//! between them loses, duplicates and reorders combinations and NC-ACKs in batches of random
//! size, so duplicates, DEPENDENT and PAUSE flags, and stale ACKs all occur.

mod common;

use common::*;
use tcpnc_proto::settings::Switch;
use tcpnc_proto::tcp::TcpPacket;
use tcpnc_proto::{Engine, EngineConfig, FlowStats, Policies};
use tcpnc_wire::{AckRepr, FrameRepr};

const SEG: u32 = 1000;
const ISN: u32 = 9_000;

fn engine(coalesce: Switch, seed: u64) -> Engine {
    let policies = Policies {
        coalesce_acks: coalesce,
        ..Policies::product()
    };
    Engine::new(EngineConfig::new(&policies, 1472), seed).unwrap()
}

fn drain(poll: impl FnMut() -> Option<Vec<u8>>) -> Vec<Vec<u8>> {
    std::iter::from_fn(poll).collect()
}

/// `batch` after a path that loses 10 %, duplicates 5 % and swaps neighbours 10 %.
fn impair(batch: Vec<Vec<u8>>, rng: &mut TestRng) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for d in batch {
        if rng.chance(0.1) {
            continue;
        }
        if rng.chance(0.05) {
            out.push(d.clone());
        }
        out.push(d);
        let n = out.len();
        if n >= 2 && rng.chance(0.1) {
            out.swap(n - 1, n - 2);
        }
    }
    out
}

/// What the coalescing checks need of one ACK: ack number, a key that must match for it to
/// count as a duplicate, the NC-ACK's Pid echo, and whether it carried a flag.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Seen {
    ack: u32,
    key: u32,
    pid: Option<u32>,
    flagged: bool,
}

fn nc_ack(d: &[u8]) -> Seen {
    let Ok(FrameRepr::Ack(a)) = FrameRepr::parse(d) else {
        panic!("the receiving engine sends NC-ACKs only");
    };
    let a: AckRepr = a;
    Seen {
        ack: a.ack,
        key: a.ack,
        pid: Some(a.pid_echo),
        flagged: a.pause || a.update || a.dependent.is_some(),
    }
}

fn tcp_ack(p: &[u8]) -> Seen {
    let t = TcpPacket::parse(p).unwrap().tcp;
    Seen {
        ack: t.ack,
        key: t.ack ^ (u32::from(t.window) << 16),
        pid: None,
        flagged: false,
    }
}

/// The last ACK before this poll without coalescing (`off`) and with it (`on`: the last one
/// that left).
#[derive(Debug, Default)]
struct Last {
    off: Option<Seen>,
    on: Option<Seen>,
}

/// Checks one poll's ACKs with coalescing (`on`) against those without (`off`). Returns how
/// many were coalesced.
fn check(on: &[Vec<u8>], off: &[Vec<u8>], last: &mut Last, read: fn(&[u8]) -> Seen) -> usize {
    assert_eq!(on.last(), off.last(), "the newest ACK always leaves");
    let mut kept = on.iter().peekable();
    let mut removed: Vec<Seen> = Vec::new();
    for d in off {
        let s = read(d);
        let advances = last.off.is_some_and(|p| tcp_lt(p.ack, s.ack));
        last.off = Some(s);
        if kept.peek() == Some(&d) {
            kept.next();
            // Every Pid since the echo of the last NC-ACK that left is reported: the echo and
            // the 32 before it in the bitmap.
            if let (Some(new), Some(Seen { pid: Some(old), .. })) = (s.pid, last.on)
                && !removed.is_empty()
            {
                let span = new.wrapping_sub(old) as i32;
                assert!(span <= 33, "Pids {old}..{new} unreported");
            }
            for r in removed.drain(..) {
                assert!(tcp_lt(r.ack, s.ack), "{r:?} replaced by {s:?}");
            }
            last.on = Some(s);
            continue;
        }
        assert!(
            advances && !s.flagged,
            "a duplicate or flagged ACK was removed: {s:?}"
        );
        removed.push(s);
    }
    assert!(
        kept.next().is_none(),
        "the coalesced ACKs are a subsequence"
    );
    off.len() - on.len()
}

/// Every flow counter, with the ACKs that coalescing replaced counted as sent.
fn state(e: &Engine) -> Vec<FlowStats> {
    let flows = e.stats().flows.into_values();
    flows
        .map(|f| FlowStats {
            acks_sent: f.acks_sent + f.acks_coalesced,
            tcp_acks_synthesized: f.tcp_acks_synthesized + f.tcp_acks_coalesced,
            acks_coalesced: 0,
            tcp_acks_coalesced: 0,
            ..f
        })
        .collect()
}

fn tcp_lt(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) > 0
}

#[test]
fn coalesced_acks_are_the_uncoalesced_ones_less_those_a_newer_one_covers() {
    let (mut nc_coalesced, mut tcp_coalesced, mut duplicates) = (0, 0, 0);
    let mut counted = (0, 0);
    for seed in 1..=6u64 {
        let mut rng = TestRng(seed * 7919);
        let (mut a_on, mut a_off) = (engine(Switch::On, seed), engine(Switch::Off, seed));
        let (mut b_on, mut b_off) = (
            engine(Switch::On, seed + 100),
            engine(Switch::Off, seed + 100),
        );
        let (mut nc_last, mut tcp_last) = (Last::default(), Last::default());
        let mut next = 0u32;
        for round in 0..300u64 {
            let now = ms(5 * round);
            for _ in 0..=rng.below(64) {
                let s = bulk_segment(ISN, next, SEG);
                next += 1;
                a_on.handle_local(now, &s);
                a_off.handle_local(now, &s);
            }
            let frames = drain(|| a_off.poll_transmit());
            assert_eq!(
                drain(|| a_on.poll_transmit()),
                frames,
                "same state, same frames"
            );
            for f in impair(frames, &mut rng) {
                b_on.handle_datagram(now, &f);
                b_off.handle_datagram(now, &f);
            }
            drain(|| b_on.poll_local());
            drain(|| b_off.poll_local());
            let (on, off) = (
                drain(|| b_on.poll_transmit()),
                drain(|| b_off.poll_transmit()),
            );
            nc_coalesced += check(&on, &off, &mut nc_last, nc_ack);
            let back = now + ms(20);
            for d in impair(off, &mut rng) {
                a_on.handle_datagram(back, &d);
                a_off.handle_datagram(back, &d);
            }
            let (on, off) = (drain(|| a_on.poll_local()), drain(|| a_off.poll_local()));
            duplicates += off
                .windows(2)
                .filter(|w| tcp_ack(&w[0]) == tcp_ack(&w[1]))
                .count();
            tcp_coalesced += check(&on, &off, &mut tcp_last, tcp_ack);
        }
        assert_eq!(state(&a_on), state(&a_off), "coalescing changes no state");
        assert_eq!(state(&b_on), state(&b_off), "coalescing changes no state");
        // The counters count what was coalesced (so far, over the seeds).
        counted.0 += b_on.stats().acks_coalesced;
        counted.1 += a_on.stats().tcp_acks_coalesced;
        assert_eq!(counted, (nc_coalesced as u64, tcp_coalesced as u64));
    }
    assert!(nc_coalesced > 100, "NC-ACKs coalesced: {nc_coalesced}");
    assert!(tcp_coalesced > 100, "TCP ACKs coalesced: {tcp_coalesced}");
    assert!(
        duplicates > 10,
        "the path gave duplicates to keep: {duplicates}"
    );
}
