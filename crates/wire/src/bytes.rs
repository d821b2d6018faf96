//! Big-endian field access on byte slices. Callers check lengths first (views do it in
//! `check_len`); these helpers index directly and would panic on a short slice.

#[inline]
pub(crate) fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([b[off], b[off + 1]])
}

#[inline]
pub(crate) fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_be_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

#[inline]
pub(crate) fn u64_at(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_be_bytes(a)
}

#[inline]
pub(crate) fn put_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_be_bytes());
}

#[inline]
pub(crate) fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_be_bytes());
}

#[inline]
pub(crate) fn put_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_be_bytes());
}

/// `Err(Truncated)` unless `got >= needed`.
#[inline]
pub(crate) fn need(needed: usize, got: usize) -> crate::Result<()> {
    if got < needed {
        Err(crate::WireError::Truncated { needed, got })
    } else {
        Ok(())
    }
}

/// `Err(BufferTooSmall)` unless `got >= needed`.
#[inline]
pub(crate) fn room(needed: usize, got: usize) -> crate::Result<()> {
    if got < needed {
        Err(crate::WireError::BufferTooSmall { needed, got })
    } else {
        Ok(())
    }
}
