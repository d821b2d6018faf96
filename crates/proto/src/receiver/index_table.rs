//! The receiver's table of symbols by coding-buffer index (Sundararajan et al. §IV: each
//! index's Start/End and delivery state), as a ring of slots instead of an ordered map.
//!
//! Indices arrive nearly in order and leave from the front (Base, §IV-C), so a `VecDeque` of
//! optional slots gives every lookup in O(1) and, once warm, allocates nothing: an ordered map
//! allocated a node every few frames and freed one as the window slid, and its lookups were
//! a share of the receiving gateway's time at gigabit rates (docs/speed.md, "Buffers kept for
//! the next round trip, and the receiver's index table"). The table never spans more indices than the caller allows, so a frame that
//! names a far index cannot make it allocate a gap.

use std::collections::VecDeque;

/// Values by `u64` index over a window of at most `max_span` indices (the caller's bound).
/// Invariant: the slots are empty, or the first and last slots hold values.
#[derive(Debug, Clone)]
pub(crate) struct IndexTable<T> {
    /// Index of `slots[0]`.
    start: u64,
    slots: VecDeque<Option<T>>,
    /// Slots holding a value.
    len: usize,
}

impl<T> Default for IndexTable<T> {
    fn default() -> Self {
        IndexTable {
            start: 0,
            slots: VecDeque::new(),
            len: 0,
        }
    }
}

impl<T> IndexTable<T> {
    /// Values held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// `(first, end)` when every index from `first` up to `end` (exclusive) holds a value
    /// (the table has no empty slot), so a caller can skip looking those up; `None` when
    /// the table is empty or has a gap.
    pub(crate) fn dense_span(&self) -> Option<(u64, u64)> {
        (self.len > 0 && self.len == self.slots.len())
            .then(|| (self.start, self.start + self.len as u64))
    }

    fn slot(&self, index: u64) -> Option<usize> {
        let offset = usize::try_from(index.checked_sub(self.start)?).ok()?;
        (offset < self.slots.len()).then_some(offset)
    }

    /// The value at `index`.
    pub(crate) fn get(&self, index: u64) -> Option<&T> {
        self.slots.get(self.slot(index)?)?.as_ref()
    }

    /// The value at `index`, mutably.
    pub(crate) fn get_mut(&mut self, index: u64) -> Option<&mut T> {
        let s = self.slot(index)?;
        self.slots.get_mut(s)?.as_mut()
    }

    /// Puts `value()` at `index` unless a value is there (the first report wins). `false`, and
    /// nothing changes, when the table would then span more than `max_span` indices.
    pub(crate) fn insert_if_absent(
        &mut self,
        index: u64,
        value: impl FnOnce() -> T,
        max_span: u64,
    ) -> bool {
        // The common case on the hot path: an index inside the table (W per DATA frame).
        if let Some(s) = self.slot(index) {
            let slot = &mut self.slots[s];
            if slot.is_none() {
                *slot = Some(value());
                self.len += 1;
            }
            return true;
        }
        if self.slots.is_empty() {
            if max_span == 0 {
                return false;
            }
            self.start = index;
            self.slots.push_back(Some(value()));
            self.len = 1;
            return true;
        }
        let end = self.start + self.slots.len() as u64;
        let span = end.max(index.saturating_add(1)) - self.start.min(index);
        if span > max_span {
            return false;
        }
        if index < self.start {
            for _ in index + 1..self.start {
                self.slots.push_front(None);
            }
            self.slots.push_front(Some(value()));
            self.start = index;
        } else {
            for _ in end..index {
                self.slots.push_back(None);
            }
            self.slots.push_back(Some(value()));
        }
        self.len += 1;
        true
    }

    /// Removes every value below `cut`.
    pub(crate) fn remove_below(&mut self, cut: u64) {
        while self.start < cut {
            let Some(slot) = self.slots.pop_front() else {
                break;
            };
            self.len -= usize::from(slot.is_some());
            self.start += 1;
        }
        self.trim_front();
    }

    /// Drops leading empty slots (the invariant).
    fn trim_front(&mut self) {
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.start += 1;
        }
    }

    /// Slots before index `from`.
    fn slots_before(&self, from: u64) -> usize {
        usize::try_from(from.saturating_sub(self.start)).unwrap_or(usize::MAX)
    }

    /// Values at `from` and above, in index order.
    pub(crate) fn iter_from(&self, from: u64) -> impl Iterator<Item = (u64, &T)> {
        let (skip, start) = (self.slots_before(from), self.start);
        let slots = self.slots.iter().enumerate().skip(skip);
        slots.filter_map(move |(k, v)| v.as_ref().map(|v| (start + k as u64, v)))
    }

    /// Values at `from` and above, in index order, mutably.
    pub(crate) fn iter_mut_from(&mut self, from: u64) -> impl Iterator<Item = (u64, &mut T)> {
        let (skip, start) = (self.slots_before(from), self.start);
        let slots = self.slots.iter_mut().enumerate().skip(skip);
        slots.filter_map(move |(k, v)| v.as_mut().map(|v| (start + k as u64, v)))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::IndexTable;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64, u32),
        RemoveBelow(u64),
        Set(u64, u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u64..80, any::<u32>()).prop_map(|(i, v)| Op::Insert(i, v)),
            1 => (0u64..80).prop_map(Op::RemoveBelow),
            1 => (0u64..80, any::<u32>()).prop_map(|(i, v)| Op::Set(i, v)),
        ]
    }

    /// The ordered map the table replaced, with the span bound applied the same way.
    fn model_insert(m: &mut BTreeMap<u64, u32>, i: u64, v: u32, max_span: u64) -> bool {
        let lo = m.keys().next().copied().unwrap_or(i).min(i);
        let hi = m.keys().next_back().copied().unwrap_or(i).max(i);
        if hi - lo + 1 > max_span {
            return false;
        }
        m.entry(i).or_insert(v);
        true
    }

    proptest! {
        /// Every operation agrees with a `BTreeMap` oracle: lookups, the highest index, the
        /// count and both iterations from any index.
        #[test]
        fn the_table_behaves_as_an_ordered_map(
            ops in proptest::collection::vec(op(), 1..200),
            max_span in 1u64..64,
        ) {
            let mut t = IndexTable::default();
            let mut m = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(i, v) => prop_assert_eq!(
                        t.insert_if_absent(i, || v, max_span),
                        model_insert(&mut m, i, v, max_span)
                    ),
                    Op::RemoveBelow(cut) => {
                        t.remove_below(cut);
                        m.retain(|&k, _| k >= cut);
                    }
                    Op::Set(i, v) => {
                        if let Some(x) = t.get_mut(i) {
                            *x = v;
                        }
                        if let Some(x) = m.get_mut(&i) {
                            *x = v;
                        }
                    }
                }
                prop_assert_eq!(t.len(), m.len());
                // The invariant: the last slot holds a value.
                let last = (!t.slots.is_empty()).then(|| t.start + t.slots.len() as u64 - 1);
                prop_assert_eq!(last, m.keys().next_back().copied());
                for i in 0..90 {
                    prop_assert_eq!(t.get(i), m.get(&i));
                }
                // A dense span is exactly the model's keys, without a gap.
                let keys: Vec<u64> = m.keys().copied().collect();
                let gapless = keys.windows(2).all(|w| w[1] == w[0] + 1);
                let want = (!keys.is_empty() && gapless)
                    .then(|| (keys[0], keys[keys.len() - 1] + 1));
                prop_assert_eq!(t.dense_span(), want);
                for from in [0, 10, 40, 85] {
                    let got: Vec<_> = t.iter_from(from).map(|(k, v)| (k, *v)).collect();
                    let want: Vec<_> = m.range(from..).map(|(k, v)| (*k, *v)).collect();
                    prop_assert_eq!(&got, &want);
                    let got: Vec<_> = t.iter_mut_from(from).map(|(k, v)| (k, *v)).collect();
                    prop_assert_eq!(got, want);
                }
            }
        }
    }

    /// A far index is refused without allocating the gap.
    #[test]
    fn a_far_index_is_refused() {
        let mut t = IndexTable::default();
        assert!(t.insert_if_absent(10, || 1u8, 4));
        assert!(!t.insert_if_absent(u64::MAX, || 2, 4));
        assert!(!t.insert_if_absent(14, || 2, 4));
        assert!(t.insert_if_absent(13, || 2, 4));
        assert_eq!((t.len(), t.start, t.slots.len()), (2, 10, 4));
    }
}
