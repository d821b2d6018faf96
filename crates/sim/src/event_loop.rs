//! The discrete-event loop.
//!
//! At each virtual instant the loop repeats, until nothing moves: the client application
//! fills its socket; both interfaces are polled; packets the endpoints emitted go to their
//! boxes and from there onto the links; due box timers fire; packets the links deliver go
//! through the far box into the far endpoint's device; the server application drains its
//! socket. Then virtual time jumps to the earliest of: both interfaces' `poll_at`, both
//! links' and both boxes' `poll_timeout` (never backwards; at least 1 µs forward if an
//! interface asks to be polled at a time already reached, since smoltcp's clock is in µs).
//!
//! The boxes are [`Seam`] elements: "local" is their TCP endpoint, "remote" the link.

use std::collections::BTreeMap;
use std::time::Duration;

use tcpnc_link::{Link, rng::SplitMix64};
use tcpnc_proto::seam::{Counters, PassThrough, Seam};

use crate::app::{Bulk, Sink, Source, Workload};
use crate::config::{SimConfig, SimError};
use crate::endpoint::{CLIENT_ADDR, Endpoint, SERVER_ADDR, SERVER_PORT};
use crate::report::{SimOutcome, SimReport};
use crate::series::{Series, SeriesRow};
use crate::tcp_counters::{ReceiverTap, SenderTap, TcpCounters};

/// Upper bound on work rounds within one virtual instant (guards against livelock).
const MAX_ROUNDS_PER_INSTANT: u32 = 1_000_000;

/// Runs a plain-mode transfer ([`PassThrough::raw`] boxes on both sides).
pub fn run(cfg: &SimConfig) -> Result<SimReport, SimError> {
    run_with_boxes(cfg, &mut PassThrough::raw(), &mut PassThrough::raw())
}

/// Runs a transfer with the given boxes beside the client and the server.
pub fn run_with_boxes(
    cfg: &SimConfig,
    client_box: &mut dyn Seam,
    server_box: &mut dyn Seam,
) -> Result<SimReport, SimError> {
    // The bulk source's seed is the third drawn from the master seed (after the two links').
    let mut seeds = SplitMix64::new(cfg.seed);
    seeds.next_u64();
    seeds.next_u64();
    let mut bulk = Bulk {
        source: Source::new(cfg.bytes, seeds.next_u64()),
        sink: Sink::new(),
    };
    run_workload(cfg, &mut bulk, client_box, server_box)
}

/// Runs `app` (`cfg.bytes` = what it writes in all) with the given boxes beside the client
/// and the server.
pub fn run_workload(
    cfg: &SimConfig,
    app: &mut dyn Workload,
    client_box: &mut dyn Seam,
    server_box: &mut dyn Seam,
) -> Result<SimReport, SimError> {
    cfg.validate()?;
    let mut world = World::new(cfg, app, client_box, server_box)?;
    let mut now = Duration::ZERO;
    let mut steps = 0u64;
    let mut established = false;
    let outcome = loop {
        steps += 1;
        let ended = world.run_instant(now);
        world.sample(now);
        if let Some(outcome) = ended {
            break outcome;
        }
        established |= world.client.socket().state() == smoltcp::socket::tcp::State::Established;
        if established && (!world.client.socket().is_open() || !world.server.socket().is_open()) {
            break SimOutcome::ConnectionClosed;
        }
        match world.next_instant(now) {
            Some(next) if next > cfg.max_sim_time => {
                now = cfg.max_sim_time;
                break SimOutcome::TimeLimit;
            }
            Some(next) => now = next,
            None => break SimOutcome::Stalled,
        }
    };
    Ok(world.report(outcome, now, steps))
}

/// Everything one run moves packets between.
struct World<'a> {
    cfg: &'a SimConfig,
    fwd: Link,
    rev: Link,
    app: &'a mut dyn Workload,
    client: Endpoint,
    server: Endpoint,
    tcp: TcpCounters,
    sender_tap: SenderTap,
    receiver_tap: ReceiverTap,
    /// ACKs reaching the client, seen as a receiver tap sees its ACKs (duplicates at the sender).
    sender_ack_tap: ReceiverTap,
    sender_acks: TcpCounters,
    /// Data segments handed to the server TCP.
    decoded_packets: u64,
    /// The flight size integrated over virtual time (byte·µs) up to `flight_at`.
    flight_area: u128,
    flight_at: Duration,
    flight_prev: u64,
    series: Option<Series>,
    client_box: &'a mut dyn Seam,
    server_box: &'a mut dyn Seam,
}

impl<'a> World<'a> {
    /// Links, applications and endpoints with seeds drawn from `cfg.seed` in a fixed order,
    /// the server listening and the client connecting.
    fn new(
        cfg: &'a SimConfig,
        app: &'a mut dyn Workload,
        client_box: &'a mut dyn Seam,
        server_box: &'a mut dyn Seam,
    ) -> Result<Self, SimError> {
        let mut seeds = SplitMix64::new(cfg.seed);
        let link = |c: &tcpnc_link::LinkConfig, seed, direction| {
            Link::new(c.clone(), seed).map_err(|source| SimError::Link { direction, source })
        };
        let fwd = link(&cfg.forward, seeds.next_u64(), "forward")?;
        let rev = link(&cfg.reverse, seeds.next_u64(), "reverse")?;
        seeds.next_u64(); // the bulk source's seed (`run_with_boxes`)
        let client = Endpoint::new(CLIENT_ADDR, cfg, seeds.next_u64());
        let server = Endpoint::new(SERVER_ADDR, cfg, seeds.next_u64());
        let local_port = 49152 + (seeds.next_u64() % 16384) as u16;
        let mut w = World {
            cfg,
            fwd,
            rev,
            app,
            client,
            server,
            tcp: TcpCounters::default(),
            sender_tap: SenderTap::default(),
            receiver_tap: ReceiverTap::default(),
            sender_ack_tap: ReceiverTap::default(),
            sender_acks: TcpCounters::default(),
            decoded_packets: 0,
            flight_area: 0,
            flight_at: Duration::ZERO,
            flight_prev: 0,
            series: cfg.series_interval.map(Series::new),
            client_box,
            server_box,
        };
        w.server
            .socket()
            .listen(SERVER_PORT)
            .expect("fresh socket can listen");
        w.client
            .connect(local_port)
            .expect("fresh socket can connect");
        Ok(w)
    }

    /// Work rounds at `now` until nothing moves; `Some` when the run ends in this instant.
    fn run_instant(&mut self, now: Duration) -> Option<SimOutcome> {
        let mut rounds = 0u32;
        loop {
            rounds += 1;
            if rounds > MAX_ROUNDS_PER_INSTANT {
                return Some(SimOutcome::Stalled);
            }
            let progress = self.round(now);
            if self.app.received() >= self.cfg.bytes {
                return Some(SimOutcome::Completed);
            }
            if !progress {
                return None;
            }
        }
    }

    /// One work round (see the module docs); `true` if anything moved.
    fn round(&mut self, now: Duration) -> bool {
        let mut progress = self.app.pump_source(now, self.client.socket());
        progress |= self.client.poll(now);
        progress |= self.server.poll(now);
        progress |= self.app.pump_sink(now, self.server.socket());
        progress |= self.endpoints_to_boxes(now);
        progress |= fire_timer(&mut *self.client_box, now);
        progress |= fire_timer(&mut *self.server_box, now);
        progress |= self.links_to_boxes(now);
        while let Some(d) = self.client_box.poll_remote() {
            self.fwd.send(now, d);
        }
        while let Some(d) = self.server_box.poll_remote() {
            self.rev.send(now, d);
        }
        progress | self.boxes_to_endpoints()
    }

    /// Packets the endpoints emitted, observed by the taps, into their boxes.
    fn endpoints_to_boxes(&mut self, now: Duration) -> bool {
        let mut progress = false;
        for pkt in self.client.device.tx.drain(..) {
            self.sender_tap.observe(&pkt, &mut self.tcp);
            self.client_box.handle_local(now, &pkt);
            progress = true;
        }
        for pkt in self.server.device.tx.drain(..) {
            self.receiver_tap.observe(&pkt, &mut self.tcp);
            self.server_box.handle_local(now, &pkt);
            progress = true;
        }
        progress
    }

    /// Datagrams the links deliver at `now` into the far boxes.
    fn links_to_boxes(&mut self, now: Duration) -> bool {
        let mut progress = false;
        while let Some(d) = self.fwd.poll_deliver(now) {
            self.server_box.handle_remote(now, &d);
            progress = true;
        }
        while let Some(d) = self.rev.poll_deliver(now) {
            self.client_box.handle_remote(now, &d);
            progress = true;
        }
        progress
    }

    /// Packets the boxes hand out into their endpoints' devices.
    fn boxes_to_endpoints(&mut self) -> bool {
        let mut progress = false;
        while let Some(p) = self.client_box.poll_local() {
            self.sender_ack_tap.observe(&p, &mut self.sender_acks);
            self.sender_tap.observe_ack(&p);
            self.client.device.rx.push_back(p);
            progress = true;
        }
        while let Some(p) = self.server_box.poll_local() {
            if self.series.is_some() && carries_payload(&p) {
                self.decoded_packets += 1;
            }
            self.server.device.rx.push_back(p);
            progress = true;
        }
        progress
    }

    /// Adds what happened up to `now` to the flight-size integral and the series (if one is
    /// recorded). The flight size held since the previous instant is the one before `now`'s
    /// packets, so the integral is taken before the new value is read.
    fn sample(&mut self, now: Duration) {
        let flight = self.sender_tap.flight_bytes();
        let dt = now.saturating_sub(self.flight_at).as_micros();
        self.flight_area += u128::from(self.flight_prev) * dt;
        self.flight_at = now;
        self.flight_prev = flight;
        if let Some(series) = &mut self.series {
            series.observe(
                now,
                SeriesRow {
                    decoded_packets: self.decoded_packets,
                    goodput_bytes: self.app.received(),
                    dup_acks: self.sender_acks.dup_acks,
                    retransmissions: self.tcp.retransmissions,
                    fast_retransmits: self.tcp.fast_retransmits,
                    flight_bytes: flight,
                },
            );
        }
    }

    /// The next virtual instant anything is due; `None` if nothing is.
    fn next_instant(&mut self, now: Duration) -> Option<Duration> {
        let candidates = [
            self.client.poll_at(now),
            self.server.poll_at(now),
            self.fwd.poll_timeout(),
            self.rev.poll_timeout(),
            self.client_box.poll_timeout(),
            self.server_box.poll_timeout(),
            self.app.next_write().filter(|&t| t > now),
        ];
        let next = candidates.into_iter().flatten().min()?;
        // An interface asked for a poll at a µs instant already reached.
        Some(if next <= now {
            Duration::from_micros(now.as_micros() as u64 + 1)
        } else {
            next
        })
    }

    /// The report of a run that ended with `outcome` at `now`.
    fn report(&self, outcome: SimOutcome, now: Duration, steps: u64) -> SimReport {
        let bytes = self.cfg.bytes;
        let (sha256_sent, sha256_received) = self.app.digests();
        let completion_s = now.as_secs_f64();
        let goodput_mbit = if completion_s > 0.0 {
            self.app.received() as f64 * 8.0 / completion_s / 1e6
        } else {
            0.0
        };
        SimReport {
            outcome,
            completion: now,
            completion_s,
            goodput_mbit,
            integrity_ok: outcome == SimOutcome::Completed
                && self.app.received() == bytes
                && self.app.written() == bytes
                && sha256_sent == sha256_received,
            bytes_requested: bytes,
            bytes_written: self.app.written(),
            bytes_delivered: self.app.received(),
            sha256_sent,
            sha256_received,
            forward: self.fwd.stats(),
            reverse: self.rev.stats(),
            client_box: counter_map(&self.client_box.counters()),
            server_box: counter_map(&self.server_box.counters()),
            tcp: TcpCounters {
                dup_acks_at_sender: self.sender_acks.dup_acks,
                dup_ack_runs_at_sender: self.sender_acks.dup_ack_runs,
                ..self.tcp
            },
            steps,
            flight_mean_bytes: if now.is_zero() {
                0.0
            } else {
                self.flight_area as f64 / now.as_micros() as f64
            },
            series: self.series.clone(),
        }
    }
}

/// A box's totals as the report's ordered map.
pub fn counter_map(c: &Counters) -> BTreeMap<String, u64> {
    c.totals.iter().map(|&(k, v)| (k.to_string(), v)).collect()
}

/// Whether an IP packet is a TCP segment with payload.
fn carries_payload(pkt: &[u8]) -> bool {
    tcpnc_proto::tcp::TcpPacket::parse(pkt).is_ok_and(|p| !p.payload().is_empty())
}

/// Fires a box's timer if it is due; `true` if it fired.
fn fire_timer(b: &mut dyn Seam, now: Duration) -> bool {
    if b.poll_timeout().is_some_and(|t| t <= now) {
        b.handle_timeout(now);
        true
    } else {
        false
    }
}
