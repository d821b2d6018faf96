//! Several flows from the client through engine A to engine B: one flow per client port, each
//! step acknowledged at once (tests of per-peer state: path memory, the repair budget), or
//! local TCPs behind A whose ACKs go to their flows (flows sharing a bottleneck).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use tcpnc_proto::Engine;
use tcpnc_proto::tcp::{Endpoint, FlowKey, TcpFlags, TcpPacket, seq_diff};

use super::{CLIENT, SERVER, SPORT, ms, segment};

/// The flow from client port `port` to the server.
pub fn client_flow(port: u16) -> FlowKey {
    FlowKey::new(
        Endpoint::new(IpAddr::V4(CLIENT), port),
        Endpoint::new(IpAddr::V4(SERVER), SPORT),
    )
}

/// Segment `i` of `len` bytes of the flow from client port `port` (sequence 5000 + i·len).
pub fn client_data(port: u16, i: u32, len: u32) -> Vec<u8> {
    client_segment(port, i, len, TcpFlags::ACK)
}

/// [`client_data`] with `flags`.
pub fn client_segment(port: u16, i: u32, len: u32, flags: TcpFlags) -> Vec<u8> {
    segment(
        &client_flow(port),
        5_000 + i * len,
        1,
        flags,
        1000,
        &[],
        &vec![7; len as usize],
    )
}

/// The receiving side of one step of a flow from client port `port`: B's decoded segments go to
/// its local TCP, which acknowledges the last one; B's NC-ACKs reach A at once; A's TCP ACKs are
/// drained.
pub fn acknowledge_at_once(a: &mut Engine, b: &mut Engine, port: u16, now: Duration) {
    let mut end = None;
    while let Some(p) = b.poll_local() {
        end = TcpPacket::parse(&p).ok().map(|t| t.end_seq()).or(end);
    }
    if let Some(e) = end {
        let f = client_flow(port);
        let back = FlowKey::new(f.dst, f.src);
        b.handle_local(now, &segment(&back, 1, e, TcpFlags::ACK, 65535, &[], &[]));
    }
    while let Some(d) = b.poll_transmit() {
        a.handle_datagram(now, &d);
    }
    while a.poll_local().is_some() {}
}

/// The first client port of [`take_flow_acks`]' flows: flow `i` sends from port
/// `FIRST_PORT + i`.
pub const FIRST_PORT: u16 = 40_001;

/// One local TCP behind engine A sending [`client_data`] segments of `seg` bytes: segments first
/// sent and acknowledged, and the window last given to it.
#[derive(Debug, Clone, Copy)]
pub struct FlowTcp {
    pub next: u32,
    pub acked: u32,
    pub window: u32,
    /// Segments the application writes before it closes, the last with FIN (`u32::MAX`: a
    /// bulk sender that never does).
    pub written: u32,
}

impl FlowTcp {
    /// Nothing sent yet, a 64 kB window, a bulk sender.
    pub const START: FlowTcp = FlowTcp {
        next: 0,
        acked: 0,
        window: 65_535,
        written: u32::MAX,
    };
}

/// A's TCP ACKs go to the flows they belong to (flow `i` from port [`FIRST_PORT`] + i).
pub fn take_flow_acks(a: &mut Engine, seg: u32, tcps: &mut [FlowTcp]) {
    while let Some(p) = a.poll_local() {
        let Ok(pkt) = TcpPacket::parse(&p) else {
            continue;
        };
        let tcp = &pkt.tcp;
        let Some(t) = tcps.get_mut(usize::from(tcp.dst_port.wrapping_sub(FIRST_PORT))) else {
            continue;
        };
        let offset = seq_diff(tcp.ack, 5_000);
        if offset >= 0 {
            t.acked = t.acked.max(offset as u32 / seg);
            t.window = u32::from(tcp.window);
        }
    }
}

/// B's local TCPs acknowledge at `now` (ms) what B delivered, each flow its own.
pub fn acknowledge_flows(b: &mut Engine, now: u64) {
    let mut ends: BTreeMap<u16, u32> = BTreeMap::new();
    while let Some(p) = b.poll_local() {
        let pkt = TcpPacket::parse(&p).unwrap();
        ends.insert(pkt.tcp.src_port, pkt.end_seq());
    }
    for (port, end) in ends {
        let f = client_flow(port);
        let back = FlowKey::new(f.dst, f.src);
        let ack = segment(&back, 1, end, TcpFlags::ACK, 65535, &[], &[]);
        b.handle_local(ms(now), &ack);
    }
}
