//! The per-peer repair budget (issue 10, mechanism 5: "a per-peer repair/redundancy budget
//! shared fairly between flows"; docs/engine.md, deficit repair part 6).
//!
//! Deficit repairs (`repair.rs`) answer every missing degree of freedom an NC-ACK reports. One
//! flow's repairs are paced by its own NC-ACKs, but the flows of one peer share the path: when
//! a hundred short flows start together into a 67-packet queue, each flow's NC-ACKs report the
//! queue drops, each flow sends up to 16 repairs per ACK, the repairs of all flows arrive at the
//! queue as one burst and are dropped in turn, and the coding layer spends the path on repairs
//! of repairs (docs/lab.md "Many flows": 5.4 datagrams per coded segment, 71 % of them dropped
//! by the queue, the link idle three quarters of the time between the bursts). Plain TCP backs
//! off exponentially there; the repairs did not.
//!
//! The budget is a token bucket shared by the flows of one peer and filled by deliveries: every
//! combination that an NC-ACK shows received (any flow) earns [`REPAIR_SHARE`] plus the share
//! that the path's random loss floor p̂ needs (p̂ / (1 − p̂)) of a repair; the bucket holds at most
//! [`BUDGET_DEPTH`] repairs and starts full. A repair is sent only against a token, so repairs
//! can never exceed a fixed share of what the path delivers: on a path that delivers, random
//! loss is repaired as before (the share is far above what it needs, docs/engine.md); on a
//! path that overflows, deliveries fall and the repairs with them. What the budget refuses is
//! left to TCP: with the bucket empty a TCP retransmission is coded again instead of absorbed
//! (`SenderHalf::repair_covers_retransmission`), so recovery runs at TCP's own congestion-
//! controlled pace. A repair probe always sends at least one repair, and all it asks for when
//! the local TCP sends nothing new (`SenderHalf::on_timeout`): such a TCP waits for its
//! timeout, and among busy flows the tokens go to the flows whose NC-ACKs keep coming.

/// Repairs earned per combination delivered, beyond the random-loss share.
pub const REPAIR_SHARE: f64 = 0.25;

/// Most repairs the bucket holds (four of the largest per-ACK repair bursts).
pub const BUDGET_DEPTH: f64 = 64.0;

/// Tokens the tail repair's burst-sized extras leave in the bucket (`tail_burst`): half of it,
/// for the deficit repairs of losses the NC-ACKs report.
pub const BURST_RESERVE: f64 = BUDGET_DEPTH / 2.0;

/// Largest random loss floor the share follows (p̂ / (1 − p̂) = 4 at 0.8).
const MAX_FLOOR: f64 = 0.8;

/// The repair tokens of one peer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepairBudget {
    tokens: f64,
}

impl Default for RepairBudget {
    fn default() -> Self {
        RepairBudget {
            tokens: BUDGET_DEPTH,
        }
    }
}

impl RepairBudget {
    /// Credits `delivered` combinations newly shown received, on a path whose random loss floor
    /// is `floor` (`None`: not known yet, the fixed share only).
    pub fn credit(&mut self, delivered: u64, floor: Option<f64>) {
        let p = floor.unwrap_or(0.0).clamp(0.0, MAX_FLOOR);
        let share = REPAIR_SHARE + p / (1.0 - p);
        self.tokens = (self.tokens + delivered as f64 * share).min(BUDGET_DEPTH);
    }

    /// Takes up to `wanted` repairs from the bucket; returns how many may be sent.
    pub fn take(&mut self, wanted: u32) -> u32 {
        self.take_above(wanted, 0.0)
    }

    /// Takes up to `wanted` repairs from what the bucket holds above `reserve` tokens; returns
    /// how many may be sent (the tail repair's burst-sized extras, which must not spend what
    /// the deficit repairs of reported losses need: [`BURST_RESERVE`]).
    pub fn take_above(&mut self, wanted: u32, reserve: f64) -> u32 {
        let spare = (self.tokens - reserve).floor().max(0.0) as u32;
        let granted = spare.min(wanted);
        self.tokens -= f64::from(granted);
        granted
    }

    /// Whether at least one repair is available.
    pub fn available(&self) -> bool {
        self.tokens >= 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_full_and_never_overdraws() {
        let mut b = RepairBudget::default();
        assert_eq!(b.take(16), 16);
        assert_eq!(b.take(100), 48);
        assert_eq!(b.take(1), 0);
        assert!(!b.available());
    }

    #[test]
    fn extras_leave_the_reserve() {
        let mut b = RepairBudget::default();
        assert_eq!(b.take_above(100, BURST_RESERVE), 32);
        assert_eq!(b.take_above(1, BURST_RESERVE), 0);
        assert_eq!(b.take(100), 32);
        assert_eq!(b.take_above(1, 0.0), 0);
    }

    #[test]
    fn deliveries_earn_a_share_that_grows_with_the_floor() {
        let mut b = RepairBudget::default();
        b.take(64);
        b.credit(8, None);
        assert_eq!(b.take(10), 2, "8 × 0.25");
        b.credit(10, Some(0.5));
        assert_eq!(b.take(100), 12, "10 × (0.25 + 1)");
        b.credit(10_000, Some(0.1));
        assert_eq!(b.take(1000), 64, "capped at the depth");
    }
}
