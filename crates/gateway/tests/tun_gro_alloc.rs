//! The TUN's write-side GRO allocates nothing once warm: tun-rs's GRO copied every packet into
//! a fresh `Vec` (about 7 % of a receiving gateway's time at 2 Gbit/s in malloc/free), ours
//! merges in the batch's reused buffers. Allocations are counted with `dhat`'s heap-testing
//! mode around the batches after a warm-up (queueing the packets in the `TunTx` included).

mod common;

use common::segments::{self, Segment};
use tcpnc_gateway::tun_batch::TunTx;
use tcpnc_gateway::tun_gro::TunGro;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Four flows (two IPv4, two IPv6) of 16 segments each, interleaved, a UDP datagram between.
fn batch() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for i in 0..16u32 {
        for f in 0..4u16 {
            let mut s = Segment::new(f >= 2, (4000 + f, 80), 1 + i * 1200, vec![f as u8; 1200]);
            s.id = i as u16;
            out.push(s.build());
        }
        let d = Segment::new(false, (53, 53), 0, vec![0; 100]);
        out.push(segments::udp(&d));
    }
    out
}

#[test]
fn coalescing_allocates_nothing_once_warm() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let input = batch();
    let (mut gro, mut tx) = (TunGro::default(), TunTx::default());
    let mut pass = || {
        tx.clear();
        for p in &input {
            tx.push(p);
        }
        gro.coalesce(tx.bufs_mut()).len()
    };
    for _ in 0..3 {
        pass();
    }
    let before = dhat::HeapStats::get().total_blocks;
    let writes: usize = (0..100).map(|_| pass()).sum();
    let allocated = dhat::HeapStats::get().total_blocks - before;
    // Four super-packets and 16 datagrams per batch.
    assert_eq!(writes, 100 * 20, "the flows were merged");
    assert_eq!(allocated, 0, "blocks allocated in 100 warm batches");
}
