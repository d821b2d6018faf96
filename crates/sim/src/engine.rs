//! The discrete-event loop.
//!
//! At each virtual instant the loop repeats, until nothing moves: the client application
//! fills its socket; both interfaces are polled; packets the endpoints emitted go to their
//! boxes and from there onto the links; due box timers fire; packets the links deliver go
//! through the far box into the far endpoint's device; the server application drains its
//! socket. Then virtual time jumps to the earliest of: both interfaces' `poll_at`, both
//! links' and both boxes' `poll_timeout` (never backwards; at least 1 µs forward if an
//! interface asks to be polled at a time already reached, since smoltcp's clock is in µs).

use std::time::Duration;

use tcpnc_link::{Link, rng::SplitMix64};

use crate::app::{Sink, Source};
use crate::config::{SimConfig, SimError};
use crate::endpoint::{CLIENT_ADDR, Endpoint, SERVER_ADDR, SERVER_PORT};
use crate::pathbox::{Passthrough, PathBox};
use crate::report::{SimOutcome, SimReport};
use crate::tap::{ReceiverTap, SenderTap, TcpCounters};

/// Upper bound on work rounds within one virtual instant (guards against livelock).
const MAX_ROUNDS_PER_INSTANT: u32 = 1_000_000;

/// Runs a plain-mode transfer ([`Passthrough`] boxes on both sides).
pub fn run(cfg: &SimConfig) -> Result<SimReport, SimError> {
    run_with_boxes(cfg, &mut Passthrough::new(), &mut Passthrough::new())
}

/// Runs a transfer with the given boxes beside the client and the server.
pub fn run_with_boxes(
    cfg: &SimConfig,
    client_box: &mut dyn PathBox,
    server_box: &mut dyn PathBox,
) -> Result<SimReport, SimError> {
    cfg.validate()?;
    let mut seeds = SplitMix64::new(cfg.seed);
    let mut fwd =
        Link::new(cfg.forward.clone(), seeds.next_u64()).map_err(|source| SimError::Link {
            direction: "forward",
            source,
        })?;
    let mut rev =
        Link::new(cfg.reverse.clone(), seeds.next_u64()).map_err(|source| SimError::Link {
            direction: "reverse",
            source,
        })?;
    let mut source = Source::new(cfg.bytes, seeds.next_u64());
    let mut client = Endpoint::new(CLIENT_ADDR, cfg, seeds.next_u64());
    let mut server = Endpoint::new(SERVER_ADDR, cfg, seeds.next_u64());
    let local_port = 49152 + (seeds.next_u64() % 16384) as u16;
    let mut sink = Sink::new();
    let mut tcp = TcpCounters::default();
    let mut sender_tap = SenderTap::default();
    let mut receiver_tap = ReceiverTap::default();

    server
        .socket()
        .listen(SERVER_PORT)
        .expect("fresh socket can listen");
    client
        .connect(local_port)
        .expect("fresh socket can connect");

    let mut now = Duration::ZERO;
    let mut steps = 0u64;
    let mut established = false;
    let outcome = 'outer: loop {
        steps += 1;
        let mut rounds = 0u32;
        loop {
            rounds += 1;
            if rounds > MAX_ROUNDS_PER_INSTANT {
                break 'outer SimOutcome::Stalled;
            }
            let mut progress = source.pump(client.socket());
            progress |= client.poll(now);
            progress |= server.poll(now);
            progress |= sink.pump(server.socket());

            for pkt in client.device.tx.drain(..) {
                sender_tap.observe(&pkt, &mut tcp);
                client_box.handle_local(now, &pkt);
                progress = true;
            }
            for pkt in server.device.tx.drain(..) {
                receiver_tap.observe(&pkt, &mut tcp);
                server_box.handle_local(now, &pkt);
                progress = true;
            }
            progress |= fire_timer(client_box, now);
            progress |= fire_timer(server_box, now);
            while let Some(d) = fwd.poll_deliver(now) {
                server_box.handle_remote(now, &d);
                progress = true;
            }
            while let Some(d) = rev.poll_deliver(now) {
                client_box.handle_remote(now, &d);
                progress = true;
            }
            while let Some(d) = client_box.poll_remote() {
                fwd.send(now, d);
            }
            while let Some(d) = server_box.poll_remote() {
                rev.send(now, d);
            }
            while let Some(p) = client_box.poll_local() {
                client.device.rx.push_back(p);
                progress = true;
            }
            while let Some(p) = server_box.poll_local() {
                server.device.rx.push_back(p);
                progress = true;
            }

            if sink.received() >= cfg.bytes {
                break 'outer SimOutcome::Completed;
            }
            if !progress {
                break;
            }
        }

        established |= client.socket().state() == smoltcp::socket::tcp::State::Established;
        if established && (!client.socket().is_open() || !server.socket().is_open()) {
            break SimOutcome::ConnectionClosed;
        }

        let candidates = [
            client.poll_at(now),
            server.poll_at(now),
            fwd.poll_timeout(),
            rev.poll_timeout(),
            client_box.poll_timeout(),
            server_box.poll_timeout(),
        ];
        let Some(mut next) = candidates.into_iter().flatten().min() else {
            break SimOutcome::Stalled;
        };
        if next <= now {
            // An interface asked for a poll at a µs instant already reached.
            next = Duration::from_micros(now.as_micros() as u64 + 1);
        }
        if next > cfg.max_sim_time {
            now = cfg.max_sim_time;
            break SimOutcome::TimeLimit;
        }
        now = next;
    };

    let sha256_sent = source.digest();
    let sha256_received = sink.digest();
    let completion_s = now.as_secs_f64();
    let goodput_mbit = if completion_s > 0.0 {
        sink.received() as f64 * 8.0 / completion_s / 1e6
    } else {
        0.0
    };
    Ok(SimReport {
        outcome,
        completion: now,
        completion_s,
        goodput_mbit,
        integrity_ok: outcome == SimOutcome::Completed
            && sink.received() == cfg.bytes
            && source.written() == cfg.bytes
            && sha256_sent == sha256_received,
        bytes_requested: cfg.bytes,
        bytes_written: source.written(),
        bytes_delivered: sink.received(),
        sha256_sent,
        sha256_received,
        forward: fwd.stats(),
        reverse: rev.stats(),
        client_box: client_box.counters(),
        server_box: server_box.counters(),
        tcp,
        steps,
    })
}

/// Fires a box's timer if it is due; `true` if it fired.
fn fire_timer(b: &mut dyn PathBox, now: Duration) -> bool {
    if b.poll_timeout().is_some_and(|t| t <= now) {
        b.handle_timeout(now);
        true
    } else {
        false
    }
}
