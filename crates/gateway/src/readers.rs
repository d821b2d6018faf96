//! The reader threads of the event loop: one per blocking source (TUN, UDP), each waiting with
//! `poll(2)` (at most [`POLL_INTERVAL`], to notice shutdown), reading a batch and handing it to
//! the owner thread through the bounded channel in one message. A full channel is a counted
//! drop of the whole batch.
//!
//! Batches: the UDP reader takes everything queued on the socket with one `recvmmsg(2)` (up to
//! [`BATCH`] kernel messages, `Udp::recv_batch`; with UDP GRO a message may hold many
//! datagrams, handed over one by one); the TUN reader makes reads (`Tun::recv_batch`:
//! one packet per `read(2)` on a plain TUN, a whole TSO/GSO super-packet cut into IP packets on
//! an offloading one) and gathers what is ready at once until the batch holds at least
//! [`BATCH`] packets. Buffers: a batch's packet buffers come back from the owner through a pool channel
//! and are refilled in place (`clear` + `extend_from_slice`: no allocation once warm).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, TrySendError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tcpnc_io::{BATCH, RecvSlots};

use crate::io::{Tun, Udp};
use crate::tun_batch::{TunRead, TunRx};

/// How often reader threads and the owner look at the shutdown flag.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// Largest packet or datagram read.
pub const MAX_PACKET: usize = 65536;

/// One packet or datagram of a batch; `from` is the datagram's source (`None` for TUN). The
/// packet is the first `len` bytes of `buf`: a TUN batch's buffers keep a receive slot's full
/// length, so that they can be swapped with the slots without zero-filling (`take_tun`).
#[derive(Debug, Default)]
pub(crate) struct Packet {
    buf: Vec<u8>,
    len: usize,
    pub from: Option<SocketAddr>,
}

impl Packet {
    /// The packet's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// The packet's bytes, to be worked on in place.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buf[..self.len]
    }
}

/// Packets read together; the first `len` of `packets` are valid, the rest are spare buffers.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    packets: Vec<Packet>,
    len: usize,
}

impl Batch {
    /// The valid packets.
    pub fn packets(&self) -> &[Packet] {
        &self.packets[..self.len]
    }

    /// The valid packets, to be worked on in place (datagrams are opened where they are).
    pub fn packets_mut(&mut self) -> &mut [Packet] {
        &mut self.packets[..self.len]
    }

    /// The next packet entry (a spare one reused when there is one).
    fn next_entry(&mut self) -> &mut Packet {
        if self.len == self.packets.len() {
            self.packets.push(Packet::default());
        }
        self.len += 1;
        &mut self.packets[self.len - 1]
    }

    /// Appends a copy of `data`, reusing a spare buffer when there is one.
    fn push(&mut self, data: &[u8], from: Option<SocketAddr>) {
        let p = self.next_entry();
        p.buf.clear();
        p.buf.extend_from_slice(data);
        p.len = data.len();
        p.from = from;
    }

    /// Appends the packets of a TUN read without copying them: each slot's buffer is swapped
    /// with a spare packet buffer of the batch. TUN batches only ever return to the TUN reader,
    /// so the buffers circulate between its slots and its batches and keep a slot's length; a
    /// shorter one (a new entry, while warming up) is zero-filled to it once.
    fn take_tun(&mut self, rx: &mut TunRx) {
        let n = rx.len();
        for (slot, &size) in rx.slots.iter_mut().zip(&rx.sizes).take(n) {
            let slot_len = slot.len();
            let p = self.next_entry();
            std::mem::swap(&mut p.buf, slot);
            p.len = size.min(p.buf.len());
            p.from = None;
            if slot.len() < slot_len {
                slot.resize(slot_len, 0);
            }
        }
    }

    fn reset(mut self) -> Batch {
        self.len = 0;
        self
    }
}

/// One input for the owner thread.
pub(crate) enum Input {
    /// A batch read from TUN queue `.0`.
    Tun(usize, Batch),
    Udp(Batch),
    /// What engine worker `.0` produced ([`crate::workers`]).
    Worker(usize, crate::parcel::Parcel),
    Failed(String, io::Error),
}

/// Counters the reader threads update (the owner adds them to its own in every snapshot).
#[derive(Debug, Default)]
pub(crate) struct ReaderCounters {
    /// Inputs dropped because the owner's channel was full.
    pub queue_drops: AtomicU64,
    /// Read system calls on the TUN.
    pub tun_rx_calls: AtomicU64,
    /// TUN reads that could not be cut into IP packets (dropped).
    pub tun_read_errors: AtomicU64,
    /// Receive system calls on the UDP socket.
    pub udp_rx_calls: AtomicU64,
    /// Kernel messages those calls took (fewer than datagrams with UDP GRO).
    pub udp_rx_messages: AtomicU64,
}

impl ReaderCounters {
    /// Adds the readers' counts to the owner's gateway counters.
    pub fn add_to(&self, g: &mut crate::stats::GatewayCounters) {
        g.queue_drops += self.queue_drops.load(Ordering::Relaxed);
        g.tun_rx_calls += self.tun_rx_calls.load(Ordering::Relaxed);
        g.tun_read_errors += self.tun_read_errors.load(Ordering::Relaxed);
        g.udp_rx_calls += self.udp_rx_calls.load(Ordering::Relaxed);
        g.udp_rx_messages += self.udp_rx_messages.load(Ordering::Relaxed);
    }
}

/// What a reader thread shares with the owner.
pub(crate) struct ReaderLink {
    pub tx: SyncSender<Input>,
    pub shutdown: Arc<AtomicBool>,
    pub counters: Arc<ReaderCounters>,
    /// Batches the owner is done with.
    pub pool: Receiver<Batch>,
}

impl ReaderLink {
    /// An empty batch: the one kept back after a full channel, else one from the pool.
    fn batch(&self, spare: &mut Option<Batch>) -> Batch {
        spare
            .take()
            .or_else(|| self.pool.try_recv().ok())
            .unwrap_or_default()
            .reset()
    }

    /// Hands a batch to the owner; `false` when the owner is gone. A full channel drops the
    /// batch (counted) and keeps its buffers in `spare`.
    fn forward(&self, input: Input, spare: &mut Option<Batch>) -> bool {
        match self.tx.try_send(input) {
            Ok(()) => true,
            Err(TrySendError::Full(Input::Tun(_, b) | Input::Udp(b))) => {
                let n = b.len as u64;
                self.counters.queue_drops.fetch_add(n, Ordering::Relaxed);
                *spare = Some(b);
                true
            }
            Err(TrySendError::Full(_)) => true,
            Err(TrySendError::Disconnected(_)) => false,
        }
    }

    fn fail(&self, what: &str, e: io::Error) {
        let _ = self.tx.send(Input::Failed(what.into(), e));
    }
}

/// Where the owner returns the batches of each reader.
pub(crate) struct Pools {
    /// One per TUN queue.
    pub tun: Vec<Sender<Batch>>,
    pub udp: Sender<Batch>,
}

/// The reader of TUN queue `queue`.
pub(crate) fn spawn_tun_reader<T: Tun>(
    tun: &Arc<T>,
    queue: usize,
    link: ReaderLink,
) -> JoinHandle<()> {
    let tun = tun.clone();
    thread::spawn(move || {
        let mut rx = tun.rx_slots();
        let mut spare = None;
        while !link.shutdown.load(Ordering::SeqCst) {
            let mut b = link.batch(&mut spare);
            let mut wait = POLL_INTERVAL;
            while b.len < BATCH {
                match tun.recv_batch(queue, &mut rx, wait) {
                    Ok(TunRead::Packets) => b.take_tun(&mut rx),
                    Ok(TunRead::Timeout) => break,
                    Ok(TunRead::Malformed(e)) => {
                        tracing::debug!("TUN read dropped: {e}");
                        link.counters
                            .tun_read_errors
                            .fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => return link.fail("reading the TUN device", e),
                }
                link.counters.tun_rx_calls.fetch_add(1, Ordering::Relaxed);
                // Gather only what is ready now: no added latency.
                wait = Duration::ZERO;
            }
            if b.len == 0 {
                spare = Some(b);
            } else if !link.forward(Input::Tun(queue, b), &mut spare) {
                return;
            }
        }
    })
}

/// Receive messages per call while UDP GRO coalesces (docs/speed.md "UDP GRO"): a
/// coalesced message holds up to 64 KiB, about 44 full datagrams, so [`BATCH`] of them would
/// hand the owner up to ~1400 datagrams at once and delay its flush; two keep a hand-over
/// near the size of an uncoalesced one's.
pub const GRO_SLOTS: usize = 2;

/// The UDP reader's receive slots: [`BATCH`] messages per call, or [`GRO_SLOTS`] while the
/// kernel coalesces (the last call's messages held two datagrams or more on average).
struct UdpSlots {
    large: RecvSlots,
    /// With GRO on.
    small: Option<RecvSlots>,
    coalescing: bool,
}

impl UdpSlots {
    fn new(gro: bool) -> UdpSlots {
        UdpSlots {
            large: RecvSlots::new(BATCH, MAX_PACKET),
            small: gro.then(|| RecvSlots::new(GRO_SLOTS, MAX_PACKET)),
            coalescing: false,
        }
    }

    /// One batched receive into the set this call takes; the set read. A call that saw
    /// coalescing makes the next one take the small set, one that did not the large.
    fn read<U: Udp>(&mut self, udp: &U, wait: Duration) -> io::Result<&RecvSlots> {
        let slots = match &mut self.small {
            Some(small) if self.coalescing => small,
            _ => &mut self.large,
        };
        udp.recv_batch(slots, wait)?;
        self.coalescing = coalescing(slots.len(), slots.messages());
        Ok(slots)
    }
}

/// Whether a call that took `datagrams` in `messages` kernel messages saw coalescing.
fn coalescing(datagrams: usize, messages: usize) -> bool {
    messages > 0 && datagrams >= 2 * messages
}

pub(crate) fn spawn_udp_reader<U: Udp>(udp: &Arc<U>, link: ReaderLink) -> JoinHandle<()> {
    let udp = udp.clone();
    thread::spawn(move || {
        let mut sets = UdpSlots::new(udp.gro());
        let mut spare = None;
        while !link.shutdown.load(Ordering::SeqCst) {
            let slots = match sets.read(&*udp, POLL_INTERVAL) {
                Ok(slots) => slots,
                Err(e) => return link.fail("receiving on the UDP socket", e),
            };
            if slots.is_empty() {
                continue;
            }
            link.counters.udp_rx_calls.fetch_add(1, Ordering::Relaxed);
            let messages = slots.messages() as u64;
            link.counters
                .udp_rx_messages
                .fetch_add(messages, Ordering::Relaxed);
            let mut b = link.batch(&mut spare);
            for (d, from) in (0..slots.len()).filter_map(|i| slots.get(i)) {
                b.push(d, Some(from));
            }
            if !link.forward(Input::Udp(b), &mut spare) {
                return;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::fake_tun;
    use std::sync::mpsc;

    /// A reader's link to a test: the owner's channel, the counters, the shutdown flag.
    fn test_link() -> (
        ReaderLink,
        mpsc::Receiver<Input>,
        Arc<ReaderCounters>,
        Arc<AtomicBool>,
    ) {
        let (tx, rx) = mpsc::sync_channel(4);
        let (_pool_tx, pool) = mpsc::channel();
        let counters = Arc::new(ReaderCounters::default());
        let shutdown = Arc::new(AtomicBool::new(false));
        let link = ReaderLink {
            tx,
            shutdown: shutdown.clone(),
            counters: counters.clone(),
            pool,
        };
        (link, rx, counters, shutdown)
    }

    /// The TUN reader hands over what one batched read gave as one batch and counts one call:
    /// 20 packets queued before it starts arrive in one input with `tun_rx_calls` = 1. (With
    /// the trait's one-packet `recv_batch` the same batch takes 20 calls.)
    #[test]
    fn tun_reader_counts_batched_reads() {
        let (tun, h) = fake_tun();
        for i in 0..20u8 {
            h.inject.send(vec![i; 40]).unwrap();
        }
        let (link, rx, counters, shutdown) = test_link();
        let reader = spawn_tun_reader(&Arc::new(tun), 0, link);
        let Ok(Input::Tun(0, batch)) = rx.recv() else {
            panic!("a TUN batch")
        };
        shutdown.store(true, Ordering::SeqCst);
        reader.join().unwrap();
        let got: Vec<&[u8]> = batch.packets().iter().map(Packet::bytes).collect();
        assert_eq!(got.len(), 20);
        assert!(got.iter().enumerate().all(|(i, p)| p == &[i as u8; 40]));
        assert_eq!(counters.tun_rx_calls.load(Ordering::Relaxed), 1);
    }

    /// A UDP socket whose first receive is one GRO-coalesced message (3 × 100 B + 50 B from
    /// one source) and a plain datagram from another.
    struct Coalescing(AtomicBool);

    impl Udp for Coalescing {
        fn recv_from(&self, _: &mut [u8], t: Duration) -> io::Result<Option<(usize, SocketAddr)>> {
            thread::sleep(t);
            Ok(None)
        }
        fn send_to(&self, _: &[u8], _: SocketAddr) -> io::Result<()> {
            Ok(())
        }
        fn local_addr(&self) -> io::Result<SocketAddr> {
            Ok(SocketAddr::from(([127, 0, 0, 1], 1)))
        }
        fn recv_batch(&self, slots: &mut RecvSlots, t: Duration) -> io::Result<()> {
            slots.clear();
            if self.0.swap(true, Ordering::SeqCst) {
                thread::sleep(t);
                return Ok(());
            }
            for (i, b) in slots.slot_mut(0)[..350].iter_mut().enumerate() {
                *b = (i / 100) as u8;
            }
            slots.slot_mut(1)[..7].fill(9);
            slots.push_message(350, Some(100), SocketAddr::from(([10, 0, 0, 1], 5)));
            slots.push(7, SocketAddr::from(([10, 0, 0, 2], 6)));
            Ok(())
        }
    }

    /// The UDP reader hands over every datagram of a coalesced message separately, with its
    /// source, and counts one call and two kernel messages for five datagrams.
    #[test]
    fn udp_reader_splits_coalesced_messages() {
        let (link, rx, counters, shutdown) = test_link();
        let reader = spawn_udp_reader(&Arc::new(Coalescing(AtomicBool::new(false))), link);
        let Ok(Input::Udp(batch)) = rx.recv() else {
            panic!("a UDP batch")
        };
        shutdown.store(true, Ordering::SeqCst);
        reader.join().unwrap();
        let got: Vec<(Vec<u8>, Option<SocketAddr>)> = batch
            .packets()
            .iter()
            .map(|p| (p.bytes().to_vec(), p.from))
            .collect();
        let (a, b) = (
            Some(SocketAddr::from(([10, 0, 0, 1], 5))),
            Some(SocketAddr::from(([10, 0, 0, 2], 6))),
        );
        let want = vec![
            (vec![0; 100], a),
            (vec![1; 100], a),
            (vec![2; 100], a),
            (vec![3; 50], a),
            (vec![9; 7], b),
        ];
        assert_eq!(got, want);
        assert_eq!(counters.udp_rx_calls.load(Ordering::Relaxed), 1);
        assert_eq!(counters.udp_rx_messages.load(Ordering::Relaxed), 2);
    }

    /// Two datagrams or more per message on average is coalescing; one, or nothing, is not.
    #[test]
    fn coalescing_is_two_datagrams_per_message() {
        assert!(coalescing(2, 1) && coalescing(90, 2) && coalescing(64, 32));
        assert!(!coalescing(1, 1) && !coalescing(32, 32) && !coalescing(33, 32));
        assert!(!coalescing(0, 0));
    }

    /// A batch refilled after reset reuses its buffers (same allocation) and shows only the
    /// new packets.
    #[test]
    fn batch_reuses_buffers() {
        let mut b = Batch::default();
        b.push(&[1; 100], None);
        b.push(&[2; 10], None);
        let ptr = b.packets()[0].bytes().as_ptr();
        let mut b = b.reset();
        assert!(b.packets().is_empty());
        b.push(&[3; 50], None);
        assert_eq!(b.packets().len(), 1);
        assert_eq!(b.packets()[0].bytes(), &[3; 50][..]);
        assert_eq!(b.packets()[0].bytes().as_ptr(), ptr);
    }

    /// A TUN read moves into the batch by swapping buffers: the packets are the slots' bytes
    /// (at their own lengths), the slots keep their full length, and a second read reuses the
    /// buffers the first one swapped out (no allocation, nothing copied).
    #[test]
    fn take_tun_swaps_buffers_with_the_slots() {
        let mut rx = TunRx::new(3, 64, false);
        let fill = |rx: &mut TunRx, sizes: &[usize], byte: u8| {
            for (i, &n) in sizes.iter().enumerate() {
                rx.slots[i][..n].fill(byte + i as u8);
                rx.sizes[i] = n;
            }
            rx.len = sizes.len();
        };
        fill(&mut rx, &[60, 5, 64], 1);
        let slot_ptrs: Vec<*const u8> = rx.slots.iter().map(|s| s.as_ptr()).collect();
        let mut b = Batch::default();
        b.take_tun(&mut rx);
        let got: Vec<&[u8]> = b.packets().iter().map(Packet::bytes).collect();
        assert_eq!(got, vec![&[1; 60][..], &[2; 5][..], &[3; 64][..]]);
        let got_ptrs: Vec<*const u8> = got.iter().map(|p| p.as_ptr()).collect();
        assert_eq!(got_ptrs, slot_ptrs, "the slots' buffers, not copies");
        assert!(rx.slots.iter().all(|s| s.len() == 64));
        let mut b = b.reset();
        fill(&mut rx, &[7, 64], 10);
        let spare_ptrs: Vec<*const u8> = rx.slots[..2].iter().map(|s| s.as_ptr()).collect();
        b.take_tun(&mut rx);
        assert_eq!(b.packets().len(), 2);
        assert_eq!(b.packets()[0].bytes(), &[10; 7][..]);
        assert_eq!(b.packets()[1].bytes(), &[11; 64][..]);
        let got_ptrs: Vec<*const u8> = b.packets().iter().map(|p| p.bytes().as_ptr()).collect();
        assert_eq!(got_ptrs, spare_ptrs);
        assert!(rx.slots.iter().all(|s| s.len() == 64));
    }
}
