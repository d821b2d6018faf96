//! Log, exp and full multiplication tables, built at compile time.

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
