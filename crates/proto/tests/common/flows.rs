//! Several flows from the client through engine A to engine B: one flow per client port, each
//! step acknowledged at once (tests of per-peer state: path memory, the repair budget).

use std::time::Duration;

use tcpnc_proto::Engine;
use tcpnc_proto::tcp::{FlowKey, TcpFlags, TcpPacket};

use super::segment;
use super::{CLIENT, SERVER, SPORT};
use std::net::IpAddr;
use tcpnc_proto::tcp::Endpoint;

/// The flow from client port `port` to the server.
pub fn client_flow(port: u16) -> FlowKey {
    FlowKey::new(
        Endpoint::new(IpAddr::V4(CLIENT), port),
        Endpoint::new(IpAddr::V4(SERVER), SPORT),
    )
}

/// Segment `i` of `len` bytes of the flow from client port `port` (sequence 5000 + i·len).
pub fn client_data(port: u16, i: u32, len: u32) -> Vec<u8> {
    segment(
        &client_flow(port),
        5_000 + i * len,
        1,
        TcpFlags::ACK,
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
