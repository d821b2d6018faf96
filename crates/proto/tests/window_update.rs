//! A window update reaches the local TCP (RFC 5681 §2: an ACK that changes the window is not a
//! duplicate). The receiving TCP's window closes, the NC-ACKs carry it to the sender gateway,
//! and the local TCP stops; when the receiving application reads, the peer gateway sends one
//! NC-ACK with the same ack number and an open window. Withheld as a "duplicate" (the deficit
//! repair's hold, Pause-ACK), it would leave the local TCP on a zero window with nothing else
//! to trigger an ACK: found as 100-flow lab runs that never finished (docs/lab.md).
//!
//! A window counts as open for the peer's TCP only in whole units of the receiving TCP's
//! window scale: a window of 1400 bytes at shift 10 reads as 1024, less than a segment.

mod common;

use common::*;
use tcpnc_proto::tcp::{TcpFlags, TcpPacket};
use tcpnc_proto::{Engine, EngineConfig, Policies};

const SEG: u32 = 1000;
const ISN: u32 = 9_000;
const SEGMENTS: u32 = 10;

/// The receiving TCP's ACK of everything so far with `window` bytes open.
fn sink_ack(window: u16) -> Vec<u8> {
    let end = ISN + SEGMENTS * SEG;
    segment(&server_to_client(), 1, end, TcpFlags::ACK, window, &[], &[])
}

/// Ack numbers and windows of the TCP ACKs engine `a` gave its local TCP.
fn windows(a: &mut Engine) -> Vec<(u32, u16)> {
    let mut w = Vec::new();
    while let Some(p) = a.poll_local() {
        let pkt = TcpPacket::parse(&p).unwrap();
        w.push((pkt.tcp.ack, pkt.tcp.window));
    }
    w
}

#[test]
fn a_window_update_after_a_zero_window_reaches_the_local_tcp() {
    let cfg = EngineConfig::new(&Policies::product(), 1472);
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    // The receiving TCP's window ends exactly after the tenth segment.
    let first = segment(&server_to_client(), 1, ISN, TcpFlags::ACK, 10_000, &[], &[]);
    // Segments 100 ms apart, each NC-ACK back 20 ms later (a measured round trip).
    for i in 0..SEGMENTS {
        let now = ms(100 * u64::from(i));
        a.handle_local(now, &bulk_segment(ISN, i, SEG));
        while let Some(d) = a.poll_transmit() {
            b.handle_datagram(now, &d);
        }
        if i == 0 {
            b.handle_local(now, &first);
        }
        while b.poll_local().is_some() {}
        while let Some(d) = b.poll_transmit() {
            a.handle_datagram(now + ms(20), &d);
        }
    }
    // Everything delivered; the receiving TCP acknowledges it with a closed window.
    b.handle_local(ms(905), &sink_ack(0));
    while let Some(d) = b.poll_transmit() {
        a.handle_datagram(ms(925), &d);
    }
    let end = ISN + SEGMENTS * SEG;
    let before = windows(&mut a);
    assert_eq!(
        before.last(),
        Some(&(end, 0)),
        "the local TCP sees the zero window"
    );
    // The application reads at once: the receiving TCP opens its window (a pure window
    // update), one round trip after the last segment (no queue: the sender's repair would
    // have withheld a duplicate as part of a random-loss stall).
    b.handle_local(ms(906), &sink_ack(60_000));
    let mut updates = 0;
    while let Some(d) = b.poll_transmit() {
        updates += 1;
        a.handle_datagram(ms(926), &d);
    }
    assert!(updates > 0, "the peer gateway sends the window update");
    let after = windows(&mut a);
    assert!(
        after.iter().any(|&(ack, w)| ack == end && w > 0),
        "the local TCP never learns that the window opened: {after:?}"
    );
}

/// Everything `from` transmits, handed to `to` at `now`.
fn cross(from: &mut Engine, to: &mut Engine, now: std::time::Duration) {
    while let Some(d) = from.poll_transmit() {
        to.handle_datagram(now, &d);
    }
}

const C_ISN: u32 = 1_000;
const S_ISN: u32 = 50_000;
const MSS: u32 = 1372;

/// Client (A, window scale 7) and server (B, window scale 10, window 64308 in its SYN-ACK)
/// through two product engines; the handshake has crossed.
fn after_handshake() -> (Engine, Engine) {
    let cfg = EngineConfig::new(&Policies::product(), 1472);
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    let syn = syn_options(1460, 7);
    let client_syn = segment(
        &client_to_server(),
        C_ISN,
        0,
        TcpFlags::SYN,
        64240,
        &syn,
        &[],
    );
    a.handle_local(ms(0), &client_syn);
    cross(&mut a, &mut b, ms(20));
    let syn_ack = flags(&[TcpFlags::SYN, TcpFlags::ACK]);
    let opts = syn_options(1460, 10);
    let server_syn = segment(
        &server_to_client(),
        S_ISN,
        C_ISN + 1,
        syn_ack,
        64308,
        &opts,
        &[],
    );
    b.handle_local(ms(20), &server_syn);
    cross(&mut b, &mut a, ms(40));
    (a, b)
}

/// The server TCP's pure ACK of `ack` with `window` units (of 1024 bytes) open.
fn server_ack(ack: u32, window: u16) -> Vec<u8> {
    segment(
        &server_to_client(),
        S_ISN + 1,
        ack,
        TcpFlags::ACK,
        window,
        &[],
        &[],
    )
}

/// The client's segment `i` (MSS bytes, all `i`).
fn client_segment(i: u32) -> Vec<u8> {
    let payload = vec![i as u8; MSS as usize];
    let seq = C_ISN + 1 + i * MSS;
    segment(
        &client_to_server(),
        seq,
        S_ISN + 1,
        TcpFlags::ACK,
        502,
        &[],
        &payload,
    )
}

/// The client's `n` first segments, 10 ms apart, each NC-ACK back 20 ms after its DATA; the
/// server TCP answers none. Returns the sequence number after them.
fn fill(a: &mut Engine, b: &mut Engine, n: u32) -> u32 {
    for i in 0..n {
        let now = ms(100 + 10 * u64::from(i));
        a.handle_local(now, &client_segment(i));
        cross(a, b, now + ms(20));
        cross(b, a, now + ms(40));
    }
    C_ISN + 1 + n * MSS
}

/// The receiving TCP (window scale 10) has acknowledged nothing since its SYN-ACK; the sender
/// fills that window with 46 segments, the last NC-ACKs give it 1 unit (1024 bytes). A
/// duplicate ACK from the receiving TCP (as when a segment arrives out of order) moves its
/// edge to 1400 bytes past the NC ack: 1 unit still, less than a segment, so no update. When
/// it then acknowledges everything with 44 units open, the sender's TCP must hear of it.
/// Judged in bytes, the 1400 counted as open and the update was never sent (the 100-flow lab
/// straggler of docs/lab.md, "Real links, stop 16": 12 s on the persist timer).
#[test]
fn a_window_that_reads_below_a_segment_once_scaled_still_gets_its_update() {
    let (mut a, mut b) = after_handshake();
    let end = fill(&mut a, &mut b, 46);
    assert_eq!(
        windows(&mut a).last(),
        Some(&(end, 1)),
        "1196 bytes left: 1 unit"
    );
    b.handle_local(ms(1000), &server_ack(C_ISN + 1, 63));
    cross(&mut b, &mut a, ms(1020));
    let dup = windows(&mut a);
    assert!(
        dup.iter().all(|&(_, w)| w <= 1),
        "1400 bytes: 1 unit: {dup:?}"
    );
    b.handle_local(ms(1005), &server_ack(end, 44));
    cross(&mut b, &mut a, ms(1025));
    let after = windows(&mut a);
    assert!(
        after.contains(&(end, 44)),
        "the sender's TCP never hears the window open: {after:?}"
    );
}

/// Datagrams in flight between two engines, 20 ms each way plus `delay` toward A, in order of
/// arrival.
#[derive(Default)]
struct Wire {
    queue: std::collections::BTreeMap<(std::time::Duration, u64), (bool, Vec<u8>)>,
    n: u64,
    /// Extra delay of the NC-ACKs: a queue on the return path stands for one on the forward
    /// path (the round trip is the sum).
    delay: std::time::Duration,
}

impl Wire {
    /// Hands every datagram due at `now` to its engine.
    fn deliver(&mut self, a: &mut Engine, b: &mut Engine, now: std::time::Duration) {
        while let Some(entry) = self.queue.first_entry().filter(|e| e.key().0 <= now) {
            let (to_b, d) = entry.remove();
            match to_b {
                true => b.handle_datagram(now, &d),
                false => a.handle_datagram(now, &d),
            }
        }
    }

    /// Queues what `e` transmitted at `now` (toward B when `to_b`), unless `lose`.
    fn take(&mut self, e: &mut Engine, now: std::time::Duration, to_b: bool, lose: bool) {
        while let Some(d) = e.poll_transmit() {
            self.n += 1;
            if !lose {
                let delay = if to_b { ms(20) } else { ms(20) + self.delay };
                self.queue.insert((now + delay, self.n), (to_b, d));
            }
        }
    }
}

/// A flow held by the receiving TCP's window with most of that window lost: its TCP has sent
/// everything the window allows and, its ACKs advancing as repairs arrive, retransmits
/// nothing, so only the NC layer's repairs can move it. Its first 150 ms of datagrams after
/// segment 20 are lost (a full queue), and the 150-DoF deficit drains the peer's repair budget
/// on the first NC-ACKs. Repairs clocked by its NC-ACKs (two per combination delivered) fill
/// the deficit in a few round trips; on the budget's trickle alone the flow advanced about one
/// segment per round trip (the 100-flow lab straggler, docs/lab.md "Real links, stop 16").
#[test]
fn a_flow_held_by_the_window_repairs_a_lost_window_in_a_few_round_trips() {
    // 256 000 bytes: the 186 segments fill the receiving TCP's window.
    let (took, held) = repair_a_lost_window(Case {
        window: 250,
        ..Case::default()
    });
    assert!(held > 0, "repairs beyond the budget counted");
    assert!(took < ms(1_500), "the lost window took {took:?} to repair");
}

/// The same loss with the receiving TCP's window wide open (1 MB): the local TCP is not held
/// by it but, like a TCP after its retransmission timeout (kernel BBR over nc crawled at 17
/// segments a second for half a minute so, docs/lab.md), resends old segments only (the
/// segment its last ACK asks for, once a round trip, as a TCP in loss recovery with a window
/// of a few segments); the repairs again go beyond the budget, clocked by the NC-ACKs.
#[test]
fn a_flow_that_resends_only_repairs_a_lost_window_in_a_few_round_trips() {
    let (took, held) = repair_a_lost_window(Case {
        resend: true,
        ..Case::default()
    });
    assert!(held > 0, "repairs beyond the budget counted");
    // 420 ms; 1.26 s on the budget and the resent segments alone.
    assert!(took < ms(800), "the lost window took {took:?} to repair");
}

/// The same loss with the receiving window wide open and a local TCP that has sent all it had
/// and waits (the end of a transfer, or an application that paused): it sends nothing new and
/// resends nothing before its retransmission timeout. Alone, the flow's repairs go beyond the
/// budget, clocked by the NC-ACKs; on the budget's trickle such a flow decoded one segment per
/// round trip (the simulator on Gilbert-Elliott bursts after smoltcp's FIN, docs/engine.md "A
/// TCP that sends nothing new, alone"). Among other flows they keep to the budget: a hundred
/// short flows ending together would all repair beyond it.
#[test]
fn a_lone_flow_whose_tcp_has_sent_all_it_had_repairs_a_lost_window_in_a_few_round_trips() {
    let (took, held) = repair_a_lost_window(Case::default());
    assert!(held > 0, "repairs beyond the budget counted");
    // 86 ms; 5.9 s on the budget alone.
    assert!(took < ms(800), "the lost window took {took:?} to repair");
    let (_, held) = repair_a_lost_window(Case {
        others: true,
        ..Case::default()
    });
    assert_eq!(held, 0, "among other flows, the budget's repairs only");
}

/// The same lost window among other flows (another connection open), the local TCP again having
/// sent all it had: the deficit repairs keep to the budget, so the flow's NC-ACKs soon ask for
/// more than it holds, and with nothing new sent no NC-ACK comes back. The repair probe, two
/// round trips into that silence, sends the whole reported deficit (up to 16) whatever the
/// budget: the TCP waits for its timeout, and the budget's tokens go to the flows whose
/// NC-ACKs keep coming (a hundred flows at 10 %: one finished seconds after the others in a
/// third of the lab runs, docs/engine.md "A probe for a TCP that sends nothing new").
#[test]
fn a_flow_among_others_whose_tcp_has_sent_all_it_had_is_repaired_by_its_probes() {
    let (took, held) = repair_a_lost_window(Case {
        others: true,
        ..Case::default()
    });
    assert_eq!(held, 0, "no NC-ACK-clocked repairs beyond the budget");
    // 725 ms; 5.9 s with the probe's repairs within the budget.
    assert!(took < ms(2_000), "the lost window took {took:?} to repair");
}

/// The same with a queue building (the round trip grows from 40 to 240 ms from the first
/// segment after the lost ones on) and another flow to the peer: the repairs stay within the
/// budget, as many flows overflowing one queue would only add to its drops (docs/engine.md,
/// "A TCP that resends only"). Alone, the flow is the queue: the repairs go as before.
#[test]
fn a_flow_that_resends_only_on_a_building_queue_keeps_to_the_budget_among_others() {
    let case = Case {
        resend: true,
        queue: true,
        others: true,
        ..Case::default()
    };
    let (_, held) = repair_a_lost_window(case);
    assert_eq!(
        held, 0,
        "no repairs beyond the budget into a shared building queue"
    );
    let (_, held) = repair_a_lost_window(Case {
        others: false,
        ..case
    });
    assert!(held > 0, "alone, the flow repairs beyond the budget");
}

/// A scenario of [`repair_a_lost_window`].
#[derive(Debug, Clone, Copy)]
struct Case {
    /// The receiving TCP's window, << 10 bytes.
    window: u16,
    /// The local TCP resends the segment its last ACK asks for every 40 ms, from 200 ms after
    /// its last segment.
    resend: bool,
    /// NC-ACKs 200 ms later from the first segment after the lost ones on.
    queue: bool,
    /// Another connection to the peer is open.
    others: bool,
}

impl Default for Case {
    fn default() -> Self {
        Case {
            window: 1000,
            resend: false,
            queue: false,
            others: false,
        }
    }
}

/// The engines after the handshake, with the receiving TCP's window and the other flow of
/// `case`.
fn open(case: Case) -> (Engine, Engine) {
    let (mut a, mut b) = after_handshake();
    b.handle_local(ms(50), &server_ack(C_ISN + 1, case.window));
    if case.others {
        let other = flows::client_flow(41_000);
        a.handle_local(
            ms(60),
            &segment(&other, 7, 0, TcpFlags::SYN, 65_535, &[], &[]),
        );
    }
    (a, b)
}

/// 186 segments, 1 ms apart, with the datagrams of segments 20..170 lost, as `case` says.
/// Returns how long the repair took after the last segment and the repairs sent beyond the
/// budget.
fn repair_a_lost_window(case: Case) -> (std::time::Duration, u64) {
    let Case { resend, queue, .. } = case;
    let (mut a, mut b) = open(case);
    let (n, lost) = (186u32, 20..170u32);
    let mut wire = Wire::default();
    let mut delivered = std::collections::BTreeSet::new();
    let mut next_segment = 0u32;
    let mut now = ms(100);
    let mut resend_at = ms(100 + u64::from(n) + 200);
    let mut snd_una = C_ISN + 1;
    while now < ms(20_000) && delivered.len() < n as usize {
        let send_at = (next_segment < n).then(|| ms(100) + ms(1) * next_segment);
        let arrival = wire.queue.keys().next().map(|k| k.0);
        let timers = [a.poll_timeout(), b.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        now = [send_at, arrival, timers, resend.then_some(resend_at)]
            .into_iter()
            .flatten()
            .min()
            .unwrap()
            .max(now);
        if send_at == Some(now) {
            let i = next_segment;
            a.handle_local(now, &client_segment(i));
            wire.take(&mut a, now, true, lost.contains(&i));
            next_segment += 1;
            if queue && i == lost.end {
                wire.delay = ms(200);
            }
        }
        if resend && now >= resend_at {
            // The segment the local TCP's last ACK asks for (the first one the peer has not seen).
            a.handle_local(now, &client_segment((snd_una - C_ISN - 1) / MSS));
            resend_at = now + ms(40);
        }
        wire.deliver(&mut a, &mut b, now);
        a.handle_timeout(now);
        b.handle_timeout(now);
        wire.take(&mut a, now, true, false);
        wire.take(&mut b, now, false, false);
        while let Some(p) = a.poll_local() {
            snd_una = TcpPacket::parse(&p).unwrap().tcp.ack;
        }
        while let Some(p) = b.poll_local() {
            let pkt = TcpPacket::parse(&p).unwrap();
            if !pkt.payload().is_empty() {
                delivered.insert(pkt.tcp.seq);
            }
        }
    }
    assert_eq!(
        delivered.len(),
        n as usize,
        "every segment delivered within 20 s"
    );
    let held = a
        .stats()
        .flows
        .values()
        .map(|f| f.held_repairs)
        .sum::<u64>();
    (now - ms(100 + u64::from(n)), held)
}
