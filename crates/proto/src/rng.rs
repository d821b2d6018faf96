//! The engine's deterministic PRNG: xoshiro256** seeded through SplitMix64 from the `seed` given
//! to [`Engine::new`](crate::Engine::new). No thread-local or OS randomness.

/// xoshiro256** (Blackman & Vigna) with a SplitMix64-expanded seed.
#[derive(Debug, Clone)]
pub struct EngineRng {
    s: [u64; 4],
}

impl EngineRng {
    /// The generator for `seed`.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let mut next = || {
            sm = sm.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = sm;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        EngineRng {
            s: [next(), next(), next(), next()],
        }
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Next 32 random bits (a coefficient seed).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Fills `out` with uniformly random non-zero GF(2^8) coefficients.
    pub fn fill_nonzero(&mut self, out: &mut [u8]) {
        let mut word = 0u64;
        let mut left = 0;
        for c in out.iter_mut() {
            loop {
                if left == 0 {
                    word = self.next_u64();
                    left = 8;
                }
                let b = word as u8;
                word >>= 8;
                left -= 1;
                if b != 0 {
                    *c = b;
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_nonzero() {
        let mut a = EngineRng::new(7);
        let mut b = EngineRng::new(7);
        let mut x = [0u8; 300];
        let mut y = [0u8; 300];
        a.fill_nonzero(&mut x);
        b.fill_nonzero(&mut y);
        assert_eq!(x, y);
        assert!(x.iter().all(|&c| c != 0));
        assert_ne!(EngineRng::new(8).next_u64(), EngineRng::new(7).next_u64());
    }
}
