//! Log, exp, full multiplication, split-nibble and GF2P8AFFINE tables, all built at compile time
//! from [`mul_reference`].

#![forbid(unsafe_code)]

use crate::mul_reference;

const fn build_exp() -> [u8; 512] {
    let mut exp = [0u8; 512];
    let mut x: u8 = 1;
    let mut i = 0;
    while i < 255 {
        exp[i] = x;
        exp[i + 255] = x;
        x = mul_reference(x, 2);
        i += 1;
    }
    // exp[510], exp[511] are never read by well-formed log sums (< 510); keep them defined.
    exp[510] = exp[0];
    exp[511] = exp[1];
    exp
}

const fn build_log(exp: &[u8; 512]) -> [u8; 256] {
    let mut log = [0u8; 256];
    let mut i = 0;
    while i < 255 {
        log[exp[i] as usize] = i as u8;
        i += 1;
    }
    log
}

const fn build_mul(exp: &[u8; 512], log: &[u8; 256]) -> [[u8; 256]; 256] {
    let mut table = [[0u8; 256]; 256];
    let mut a = 1;
    while a < 256 {
        let mut b = 1;
        while b < 256 {
            table[a][b] = exp[log[a] as usize + log[b] as usize];
            b += 1;
        }
        a += 1;
    }
    table
}

/// `EXP[i] = 2^i`, doubled in length so that `EXP[LOG[a] + LOG[b]]` needs no modulo.
pub static EXP: [u8; 512] = build_exp();
/// `LOG[a]` for `a != 0`; `LOG[0]` is 0 and meaningless.
pub static LOG: [u8; 256] = build_log(&build_exp());
/// Full product table, `MUL[a][b] = a·b`.
pub static MUL: [[u8; 256]; 256] = build_mul(&build_exp(), &build_log(&build_exp()));

/// Split-nibble tables for the shuffle tiers: `NIBBLE[c][i] = c·i` and `NIBBLE[c][16 + i] =
/// c·(i << 4)` for `i < 16`.
///
/// Multiplication by a constant is GF(2)-linear, so with `x = hi·16 ^ lo`,
/// `c·x = c·lo ^ c·(hi·16) = NIBBLE[c][lo] ^ NIBBLE[c][16 + hi]`: two 16-entry lookups, which is
/// exactly what one `pshufb` per nibble does for 16/32/64 bytes at once.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) static NIBBLE: [[u8; 32]; 256] = build_nibble();

const fn build_nibble() -> [[u8; 32]; 256] {
    let mut t = [[0u8; 32]; 256];
    let mut c = 0;
    while c < 256 {
        let mut i = 0;
        while i < 16 {
            t[c][i] = mul_reference(c as u8, i as u8);
            t[c][16 + i] = mul_reference(c as u8, (i << 4) as u8);
            i += 1;
        }
        c += 1;
    }
    t
}

/// `AFFINE[c]` is the 8×8 bit matrix of `x ↦ c·x`, laid out as the qword operand of
/// `GF2P8AFFINEQB` (see [`affine_matrix`]).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) static AFFINE: [u64; 256] = build_affine();

const fn build_affine() -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = affine_matrix(c as u8);
        c += 1;
    }
    t
}

/// The `GF2P8AFFINEQB` matrix operand for multiplication by `c` in *this* field (poly `0x11D`).
///
/// Intel defines, for each data byte `x` and matrix qword `A`,
/// `result.bit[i] = parity(A.byte[7 - i] & x) ^ imm8.bit[i]`: byte `7 - i` of `A` is the row that
/// produces output bit `i`, and bit `j` of that row is the coefficient of input bit `j`.
/// Since `c·x = Σ_j x_j · (c·2^j)`, column `j` of the matrix is the field element `c·2^j`, so row
/// `i` has bit `j` set iff bit `i` of `c·2^j` is set. (`GF2P8MULB` is no use here: it hard-wires
/// the AES polynomial `0x11B`.) For `c = 1` this gives the well-known identity `0x0102040810204080`.
pub(crate) const fn affine_matrix(c: u8) -> u64 {
    let mut m = 0u64;
    let mut j = 0;
    while j < 8 {
        let column = mul_reference(c, 1 << j);
        let mut i = 0;
        while i < 8 {
            if (column >> i) & 1 == 1 {
                m |= 1u64 << (8 * (7 - i) + j);
            }
            i += 1;
        }
        j += 1;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-for-bit transcription of Intel's pseudo-code for `GF2P8AFFINEQB` on one byte:
    /// `retbyte.bit[i] = parity(tsrc2qw.byte[7-i] AND src1byte) XOR imm8.bit[i]`.
    fn gf2p8affine_byte(matrix: u64, x: u8, imm8: u8) -> u8 {
        let mut out = 0u8;
        for i in 0..8 {
            let row = (matrix >> (8 * (7 - i))) as u8;
            let bit = ((row & x).count_ones() & 1) as u8 ^ ((imm8 >> i) & 1);
            out |= bit << i;
        }
        out
    }

    #[test]
    fn affine_matrix_emulated_matches_reference_for_every_pair() {
        assert_eq!(AFFINE[1], 0x0102_0408_1020_4080, "identity matrix");
        assert_eq!(AFFINE[0], 0);
        for c in 0..=255u8 {
            assert_eq!(AFFINE[c as usize], affine_matrix(c));
            for x in 0..=255u8 {
                assert_eq!(
                    gf2p8affine_byte(AFFINE[c as usize], x, 0),
                    mul_reference(c, x),
                    "c = {c:#04x}, x = {x:#04x}"
                );
            }
        }
    }

    #[test]
    fn split_nibble_tables_match_reference_for_every_pair() {
        for c in 0..=255u8 {
            let t = &NIBBLE[c as usize];
            for x in 0..=255u8 {
                let got = t[(x & 15) as usize] ^ t[16 + (x >> 4) as usize];
                assert_eq!(got, mul_reference(c, x), "c = {c:#04x}, x = {x:#04x}");
            }
        }
    }
}
