//! The online decoder: Gauss-Jordan elimination as each combination arrives (Sundararajan et
//! al. §II-B and §IV), with *seen* indices (Definition 1) and decoded symbols reported.
//!
//! The decoding matrix is kept in reduced row echelon form where each row's pivot is its
//! **first** (lowest-index) non-zero column, so the pivot columns are exactly the seen indices.
//! Rows are stored at their pivot column (see [`column`]). An arriving combination is reduced on
//! its coefficients alone first (cheap: decoded columns and existing rows are subtracted using
//! the original coefficients, which RREF leaves unchanged at pivot columns); only an innovative
//! one touches payloads, with one fused `dot` over the received payload, the rows and the
//! decoded symbols it referenced, then one `mul_add` per row whose new pivot column must be
//! cleared (§V-D: "zeroing out the newly formed pivot column in the existing rows").

mod column;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use tcpnc_field::{inv, mul, mul_add};

use crate::combine::Batch;
use crate::error::DecodeError;
use crate::prng::coefficients_from_seed;
pub use column::SymbolState;
use column::{Column, Row, trim_trailing_zeros};

/// Released coefficient buffers kept for reuse at most. Payload buffers are kept while the
/// tracked span and the spares together stay within `max_span` ([`Decoder::recycle`]).
const SPARE_BUFFERS: usize = 256;

/// Limits of a [`Decoder`]; together they bound its memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecoderConfig {
    /// The most undecoded rows (seen but not decoded indices) held at once.
    pub max_rows: usize,
    /// The most indices tracked at once, from the base to the highest referenced index.
    pub max_span: u64,
    /// The longest coded payload accepted, in bytes.
    pub max_symbol_len: usize,
}

/// What became of a received combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Linearly independent of everything known: the rank grew by one.
    Innovative,
    /// Linearly dependent on what is known (a duplicate, a zero combination, or a combination of
    /// decoded symbols): nothing changed.
    Redundant,
    /// References an index below the base with a non-zero coefficient: that symbol was dropped,
    /// so the combination cannot be used; nothing changed.
    Stale,
}

/// The report of [`Decoder::receive`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Receipt {
    /// Innovative, redundant or stale.
    pub outcome: Outcome,
    /// The index that became seen (exactly one when innovative: the new row's pivot).
    pub newly_seen: Option<u64>,
    /// How many indices became decoded; they are queued for [`Decoder::poll_decoded`].
    pub newly_decoded: usize,
    /// The first unseen index after this combination: what the receiver acknowledges (§IV-A).
    pub first_unseen: u64,
}

/// What [`Decoder::drop_below`] forgot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Dropped {
    /// Decoded symbols released.
    pub decoded: usize,
    /// Tracked indices forgotten before being decoded (seen or unseen).
    pub undecoded: usize,
}

/// The online Gauss-Jordan decoder. See the crate documentation for an example.
#[derive(Debug)]
pub struct Decoder {
    config: DecoderConfig,
    /// Every index below `base` is forgotten.
    base: u64,
    /// `columns[k]` describes index `base + k`; the length is the tracked span.
    columns: VecDeque<Column>,
    rows: usize,
    decoded_held: usize,
    /// Cached first unseen index (never below `base`).
    first_unseen: u64,
    /// Newly decoded indices not yet polled.
    decoded_queue: VecDeque<u64>,
    /// Reduction scratch: coefficients of the arriving combination from its first index.
    reduced: Vec<u8>,
    /// Reduction scratch: `(index, coefficient)` of the rows and decoded symbols subtracted.
    terms: Vec<(u64, u8)>,
    /// Rows that became decoded during back-substitution (column offsets).
    finished: Vec<usize>,
    seed_coefs: Vec<u8>,
    spare_payloads: Vec<Vec<u8>>,
    spare_coefs: Vec<Vec<u8>>,
}

impl Decoder {
    /// An empty decoder whose base is index 0.
    pub fn new(config: DecoderConfig) -> Self {
        Self {
            config,
            base: 0,
            columns: VecDeque::new(),
            rows: 0,
            decoded_held: 0,
            first_unseen: 0,
            decoded_queue: VecDeque::new(),
            reduced: Vec::new(),
            terms: Vec::new(),
            finished: Vec::new(),
            seed_coefs: Vec::new(),
            spare_payloads: Vec::new(),
            spare_coefs: Vec::new(),
        }
    }

    /// The configuration given to [`Decoder::new`].
    pub fn config(&self) -> &DecoderConfig {
        &self.config
    }

    /// Takes in the combination `payload = Σ coefs[k] · symbol[first_index + k]`.
    ///
    /// Zero coefficients are allowed (leading and trailing ones are ignored); the payload is as
    /// long as the longest symbol involved. On error nothing changes.
    pub fn receive(
        &mut self,
        first_index: u64,
        coefs: &[u8],
        payload: &[u8],
    ) -> Result<Receipt, DecodeError> {
        self.check_payload(payload)?;
        let Some(lead) = coefs.iter().position(|&c| c != 0) else {
            return Ok(self.receipt(Outcome::Redundant));
        };
        let trail = coefs.iter().rposition(|&c| c != 0).unwrap_or(lead);
        let lo = first_index
            .checked_add(lead as u64)
            .ok_or(DecodeError::IndexOverflow)?;
        let hi = first_index
            .checked_add(trail as u64)
            .ok_or(DecodeError::IndexOverflow)?;
        if let Some(outcome) = self.classify_range(lo, hi)? {
            return Ok(self.receipt(outcome));
        }
        self.reduce(lo, hi, &coefs[lead..=trail]);
        let Some(pivot_offset) = self.reduced.iter().position(|&c| c != 0) else {
            return Ok(self.receipt(Outcome::Redundant));
        };
        if self.rows >= self.config.max_rows {
            return Err(DecodeError::TooManyRows {
                limit: self.config.max_rows,
            });
        }
        let pivot = lo + pivot_offset as u64;
        let newly_decoded = self.insert(pivot, pivot_offset, payload);
        self.advance_first_unseen();
        Ok(Receipt {
            outcome: Outcome::Innovative,
            newly_seen: Some(pivot),
            newly_decoded,
            first_unseen: self.first_unseen,
        })
    }

    /// [`receive`](Self::receive) for a combination of `count` consecutive indices whose
    /// coefficients are expanded from `seed` (see [`coefficients_from_seed`]).
    pub fn receive_seeded(
        &mut self,
        first_index: u64,
        count: usize,
        seed: u32,
        payload: &[u8],
    ) -> Result<Receipt, DecodeError> {
        self.check_payload(payload)?;
        if count == 0 {
            return Ok(self.receipt(Outcome::Redundant));
        }
        let hi = first_index
            .checked_add(count as u64 - 1)
            .ok_or(DecodeError::IndexOverflow)?;
        // Seeded coefficients are all non-zero: the range is exactly first_index..=hi, so the
        // limits are checked before expanding (a huge count must not allocate).
        if let Some(outcome) = self.classify_range(first_index, hi)? {
            return Ok(self.receipt(outcome));
        }
        let mut coefs = std::mem::take(&mut self.seed_coefs);
        coefs.resize(count, 0);
        coefficients_from_seed(seed, &mut coefs);
        let receipt = self.receive(first_index, &coefs, payload);
        self.seed_coefs = coefs;
        receipt
    }

    /// Forgets every index below `base` (§IV-C: symbols the encoder no longer mixes and that
    /// were delivered): decoded symbols are released, and rows whose pivot is below `base` are
    /// removed, abandoning those indices. What remains is exactly the known combinations that
    /// involve no index below `base`. A lower `base` than the current one does nothing.
    pub fn drop_below(&mut self, base: u64) -> Dropped {
        let mut dropped = Dropped::default();
        while self.base < base {
            let Some(column) = self.columns.pop_front() else {
                self.base = base;
                break;
            };
            match column {
                Column::Unseen => dropped.undecoded += 1,
                Column::Seen(row) => {
                    dropped.undecoded += 1;
                    self.rows -= 1;
                    self.recycle(row.payload, Some(row.coefs));
                }
                Column::Decoded(symbol) => {
                    dropped.decoded += 1;
                    self.decoded_held -= 1;
                    self.recycle(symbol, None);
                }
            }
            self.base += 1;
        }
        let new_base = self.base;
        self.decoded_queue.retain(|&index| index >= new_base);
        self.first_unseen = self.first_unseen.max(new_base);
        self.advance_first_unseen();
        dropped
    }

    /// The lowest index still tracked; everything below it is forgotten.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// One past the highest tracked index (at least the base).
    pub fn end_index(&self) -> u64 {
        self.base + self.columns.len() as u64
    }

    /// The first index at or above the base that is not seen: the receiver's cumulative ACK.
    pub fn first_unseen(&self) -> u64 {
        self.first_unseen
    }

    /// The rank of the known combinations over the tracked indices, which equals the number of
    /// seen (including decoded) indices at or above the base.
    pub fn rank(&self) -> usize {
        self.rows + self.decoded_held
    }

    /// Number of seen but undecoded indices (rows of the decoding matrix).
    pub fn undecoded_rows(&self) -> usize {
        self.rows
    }

    /// What the decoder knows about `index`.
    pub fn state(&self, index: u64) -> SymbolState {
        match self.column(index) {
            _ if index < self.base => SymbolState::Dropped,
            Some(column) => column.state(),
            None => SymbolState::Unseen,
        }
    }

    /// The decoded symbol with this index, while it is held (zero-padded: at least as long as
    /// the original, and the extra bytes are zero).
    pub fn symbol(&self, index: u64) -> Option<&[u8]> {
        match self.column(index)? {
            Column::Decoded(symbol) => Some(symbol),
            _ => None,
        }
    }

    /// The next newly decoded symbol, in the order they decoded (not necessarily index order);
    /// symbols dropped before being polled are skipped.
    pub fn poll_decoded(&mut self) -> Option<(u64, &[u8])> {
        let index = self.decoded_queue.pop_front()?;
        let symbol = self.symbol(index)?;
        Some((index, symbol))
    }

    fn column(&self, index: u64) -> Option<&Column> {
        let offset = usize::try_from(index.checked_sub(self.base)?).ok()?;
        self.columns.get(offset)
    }

    fn receipt(&self, outcome: Outcome) -> Receipt {
        Receipt {
            outcome,
            newly_seen: None,
            newly_decoded: 0,
            first_unseen: self.first_unseen,
        }
    }

    fn check_payload(&self, payload: &[u8]) -> Result<(), DecodeError> {
        if payload.len() > self.config.max_symbol_len {
            return Err(DecodeError::PayloadTooLong {
                len: payload.len(),
                limit: self.config.max_symbol_len,
            });
        }
        Ok(())
    }

    /// `Some(Stale)` when `lo` is below the base, an error when `hi` is beyond the span limit.
    fn classify_range(&self, lo: u64, hi: u64) -> Result<Option<Outcome>, DecodeError> {
        if lo < self.base {
            return Ok(Some(Outcome::Stale));
        }
        if hi - self.base >= self.config.max_span {
            return Err(DecodeError::SpanExceeded {
                index: hi,
                base: self.base,
                limit: self.config.max_span,
            });
        }
        Ok(None)
    }

    /// Reduces the combination over `lo..=hi` against decoded symbols and rows into
    /// `self.reduced` (indexed from `lo`), recording the subtracted terms in `self.terms`.
    fn reduce(&mut self, lo: u64, hi: u64, coefs: &[u8]) {
        let end = self.end_index().max(hi + 1);
        self.reduced.clear();
        self.reduced.resize((end - lo) as usize, 0);
        self.reduced[..coefs.len()].copy_from_slice(coefs);
        self.terms.clear();
        let first_column = ((lo - self.base) as usize).min(self.columns.len());
        for (offset, column) in self.columns.range(first_column..).enumerate() {
            if offset >= coefs.len() {
                break;
            }
            // RREF: rows are zero at every other pivot and decoded column, so the value here is
            // still the original coefficient whenever the column is a pivot or decoded.
            let c = self.reduced[offset];
            if c == 0 {
                continue;
            }
            match column {
                Column::Unseen => continue,
                Column::Decoded(_) => self.reduced[offset] = 0,
                Column::Seen(row) => mul_add(&mut self.reduced[offset..], &row.coefs, c),
            }
            self.terms.push((lo + offset as u64, c));
        }
    }

    /// Inserts the reduced combination (pivot at `pivot`, `self.reduced[pivot_offset]`) as a new
    /// row, clears its pivot column from the other rows and returns how many indices decoded.
    fn insert(&mut self, pivot: u64, pivot_offset: usize, payload: &[u8]) -> usize {
        let scale = inv(self.reduced[pivot_offset]).unwrap_or(1);
        let mut coefs = self.spare_coefs.pop().unwrap_or_default();
        coefs.clear();
        // `mul(scale, c)`: one 256-byte row of the product table for the whole row.
        coefs.extend(self.reduced[pivot_offset..].iter().map(|&c| mul(scale, c)));
        trim_trailing_zeros(&mut coefs);

        // One fused pass: payload' = scale · (payload + Σ c·row + Σ c·symbol).
        let base = self.base;
        let columns = &self.columns;
        let column_of = |index: u64| &columns[(index - base) as usize];
        let len = self
            .terms
            .iter()
            .filter_map(|&(index, _)| match column_of(index) {
                Column::Seen(row) => Some(row.payload.len()),
                _ => None,
            })
            .fold(payload.len(), usize::max);
        let mut new_payload = self.spare_payloads.pop().unwrap_or_default();
        new_payload.clear();
        new_payload.resize(len, 0);
        let mut batch = Batch::new();
        batch.add(&mut new_payload, payload, scale);
        for &(index, c) in &self.terms {
            batch.add(&mut new_payload, column_of(index).payload(), mul(scale, c));
        }
        batch.flush(&mut new_payload);

        if self.end_index() < pivot + coefs.len() as u64 {
            let new_len = (pivot + coefs.len() as u64 - base) as usize;
            self.columns.resize_with(new_len, || Column::Unseen);
        }
        let row = Row {
            coefs,
            payload: new_payload,
        };
        let pivot_column = (pivot - base) as usize;
        self.clear_pivot_column(pivot_column, &row);
        let mut newly_decoded = 0;
        let finished = std::mem::take(&mut self.finished);
        for &offset in &finished {
            self.mark_decoded(offset);
            newly_decoded += 1;
        }
        self.finished = finished;
        self.rows += 1;
        self.columns[pivot_column] = Column::Seen(row);
        if self.is_unit_row(pivot_column) {
            self.mark_decoded(pivot_column);
            newly_decoded += 1;
        }
        newly_decoded
    }

    /// Back-substitution: subtracts `row` from every row that has a non-zero coefficient at
    /// `pivot_column`, noting the rows that become decoded in `self.finished`. The scan stops
    /// after the last existing row (`self.rows` of them): the span is mostly decoded columns,
    /// and walking all of it for every innovative combination cost more than the elimination.
    fn clear_pivot_column(&mut self, pivot_column: usize, row: &Row) {
        self.finished.clear();
        let mut rows_left = self.rows;
        for (offset, column) in self.columns.iter_mut().enumerate().take(pivot_column) {
            if rows_left == 0 {
                break;
            }
            let Column::Seen(other) = column else {
                continue;
            };
            rows_left -= 1;
            let at = pivot_column - offset;
            let g = other.coefs.get(at).copied().unwrap_or(0);
            if g == 0 {
                continue;
            }
            if other.coefs.len() < at + row.coefs.len() {
                other.coefs.resize(at + row.coefs.len(), 0);
            }
            mul_add(&mut other.coefs[at..], &row.coefs, g);
            trim_trailing_zeros(&mut other.coefs);
            if other.payload.len() < row.payload.len() {
                other.payload.resize(row.payload.len(), 0);
            }
            mul_add(&mut other.payload, &row.payload, g);
            if other.coefs.len() == 1 {
                self.finished.push(offset);
            }
        }
    }

    fn is_unit_row(&self, offset: usize) -> bool {
        matches!(&self.columns[offset], Column::Seen(row) if row.coefs.len() == 1)
    }

    /// Turns the unit row at `offset` into a decoded symbol and queues it for polling.
    fn mark_decoded(&mut self, offset: usize) {
        let column = std::mem::replace(&mut self.columns[offset], Column::Unseen);
        let Column::Seen(row) = column else {
            self.columns[offset] = column;
            return;
        };
        self.rows -= 1;
        self.decoded_held += 1;
        if self.spare_coefs.len() < SPARE_BUFFERS {
            self.spare_coefs.push(row.coefs);
        }
        self.columns[offset] = Column::Decoded(row.payload);
        self.decoded_queue.push_back(self.base + offset as u64);
    }

    /// Keeps released buffers for later rows. One `drop_below` releases the decoded symbols of
    /// a whole round trip at once (a thousand and more at gigabit rates) and the next round
    /// trip's rows need as many: payloads are kept while the tracked span and the spares
    /// together stay within `max_span`, the memory the decoder may hold anyway.
    fn recycle(&mut self, payload: Vec<u8>, coefs: Option<Vec<u8>>) {
        let limit = usize::try_from(self.config.max_span).unwrap_or(usize::MAX);
        if self.columns.len() + self.spare_payloads.len() < limit {
            self.spare_payloads.push(payload);
        }
        if let Some(coefs) = coefs
            && self.spare_coefs.len() < SPARE_BUFFERS
        {
            self.spare_coefs.push(coefs);
        }
    }

    fn advance_first_unseen(&mut self) {
        while let Some(column) = self.column(self.first_unseen) {
            if matches!(column, Column::Unseen) {
                break;
            }
            self.first_unseen += 1;
        }
    }
}
