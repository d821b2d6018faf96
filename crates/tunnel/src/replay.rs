//! The anti-replay sliding window of RFC 6479 (§2, "a bitmap of multiple blocks"): a ring of
//! 64-bit blocks; advancing the window clears whole blocks instead of shifting bits. A counter
//! is accepted once if it is newer than the greatest seen or within [`WINDOW`] below it.
//!
//! [`ReplayWindow::check`] is cheap and is called before decryption; [`ReplayWindow::accept`]
//! only after the AEAD tag verified, so forged datagrams never move the window.

use crate::error::Drop;

const BLOCKS: usize = 32;
const BLOCK_BITS: u64 = 64;
/// Counters at most this far below the greatest accepted one are still accepted (once):
/// `(BLOCKS - 1) * 64` = 1984, as WireGuard's `COUNTER_WINDOW_SIZE`.
pub const WINDOW: u64 = (BLOCKS as u64 - 1) * BLOCK_BITS;

/// Per-session replay state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayWindow {
    greatest: u64,
    bitmap: [u64; BLOCKS],
    limit: u64,
}

impl ReplayWindow {
    /// A window that rejects counters at or above `limit` (REJECT_AFTER_MESSAGES).
    pub fn new(limit: u64) -> Self {
        ReplayWindow {
            greatest: 0,
            bitmap: [0; BLOCKS],
            limit,
        }
    }

    /// Whether `counter` would be accepted (no state change).
    pub fn check(&self, counter: u64) -> Result<(), Drop> {
        if counter >= self.limit || counter.saturating_add(WINDOW) < self.greatest {
            return Err(Drop::TooOld);
        }
        if counter > self.greatest {
            return Ok(());
        }
        let (block, bit) = Self::slot(counter);
        if self.bitmap[block] & bit != 0 {
            Err(Drop::Replayed)
        } else {
            Ok(())
        }
    }

    /// Records `counter` as received (after authentication).
    pub fn accept(&mut self, counter: u64) -> Result<(), Drop> {
        self.check(counter)?;
        if counter > self.greatest {
            let current = self.greatest / BLOCK_BITS;
            let index = counter / BLOCK_BITS;
            let clear = (index - current).min(BLOCKS as u64);
            for i in 1..=clear {
                self.bitmap[((current + i) % BLOCKS as u64) as usize] = 0;
            }
            self.greatest = counter;
        }
        let (block, bit) = Self::slot(counter);
        self.bitmap[block] |= bit;
        Ok(())
    }

    fn slot(counter: u64) -> (usize, u64) {
        (
            ((counter / BLOCK_BITS) % BLOCKS as u64) as usize,
            1 << (counter % BLOCK_BITS),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// The naive oracle: the set of every counter accepted so far.
    struct Oracle {
        seen: BTreeSet<u64>,
        limit: u64,
    }

    impl Oracle {
        fn accept(&mut self, c: u64) -> Result<(), Drop> {
            let greatest = self.seen.last().copied().unwrap_or(0);
            if c >= self.limit || c + WINDOW < greatest {
                Err(Drop::TooOld)
            } else if !self.seen.insert(c) {
                Err(Drop::Replayed)
            } else {
                Ok(())
            }
        }
    }

    fn counters() -> impl Strategy<Value = Vec<u64>> {
        // Mostly small steps around a moving point (reordering, duplicates), some big jumps.
        proptest::collection::vec(
            prop_oneof![
                8 => 0u64..3000,
                1 => 0u64..100_000,
            ],
            1..400,
        )
        .prop_map(|v| {
            let mut base = 0u64;
            v.into_iter()
                .map(|x| {
                    if x >= 3000 {
                        base += x;
                        base
                    } else {
                        base.saturating_sub(1500) + x
                    }
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn matches_the_naive_oracle(seq in counters()) {
            let limit = 150_000;
            let mut w = ReplayWindow::new(limit);
            let mut o = Oracle { seen: BTreeSet::new(), limit };
            for c in seq {
                let expect = o.accept(c);
                prop_assert_eq!(w.check(c), expect);
                prop_assert_eq!(w.accept(c), expect, "counter {}", c);
            }
        }
    }

    #[test]
    fn window_edges() {
        let mut w = ReplayWindow::new(u64::MAX);
        assert_eq!(w.accept(0), Ok(()));
        assert_eq!(w.accept(0), Err(Drop::Replayed));
        assert_eq!(w.accept(10_000), Ok(()));
        assert_eq!(
            w.accept(10_000 - WINDOW),
            Ok(()),
            "the oldest counter in the window"
        );
        assert_eq!(w.accept(10_000 - WINDOW - 1), Err(Drop::TooOld));
        assert_eq!(w.accept(9_999), Ok(()));
        assert_eq!(w.accept(9_999), Err(Drop::Replayed));
        assert_eq!(ReplayWindow::new(5).accept(5), Err(Drop::TooOld));
    }
}
