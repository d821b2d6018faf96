//! The receiving engine parses and takes every DATA frame without allocating once warm (issue
//! 14: "no per-frame allocation in the sender … or receiver"): the frame's header is parsed
//! into the engine's reused `DataRepr` (`DataRepr::parse_into`), and the decoder works in
//! buffers it keeps.
//!
//! Allocations are counted with `dhat`'s heap-testing mode around each
//! `Engine::handle_datagram` of the receiver only (the test's own segments and the sender
//! allocate as they like). The receiver's outputs (decoded segments, NC-ACKs) go back to it
//! with `Engine::recycle` once read, as the gateway does. With `DataRepr::parse` in the
//! receive path (one `Vec` of ranges per frame) this test fails.

mod common;

use std::time::Duration;

use common::flows::*;
use common::*;
use tcpnc_proto::tcp::{FlowKey, TcpFlags, TcpPacket};
use tcpnc_proto::{Engine, EngineConfig, Policies};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

const SEG: u32 = 1000;

fn blocks() -> u64 {
    dhat::HeapStats::get().total_blocks
}

#[test]
fn the_receiver_takes_data_frames_without_allocating() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let cfg = EngineConfig::new(&Policies::product(), 1472);
    let mut a = Engine::new(cfg.clone(), 1).unwrap();
    let mut b = Engine::new(cfg, 2).unwrap();
    let port = 41_000;
    let (mut frames, mut allocated) = (0u64, 0u64);
    for i in 0..6000u32 {
        let now = ms(u64::from(i));
        a.handle_local(now, &client_data(port, i, SEG));
        while let Some(d) = a.poll_transmit() {
            let before = blocks();
            b.handle_datagram(now, &d);
            // The first 1000 segments warm the buffers up; 5000 are measured.
            if i >= 1000 {
                allocated += blocks() - before;
                frames += 1;
            }
        }
        acknowledge(&mut a, &mut b, port, now);
    }
    assert!(frames >= 5000, "{frames} DATA frames measured");
    // A buffer may still grow once or twice after the warm-up; nothing allocates per frame.
    assert!(
        allocated <= 3,
        "{allocated} allocations over {frames} received DATA frames"
    );
}

/// B's decoded segments go to its local TCP, which acknowledges the last one; B's NC-ACKs reach
/// A at once; every buffer B handed out goes back to it.
fn acknowledge(a: &mut Engine, b: &mut Engine, port: u16, now: Duration) {
    let mut end = None;
    while let Some(p) = b.poll_local() {
        end = TcpPacket::parse(&p).ok().map(|t| t.end_seq()).or(end);
        b.recycle(p);
    }
    if let Some(e) = end {
        let f = client_flow(port);
        let back = FlowKey::new(f.dst, f.src);
        b.handle_local(now, &segment(&back, 1, e, TcpFlags::ACK, 65535, &[], &[]));
    }
    while let Some(d) = b.poll_transmit() {
        a.handle_datagram(now, &d);
        b.recycle(d);
    }
    while a.poll_local().is_some() {}
}
