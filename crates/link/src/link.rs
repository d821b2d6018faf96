//! The [`Link`]: one direction of a channel, driven by the caller's clock.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use crate::config::{LinkConfig, LinkError, LossPosition, QueueLimit};
use crate::delay_switch::SwitchedDelay;
use crate::loss::LossProcess;
use crate::rng::Rng;

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Counters of one link direction. All counts are packets unless named `*_bytes`.
///
/// Conservation: once the link is drained (`poll_timeout() == None`),
/// `delivered + dropped_loss + dropped_queue == sent + duplicated`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkStats {
    /// Packets handed to [`Link::send`].
    pub sent: u64,
    /// Bytes handed to [`Link::send`].
    pub sent_bytes: u64,
    /// Packets returned by [`Link::poll_deliver`] (duplicates included).
    pub delivered: u64,
    /// Bytes returned by [`Link::poll_deliver`].
    pub delivered_bytes: u64,
    /// Packets erased by the loss model.
    pub dropped_loss: u64,
    /// Packets refused by the full drop-tail queue.
    pub dropped_queue: u64,
    /// Extra copies created by duplication.
    pub duplicated: u64,
    /// Packets delivered with a flipped bit.
    pub corrupted: u64,
    /// Largest queue occupancy seen, in packets (including the packet in service).
    pub max_queue_packets: u64,
    /// Largest queue occupancy seen, in bytes.
    pub max_queue_bytes: u64,
}

/// A packet travelling to the far end, ordered by delivery time then send order.
#[derive(Debug)]
struct InFlight {
    at: Duration,
    seq: u64,
    packet: Vec<u8>,
}

impl PartialEq for InFlight {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for InFlight {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest delivery first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// One direction of an emulated channel (sans-IO: time is passed in, nothing blocks).
///
/// Every random decision comes from one [`Rng`] seeded at construction, drawn in a fixed
/// order per packet, so the same seed and the same calls give the same output.
/// All fates (queue admission, departure, loss, corruption, delivery time) are decided
/// inside [`Link::send`]; the queue state is updated lazily from the times passed in.
/// Times passed to `send` that go backwards are treated as the latest time seen.
#[derive(Debug)]
pub struct Link {
    cfg: LinkConfig,
    rng: Rng,
    loss: LossProcess,
    now: Duration,
    /// Instant at which `tb_credit` was last computed (the previous departure).
    tb_time: Duration,
    /// Token credit in bit·ns/s units (bits × 10⁹), capped at the bucket depth.
    tb_credit: u128,
    /// Packets accepted by the rate limiter and not yet departed: (departure, size).
    queue: VecDeque<(Duration, usize)>,
    queue_bytes: usize,
    last_delivery: Duration,
    switched: SwitchedDelay,
    next_seq: u64,
    in_flight: BinaryHeap<InFlight>,
    stats: LinkStats,
}

impl Link {
    /// Creates a link after validating `config`; `seed` fixes every random decision.
    pub fn new(config: LinkConfig, seed: u64) -> Result<Self, LinkError> {
        config.validate()?;
        let tb_credit = config
            .rate
            .map_or(0, |r| u128::from(r.bucket_bytes) * 8 * NANOS_PER_SEC);
        Ok(Self {
            loss: LossProcess::new(config.loss.clone()),
            cfg: config,
            rng: Rng::new(seed),
            now: Duration::ZERO,
            tb_time: Duration::ZERO,
            tb_credit,
            queue: VecDeque::new(),
            queue_bytes: 0,
            last_delivery: Duration::ZERO,
            switched: SwitchedDelay::default(),
            next_seq: 0,
            in_flight: BinaryHeap::new(),
            stats: LinkStats::default(),
        })
    }

    /// The configuration this link runs with.
    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// Offers `packet` to the link at time `now`. It may be duplicated, dropped by the
    /// queue or the loss model, corrupted, and is otherwise scheduled for delivery.
    pub fn send(&mut self, now: Duration, packet: Vec<u8>) {
        let now = now.max(self.now);
        self.now = now;
        self.stats.sent += 1;
        self.stats.sent_bytes += packet.len() as u64;
        if self.rng.chance(self.cfg.duplicate_prob) {
            self.stats.duplicated += 1;
            self.admit(now, packet.clone());
        }
        self.admit(now, packet);
    }

    /// Returns the next packet whose delivery time is `<= now`, in delivery order
    /// (ties in send order).
    pub fn poll_deliver(&mut self, now: Duration) -> Option<Vec<u8>> {
        if self.in_flight.peek()?.at > now {
            return None;
        }
        let p = self.in_flight.pop()?;
        self.stats.delivered += 1;
        self.stats.delivered_bytes += p.packet.len() as u64;
        Some(p.packet)
    }

    /// The next instant at which [`Link::poll_deliver`] will return a packet, if any.
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.in_flight.peek().map(|p| p.at)
    }

    /// Packets scheduled for delivery and not yet delivered.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Packets in the rate limiter's queue at `now` (including the one in service).
    pub fn queue_len(&mut self, now: Duration) -> usize {
        self.drain_queue(now);
        self.queue.len()
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> LinkStats {
        self.stats
    }

    fn admit(&mut self, now: Duration, mut packet: Vec<u8>) {
        let before = self.cfg.loss_position == LossPosition::BeforeQueue;
        if before && self.loss.next_drop(&mut self.rng) {
            self.stats.dropped_loss += 1;
            return;
        }
        let depart = match self.enqueue(now, packet.len()) {
            Some(t) => t,
            None => {
                self.stats.dropped_queue += 1;
                return;
            }
        };
        if !before && self.loss.next_drop(&mut self.rng) {
            self.stats.dropped_loss += 1;
            return;
        }
        if self.rng.chance(self.cfg.corrupt_prob) && !packet.is_empty() {
            let bit = self.rng.below(packet.len() as u64 * 8);
            packet[(bit / 8) as usize] ^= 1 << (bit % 8);
            self.stats.corrupted += 1;
        }
        let jitter_max = self.cfg.jitter.max.as_nanos() as u64;
        let jitter = if jitter_max > 0 {
            Duration::from_nanos(self.rng.below(jitter_max + 1))
        } else {
            Duration::ZERO
        };
        let delay = match &self.cfg.delay_switch {
            Some(model) => self
                .switched
                .at(depart, self.cfg.delay, model, &mut self.rng),
            None => self.cfg.delay,
        };
        let mut at = depart + delay + jitter;
        if !self.cfg.jitter.allow_reordering {
            at = at.max(self.last_delivery);
            self.last_delivery = at;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.in_flight.push(InFlight { at, seq, packet });
    }

    /// Removes departed packets from the queue.
    fn drain_queue(&mut self, now: Duration) {
        while let Some(&(t, size)) = self.queue.front() {
            if t > now {
                break;
            }
            self.queue.pop_front();
            self.queue_bytes -= size;
        }
    }

    /// Puts a packet of `size` bytes through the drop-tail queue and token bucket.
    /// Returns its departure instant, or `None` if the queue is full.
    fn enqueue(&mut self, now: Duration, size: usize) -> Option<Duration> {
        let Some(rate) = self.cfg.rate else {
            return Some(now);
        };
        self.drain_queue(now);
        let full = match self.cfg.queue {
            QueueLimit::Unlimited => false,
            QueueLimit::Packets(n) => self.queue.len() + 1 > n,
            QueueLimit::Bytes(b) => self.queue_bytes + size > b,
        };
        if full {
            return None;
        }
        let r = u128::from(rate.bits_per_sec);
        let cap = u128::from(rate.bucket_bytes) * 8 * NANOS_PER_SEC;
        let start = now.max(self.tb_time);
        let elapsed = (start - self.tb_time).as_nanos();
        let credit = (self.tb_credit + r * elapsed).min(cap);
        let need = size as u128 * 8 * NANOS_PER_SEC;
        let (depart, credit) = if credit >= need {
            (start, credit - need)
        } else {
            let wait = (need - credit).div_ceil(r);
            (start + nanos(wait), credit + r * wait - need)
        };
        self.tb_time = depart;
        self.tb_credit = credit;
        self.queue.push_back((depart, size));
        self.queue_bytes += size;
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.queue.len() as u64);
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.queue_bytes as u64);
        Some(depart)
    }
}

fn nanos(n: u128) -> Duration {
    Duration::new((n / NANOS_PER_SEC) as u64, (n % NANOS_PER_SEC) as u32)
}
