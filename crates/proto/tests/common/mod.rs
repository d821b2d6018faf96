//! Shared harness: two engines joined by a lossy, duplicating, reordering channel, a scripted
//! TCP-like sender behind engine A and a TCP-like receiver behind engine B.
#![allow(dead_code)]

pub mod bottleneck;
mod channel;
pub mod flows;
pub mod frames;
pub mod greedy;
pub mod timed;

// Not every test binary uses every part of the harness.
#[allow(unused_imports)]
pub use channel::{Channel, ChannelParams, Gilbert, TestRng};

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use tcpnc_proto::tcp::{
    Endpoint, FlowKey, IpParams, SegmentFields, TcpFlags, TcpPacket, build_segment, scan_options,
    seq_add, seq_diff, seq_lt,
};
use tcpnc_proto::{Engine, EngineConfig};

pub const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
pub const SERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
pub const CPORT: u16 = 40000;
pub const SPORT: u16 = 80;

pub fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

pub fn client_to_server() -> FlowKey {
    FlowKey::new(
        Endpoint::new(IpAddr::V4(CLIENT), CPORT),
        Endpoint::new(IpAddr::V4(SERVER), SPORT),
    )
}

pub fn server_to_client() -> FlowKey {
    FlowKey::new(
        Endpoint::new(IpAddr::V4(SERVER), SPORT),
        Endpoint::new(IpAddr::V4(CLIENT), CPORT),
    )
}

/// SYN options: MSS, SACK-permitted, timestamps, window scale (multiple of 4 bytes).
pub fn syn_options(mss: u16, wscale: u8) -> Vec<u8> {
    let mut o = vec![2, 4];
    o.extend_from_slice(&mss.to_be_bytes());
    o.extend_from_slice(&[4, 2]); // SACK-permitted
    o.extend_from_slice(&[8, 10, 0, 0, 0, 1, 0, 0, 0, 0]); // timestamps
    o.extend_from_slice(&[1, 3, 3, wscale]); // NOP, window scale
    o
}

pub fn segment(
    flow: &FlowKey,
    seq: u32,
    ack: u32,
    flags: TcpFlags,
    window: u16,
    options: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    let fields = SegmentFields {
        seq,
        ack,
        flags,
        window,
        urgent: 0,
    };
    build_segment(flow, &fields, options, payload, &IpParams::default()).unwrap()
}

/// A data segment of the client's flow: ack 1, window 1000, no options.
pub fn client_data_at(seq: u32, payload: &[u8]) -> Vec<u8> {
    segment(
        &client_to_server(),
        seq,
        1,
        TcpFlags::ACK,
        1000,
        &[],
        payload,
    )
}

/// The `i`-th client → server data segment of a bulk stream of `len`-byte segments from `isn`
/// (payload bytes all `i`).
pub fn bulk_segment(isn: u32, i: u32, len: u32) -> Vec<u8> {
    let payload = vec![i as u8; len as usize];
    segment(
        &client_to_server(),
        isn.wrapping_add(i * len),
        1,
        TcpFlags::ACK,
        1000,
        &[],
        &payload,
    )
}

pub fn flags(bits: &[TcpFlags]) -> TcpFlags {
    TcpFlags(bits.iter().fold(0, |a, f| a | f.bits()))
}

/// A scripted TCP-like sender (client side, behind engine A).
#[derive(Debug)]
pub struct TcpSender {
    pub data: Vec<u8>,
    pub isn: u32,
    pub mss: usize,
    pub wscale: u8,
    pub peer_wscale: u8,
    pub established: bool,
    pub server_isn: u32,
    /// Offsets into `data` (relative to isn + 1).
    pub snd_una: u32,
    pub snd_nxt: u32,
    pub peer_window: u32,
    pub cwnd_bytes: u32,
    pub last_progress: Duration,
    pub rto: Duration,
    pub dup_acks: u32,
    pub last_ack: u32,
    pub fin_sent: bool,
    pub fin_acked: bool,
    pub dup_acks_seen: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub max_seg: usize,
}

impl TcpSender {
    pub fn new(data: Vec<u8>, isn: u32, mss: usize) -> Self {
        TcpSender {
            data,
            isn,
            mss,
            wscale: 1,
            peer_wscale: 0,
            established: false,
            server_isn: 0,
            snd_una: 0,
            snd_nxt: 0,
            peer_window: 0,
            cwnd_bytes: 24_000,
            last_progress: Duration::ZERO,
            rto: ms(400),
            dup_acks: 0,
            last_ack: 0,
            fin_sent: false,
            fin_acked: false,
            dup_acks_seen: 0,
            fast_retransmits: 0,
            timeouts: 0,
            max_seg: 0,
        }
    }

    fn seq(&self, off: u32) -> u32 {
        seq_add(self.isn, 1 + off)
    }

    pub fn syn(&self) -> Vec<u8> {
        segment(
            &client_to_server(),
            self.isn,
            0,
            TcpFlags::SYN,
            65535,
            &syn_options(1400, self.wscale),
            &[],
        )
    }

    fn seg_at(&self, off: u32, len: usize, rng: &mut TestRng) -> Vec<u8> {
        let end = (off as usize + len).min(self.data.len());
        let f = if rng.chance(0.3) {
            flags(&[TcpFlags::ACK, TcpFlags::PSH])
        } else {
            TcpFlags::ACK
        };
        segment(
            &client_to_server(),
            self.seq(off),
            seq_add(self.server_isn, 1),
            f,
            30_000,
            &[],
            &self.data[off as usize..end],
        )
    }

    fn fin(&self) -> Vec<u8> {
        segment(
            &client_to_server(),
            self.seq(self.data.len() as u32),
            seq_add(self.server_isn, 1),
            flags(&[TcpFlags::ACK, TcpFlags::FIN]),
            30_000,
            &[],
            &[],
        )
    }

    /// Handles a packet from engine A's `poll_local`; returns packets to send.
    pub fn on_packet(&mut self, now: Duration, p: &[u8], rng: &mut TestRng) -> Vec<Vec<u8>> {
        let pkt = TcpPacket::parse(p).expect("engine output parses");
        assert!(pkt.checksum_ok(), "synthesised/forwarded packet checksum");
        assert_eq!(pkt.flow(), server_to_client());
        let f = pkt.tcp.flags;
        let mut out = Vec::new();
        if f.contains(TcpFlags::SYN) {
            if !self.established {
                let opts = scan_options(pkt.options()).unwrap();
                assert!(!opts.sack_permitted && !opts.timestamps, "options stripped");
                self.peer_wscale = opts.window_scale.unwrap_or(0);
                self.server_isn = pkt.tcp.seq;
                self.established = true;
                self.peer_window = u32::from(pkt.tcp.window);
                self.last_progress = now;
            }
            // Handshake ACK (again, if the SYN-ACK is retransmitted).
            out.push(segment(
                &client_to_server(),
                self.seq(0),
                seq_add(self.server_isn, 1),
                TcpFlags::ACK,
                30_000,
                &[],
                &[],
            ));
            out.extend(self.pump(now, rng));
            return out;
        }
        if !f.contains(TcpFlags::ACK) {
            return out;
        }
        let ack_off = seq_diff(pkt.tcp.ack, self.seq(0));
        let window = u32::from(pkt.tcp.window) << self.peer_wscale;
        let total = self.data.len() as u32 + u32::from(self.fin_sent);
        if ack_off < 0 || ack_off as u32 > total {
            return out; // old or bogus
        }
        let ack_off = ack_off as u32;
        if ack_off > self.snd_una {
            self.snd_una = ack_off;
            self.dup_acks = 0;
            self.last_progress = now;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            if self.fin_sent && ack_off == self.data.len() as u32 + 1 {
                self.fin_acked = true;
            }
        } else if ack_off == self.snd_una
            && ack_off == self.last_ack
            && window == self.peer_window
            && self.snd_nxt > self.snd_una
        {
            self.dup_acks += 1;
            self.dup_acks_seen += 1;
            if self.dup_acks == 3 {
                self.fast_retransmits += 1;
                let len = self.mss;
                if (self.snd_una as usize) < self.data.len() {
                    out.push(self.seg_at(self.snd_una, len, rng));
                } else if self.fin_sent {
                    out.push(self.fin());
                }
            }
        }
        self.last_ack = ack_off;
        self.peer_window = window;
        out.extend(self.pump(now, rng));
        out
    }

    /// New data within min(cwnd, peer window).
    pub fn pump(&mut self, _now: Duration, rng: &mut TestRng) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        if !self.established {
            return out;
        }
        let limit = self.snd_una + self.cwnd_bytes.min(self.peer_window.max(1));
        while (self.snd_nxt as usize) < self.data.len() && self.snd_nxt < limit {
            let len = 1 + rng.below(self.mss as u64) as usize;
            let len = len.min((limit - self.snd_nxt) as usize).max(1);
            let p = self.seg_at(self.snd_nxt, len, rng);
            let sent = TcpPacket::parse(&p).unwrap().payload().len() as u32;
            self.max_seg = self.max_seg.max(sent as usize);
            self.snd_nxt += sent;
            out.push(p);
        }
        if self.snd_nxt as usize == self.data.len() && !self.fin_sent && self.snd_nxt < limit {
            self.fin_sent = true;
            self.snd_nxt += 1;
            out.push(self.fin());
        }
        out
    }

    /// Retransmission timer: go back to snd_una (repacketised at full MSS).
    pub fn on_tick(&mut self, now: Duration, rng: &mut TestRng) -> Vec<Vec<u8>> {
        if !self.established {
            if now >= self.last_progress + self.rto {
                self.last_progress = now;
                return vec![self.syn()];
            }
            return Vec::new();
        }
        if self.snd_nxt > self.snd_una && now >= self.last_progress + self.rto {
            self.timeouts += 1;
            self.last_progress = now;
            self.dup_acks = 0;
            if (self.snd_una as usize) < self.data.len() {
                return vec![self.seg_at(self.snd_una, self.mss, rng)];
            } else if self.fin_sent && !self.fin_acked {
                return vec![self.fin()];
            }
        }
        Vec::new()
    }

    pub fn done(&self) -> bool {
        self.fin_acked
    }
}

/// A TCP-like receiver (server side, behind engine B): accepts in-order bytes only.
#[derive(Debug)]
pub struct TcpReceiver {
    pub isn: u32,
    pub wscale: u8,
    pub client_isn: Option<u32>,
    pub rcv_nxt: u32,
    pub received: Vec<u8>,
    pub fin_received: bool,
    pub buffer: u32,
    pub segments_accepted: u64,
    pub out_of_order: u64,
    pub syn_mss_seen: Option<u16>,
}

impl TcpReceiver {
    pub fn new(isn: u32) -> Self {
        TcpReceiver {
            isn,
            wscale: 2,
            client_isn: None,
            rcv_nxt: 0,
            received: Vec::new(),
            fin_received: false,
            buffer: 200_000,
            segments_accepted: 0,
            out_of_order: 0,
            syn_mss_seen: None,
        }
    }

    fn ack(&self) -> Vec<u8> {
        segment(
            &server_to_client(),
            seq_add(self.isn, 1),
            self.rcv_nxt,
            TcpFlags::ACK,
            (self.buffer >> self.wscale) as u16,
            &[],
            &[],
        )
    }

    pub fn on_packet(&mut self, p: &[u8]) -> Vec<Vec<u8>> {
        let pkt = TcpPacket::parse(p).expect("engine output parses");
        assert!(
            pkt.checksum_ok(),
            "delivered segment checksum verifies end to end"
        );
        assert_eq!(pkt.flow(), client_to_server());
        let f = pkt.tcp.flags;
        if f.contains(TcpFlags::SYN) {
            let opts = scan_options(pkt.options()).unwrap();
            assert!(!opts.sack_permitted && !opts.timestamps, "options stripped");
            self.syn_mss_seen = opts.mss;
            if self.client_isn.is_none() {
                self.client_isn = Some(pkt.tcp.seq);
                self.rcv_nxt = seq_add(pkt.tcp.seq, 1);
            }
            return vec![segment(
                &server_to_client(),
                self.isn,
                self.rcv_nxt,
                flags(&[TcpFlags::SYN, TcpFlags::ACK]),
                65535,
                &syn_options(1400, self.wscale),
                &[],
            )];
        }
        if self.client_isn.is_none() {
            return Vec::new();
        }
        let payload = pkt.payload();
        if payload.is_empty() && !f.contains(TcpFlags::FIN) {
            // Handshake ACK or probe: answer probes only (old seq).
            if seq_lt(pkt.tcp.seq, self.rcv_nxt) {
                return vec![self.ack()];
            }
            return Vec::new();
        }
        if pkt.tcp.seq == self.rcv_nxt {
            self.received.extend_from_slice(payload);
            self.rcv_nxt = seq_add(self.rcv_nxt, payload.len() as u32);
            if f.contains(TcpFlags::FIN) {
                self.fin_received = true;
                self.rcv_nxt = seq_add(self.rcv_nxt, 1);
            }
            self.segments_accepted += 1;
        } else if seq_lt(self.rcv_nxt, pkt.tcp.seq) {
            self.out_of_order += 1;
        } else {
            // Old data overlapping rcv_nxt: take the new part.
            let skip = seq_diff(self.rcv_nxt, pkt.tcp.seq) as usize;
            if skip < payload.len() {
                self.received.extend_from_slice(&payload[skip..]);
                self.rcv_nxt = seq_add(self.rcv_nxt, (payload.len() - skip) as u32);
            }
            if f.contains(TcpFlags::FIN) && pkt.end_seq() == seq_add(self.rcv_nxt, 1) {
                self.fin_received = true;
                self.rcv_nxt = seq_add(self.rcv_nxt, 1);
            }
        }
        vec![self.ack()]
    }
}

/// The whole testbed.
pub struct Pair {
    pub a: Engine,
    pub b: Engine,
    pub ab: Channel,
    pub ba: Channel,
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    pub rng: TestRng,
    pub now: Duration,
}

impl Pair {
    pub fn new(
        cfg: EngineConfig,
        data: Vec<u8>,
        ab: ChannelParams,
        ba: ChannelParams,
        seed: u64,
    ) -> Self {
        Pair {
            a: Engine::new(cfg.clone(), seed).unwrap(),
            b: Engine::new(cfg, seed ^ 0xABCD).unwrap(),
            ab: Channel::new(ab),
            ba: Channel::new(ba),
            sender: TcpSender::new(data, 1_000_000, 1000),
            receiver: TcpReceiver::new(7_000_000),
            rng: TestRng(seed | 1),
            now: Duration::ZERO,
        }
    }

    /// Runs until the sender saw its FIN acknowledged or `limit` of virtual time passed.
    pub fn run(&mut self, limit: Duration) -> bool {
        let syn = self.sender.syn();
        self.a.handle_local(self.now, &syn);
        self.sender.last_progress = self.now;
        let step = ms(1);
        while self.now < limit {
            self.shuttle();
            if self.sender.done() && self.receiver.fin_received {
                return true;
            }
            self.now += step;
            for e in [&mut self.a, &mut self.b] {
                if e.poll_timeout().is_some_and(|t| t <= self.now) {
                    e.handle_timeout(self.now);
                }
            }
            let pkts = self.sender.on_tick(self.now, &mut self.rng);
            for p in pkts {
                self.a.handle_local(self.now, &p);
            }
        }
        false
    }

    /// Moves everything that is ready, until quiescent for this instant.
    pub fn shuttle(&mut self) {
        loop {
            let mut moved = false;
            while let Some(d) = self.a.poll_transmit() {
                self.ab.send(self.now, d, &mut self.rng);
                moved = true;
            }
            while let Some(d) = self.b.poll_transmit() {
                self.ba.send(self.now, d, &mut self.rng);
                moved = true;
            }
            for d in self.ab.due(self.now) {
                self.b.handle_datagram(self.now, &d);
                moved = true;
            }
            for d in self.ba.due(self.now) {
                self.a.handle_datagram(self.now, &d);
                moved = true;
            }
            while let Some(p) = self.a.poll_local() {
                let replies = self.sender.on_packet(self.now, &p, &mut self.rng);
                for r in replies {
                    self.a.handle_local(self.now, &r);
                }
                moved = true;
            }
            while let Some(p) = self.b.poll_local() {
                let replies = self.receiver.on_packet(&p);
                for r in replies {
                    self.b.handle_local(self.now, &r);
                }
                moved = true;
            }
            if !moved {
                break;
            }
        }
    }
}
