//! The harness's randomness and its lossy, duplicating, reordering channel (one direction of
//! the tunnel): a deterministic xorshift, a Gilbert burst model and the timed datagram queue.

use std::collections::BTreeMap;
use std::time::Duration;

use super::ms;

/// Deterministic xorshift for the harness.
#[derive(Debug, Clone)]
pub struct TestRng(pub u64);

impl TestRng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() % 1_000_000) as f64 / 1e6 < p
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Simple Gilbert model, one step per datagram: mean loss `loss` in bursts of mean `burst`
/// (P(bad → good) = 1 / burst, P(good → bad) = loss · r / (1 − loss); the emulator's `--burst`
/// parametrisation, docs/link.md).
#[derive(Debug, Clone)]
pub struct Gilbert {
    rng: TestRng,
    bad: bool,
    p: f64,
    r: f64,
}

impl Gilbert {
    pub fn new(loss: f64, burst: f64, rng: TestRng) -> Self {
        let r = 1.0 / burst;
        Gilbert {
            rng,
            bad: false,
            p: loss * r / (1.0 - loss),
            r,
        }
    }

    /// Whether the next datagram is lost.
    pub fn lost(&mut self) -> bool {
        self.bad = if self.bad {
            !self.rng.chance(self.r)
        } else {
            self.rng.chance(self.p)
        };
        self.bad
    }
}

/// One direction of the tunnel.
#[derive(Debug, Clone, Default)]
pub struct ChannelParams {
    pub loss: f64,
    pub dup: f64,
    pub delay_ms: u64,
    pub jitter_ms: u64,
}

#[derive(Debug, Default)]
pub struct Channel {
    pub params: ChannelParams,
    /// (arrival time, sequence) → datagram.
    queue: BTreeMap<(Duration, u64), Vec<u8>>,
    counter: u64,
    /// Explicit drop pattern: datagram number → dropped (overrides `loss`).
    pub drop_list: Option<Vec<bool>>,
    pub sent: u64,
}

impl Channel {
    pub fn new(params: ChannelParams) -> Self {
        Channel {
            params,
            ..Channel::default()
        }
    }
    pub fn send(&mut self, now: Duration, d: Vec<u8>, rng: &mut TestRng) {
        let n = self.sent;
        self.sent += 1;
        let drop = match &self.drop_list {
            Some(list) => list.get(n as usize).copied().unwrap_or(false),
            None => rng.chance(self.params.loss),
        };
        if drop {
            return;
        }
        let copies = if rng.chance(self.params.dup) { 2 } else { 1 };
        for _ in 0..copies {
            let delay = self.params.delay_ms + rng.below(self.params.jitter_ms + 1);
            self.counter += 1;
            self.queue
                .insert((now + ms(delay), self.counter), d.clone());
        }
    }
    pub fn due(&mut self, now: Duration) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(entry) = self.queue.first_entry() {
            if entry.key().0 > now {
                break;
            }
            out.push(entry.remove());
        }
        out
    }
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}
