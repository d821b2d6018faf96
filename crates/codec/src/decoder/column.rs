//! What the decoder knows about one symbol index: the decoding matrix stored column by column.

/// The state of one index from the decoder's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolState {
    /// Below the decoder's base: forgotten by [`Decoder::drop_below`](crate::Decoder::drop_below).
    Dropped,
    /// Not a pivot column: the decoder cannot yet form `p_k + q` with `q` over later indices.
    Unseen,
    /// Seen (Definition 1, Sundararajan et al. §II-B) but not decoded: the pivot of a row that
    /// still involves later indices.
    Seen,
    /// Decoded: the pivot of a row with no other non-zero coefficient; the symbol is held.
    Decoded,
}

/// One row of the reduced row echelon form, stored at its pivot column.
#[derive(Debug)]
pub(super) struct Row {
    /// `coefs[k]` is the coefficient of index `pivot + k`; `coefs[0] == 1` and the last entry is
    /// non-zero (trailing zeros are trimmed), so the row is decoded exactly when `len() == 1`.
    pub(super) coefs: Vec<u8>,
    /// The row's payload: `Σ coefs[k] · symbol[pivot + k]`, at least as long as every symbol it
    /// involves (shorter symbols read as zero-padded).
    pub(super) payload: Vec<u8>,
}

/// The decoder's knowledge of one index at or above its base.
#[derive(Debug)]
pub(super) enum Column {
    Unseen,
    Seen(Row),
    Decoded(Vec<u8>),
}

impl Column {
    /// The payload a combination referencing this column subtracts: the row's or the symbol's.
    pub(super) fn payload(&self) -> &[u8] {
        match self {
            Column::Unseen => &[],
            Column::Seen(row) => &row.payload,
            Column::Decoded(symbol) => symbol,
        }
    }

    pub(super) fn state(&self) -> SymbolState {
        match self {
            Column::Unseen => SymbolState::Unseen,
            Column::Seen(_) => SymbolState::Seen,
            Column::Decoded(_) => SymbolState::Decoded,
        }
    }
}

/// Removes trailing zero coefficients.
pub(super) fn trim_trailing_zeros(coefs: &mut Vec<u8>) {
    while coefs.last() == Some(&0) {
        coefs.pop();
    }
}
