//! Coefficient generation from a 32-bit seed: part of the wire format.
//!
//! A coded packet may carry one 32-bit seed instead of its coefficients (Parejiya et al., VBNC:
//! "coefficients from a seed carried in the header"); both ends must then expand the seed into
//! exactly the same bytes. The generator is **SplitMix64** (Steele, Lea, Flood, "Fast splittable
//! pseudorandom number generators", OOPSLA 2014), specified byte for byte in `docs/prng.md`:
//!
//! 1. `state = seed as u64` (zero-extended).
//! 2. Each step: `state = state + 0x9E3779B97F4A7C15 (mod 2^64)`, `z = state`,
//!    `z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9`, `z = (z ^ (z >> 27)) * 0x94D049BB133111EB`,
//!    output `z ^ (z >> 31)` (all products mod 2^64).
//! 3. Each output yields its 8 bytes least-significant first; a zero byte is skipped, so every
//!    coefficient is non-zero (a zero coefficient would leave a symbol out of the combination).
//!
//! Coefficient `k` of a combination is the `k`-th byte produced, so a longer expansion of the same
//! seed extends a shorter one (the prefix property).

/// The SplitMix64 generator (see the module documentation for the exact definition).
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// Golden-ratio increment `0x9E3779B97F4A7C15`.
    pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    /// A generator whose state is the given 64-bit seed.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// An endless stream of non-zero GF(2^8) coefficients expanded from a 32-bit seed.
#[derive(Debug, Clone)]
pub struct CoefficientStream {
    rng: SplitMix64,
    word: u64,
    bytes_left: u8,
}

impl CoefficientStream {
    /// The stream for `seed`, as specified in `docs/prng.md`.
    pub fn new(seed: u32) -> Self {
        Self {
            rng: SplitMix64::new(u64::from(seed)),
            word: 0,
            bytes_left: 0,
        }
    }

    /// The next non-zero coefficient.
    pub fn next_coefficient(&mut self) -> u8 {
        loop {
            if self.bytes_left == 0 {
                self.word = self.rng.next_u64();
                self.bytes_left = 8;
            }
            let byte = self.word as u8;
            self.word >>= 8;
            self.bytes_left -= 1;
            if byte != 0 {
                return byte;
            }
        }
    }
}

/// Fills `out` with the first `out.len()` coefficients expanded from `seed` (all non-zero).
pub fn coefficients_from_seed(seed: u32, out: &mut [u8]) {
    let mut stream = CoefficientStream::new(seed);
    for c in out.iter_mut() {
        *c = stream.next_coefficient();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_published_reference_outputs() {
        // Reference outputs of Vigna's splitmix64.c with x = 0 and x = 1234567.
        let mut zero = SplitMix64::new(0);
        assert_eq!(zero.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(zero.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(zero.next_u64(), 0x06C4_5D18_8009_454F);
        let mut other = SplitMix64::new(1_234_567);
        assert_eq!(other.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(other.next_u64(), 3_203_168_211_198_807_973);
    }

    /// The golden vectors of `docs/prng.md`: seed → first 32 coefficients (hex).
    const GOLDEN: [(u32, &str); 6] = [
        (
            0,
            "afcd1d7b39a820e2f465b9a16a9e786e4f450980185dc406ec814c72a8b88bf8",
        ),
        (
            1,
            "c15c0289ec2d0a9167ec8e65a18debbe5e5532fbeea293f80bc942ee9086c171",
        ),
        (
            42,
            "956eeb2f2632d7bd03f166b233e3ef28529f0f135767524794e34a0effe11c58",
        ),
        (6, "e0efadd9a564bd99"),
        (
            0xDEAD_BEEF,
            "9bebc9680fb9df4a2209a141316a58de1dfc1c8e2fbc1f029067e17b73ce6674",
        ),
        (
            0xFFFF_FFFF,
            "c081f1afa23bb173b4d3401305432061735e2747ffc94aee8e4bed3cb7eef412",
        ),
    ];

    #[test]
    fn golden_vectors_of_the_specification() {
        for (seed, hex) in GOLDEN {
            let expected: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let mut got = vec![0u8; expected.len()];
            coefficients_from_seed(seed, &mut got);
            assert_eq!(got, expected, "seed {seed:#x}");
        }
    }

    #[test]
    fn coefficients_are_little_endian_bytes_without_zeros() {
        let mut rng = SplitMix64::new(0);
        let expected: Vec<u8> = (0..4)
            .flat_map(|_| rng.next_u64().to_le_bytes())
            .filter(|&b| b != 0)
            .take(20)
            .collect();
        let mut got = [0u8; 20];
        coefficients_from_seed(0, &mut got);
        assert_eq!(got.as_slice(), expected.as_slice());
    }

    #[test]
    fn longer_expansion_extends_shorter_one() {
        let mut short = [0u8; 7];
        let mut long = [0u8; 300];
        coefficients_from_seed(0xDEAD_BEEF, &mut short);
        coefficients_from_seed(0xDEAD_BEEF, &mut long);
        assert_eq!(&long[..7], &short);
        assert!(long.iter().all(|&c| c != 0));
    }

    #[test]
    fn a_zero_byte_in_an_output_is_skipped() {
        // Find a seed whose first output has a zero byte and check that it is skipped.
        let seed = (0u32..)
            .find(|&s| {
                SplitMix64::new(u64::from(s))
                    .next_u64()
                    .to_le_bytes()
                    .contains(&0)
            })
            .expect("some seed has a zero byte");
        let bytes = SplitMix64::new(u64::from(seed)).next_u64().to_le_bytes();
        let nonzero: Vec<u8> = bytes.iter().copied().filter(|&b| b != 0).collect();
        let mut got = vec![0u8; nonzero.len()];
        coefficients_from_seed(seed, &mut got);
        assert_eq!(got, nonzero);
    }
}
