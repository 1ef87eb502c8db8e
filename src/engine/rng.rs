//! Seeded, portable random streams: xoshiro256++ (`rand_xoshiro`) seeded
//! through SplitMix64 from `(seed, stream)`.
//!
//! The generator core is `rand_xoshiro::Xoshiro256PlusPlus`, pinned to an
//! exact version in `Cargo.toml`; the seeding and the conversions to uniform
//! and exponential draws are written here. Every published prediction depends
//! on these bits, so the test `first_outputs_are_the_recorded_golden_values`
//! holds the first outputs of a few streams, recorded from the hand-written
//! core this replaced: an upgrade that changed the streams fails it.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// One independent random stream, identified by `(seed, stream)`.
#[derive(Debug, Clone)]
pub struct RngStream {
    core: Xoshiro256PlusPlus,
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl RngStream {
    /// The stream numbered `stream` of the run seeded with `seed`.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut x = seed ^ stream.wrapping_mul(0xD605_BBB5_8C8A_BBFD);
        // The state words s[0..4], as 32 little-endian bytes. SplitMix64's
        // finaliser is a bijection, so four consecutive outputs are never all
        // zero and `from_seed` never substitutes its fallback seed.
        let mut bytes = [0u8; 32];
        for word in bytes.chunks_exact_mut(8) {
            word.copy_from_slice(&splitmix64(&mut x).to_le_bytes());
        }
        RngStream {
            core: Xoshiro256PlusPlus::from_seed(bytes),
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.core.next_u64()
    }

    /// A uniform draw in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// An exponential draw with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs of a few (seed, stream) pairs, recorded before any
    /// change of the generator's implementation: a published prediction
    /// depends on these bits, so they must never change.
    const GOLDEN: [((u64, u64), [u64; 4]); 5] = [
        (
            (0x1, 1),
            [
                0x7684FED65DB482EC,
                0xC6A0F5F8EC85C526,
                0x1A7A34C5B481FD87,
                0xDAA05B6B2CDD0CE7,
            ],
        ),
        (
            (0x1, 0),
            [
                0xCFC5D07F6F03C29B,
                0xBF424132963FE08D,
                0x19A37D5757AAF520,
                0xBF08119F05CD56D6,
            ],
        ),
        (
            (0x2, 1),
            [
                0xC115DCA68AD02976,
                0x5819FE5CADDDD0A0,
                0x4FCAA77E4C5F3472,
                0xC37D095BCDBE9743,
            ],
        ),
        (
            (0xDEADBEEF, 7),
            [
                0x21D24A65CF8537E2,
                0xC3DACC0B5B375147,
                0xCCF16B82FDF9F2A3,
                0x4528F572B97F07F7,
            ],
        ),
        (
            (0xFFFFFFFFFFFFFFFF, 3),
            [
                0x7EC19129A1A3EF47,
                0x7B910AF83EE51A48,
                0x6DADFB0991806328,
                0x5D193BFE88B5E615,
            ],
        ),
    ];

    #[test]
    fn first_outputs_are_the_recorded_golden_values() {
        for ((seed, stream), expected) in GOLDEN {
            let mut r = RngStream::new(seed, stream);
            let got: Vec<u64> = (0..4).map(|_| r.next_u64()).collect();
            assert_eq!(got, expected, "stream ({seed:#X}, {stream})");
        }
    }

    #[test]
    fn same_seed_same_stream_same_numbers() {
        let mut a = RngStream::new(7, 3);
        let mut b = RngStream::new(7, 3);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn streams_differ() {
        let mut a = RngStream::new(7, 3);
        let mut b = RngStream::new(7, 4);
        assert_ne!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn uniform_mean_is_about_half_and_exponential_mean_holds() {
        let mut r = RngStream::new(1, 0);
        let n = 200_000;
        let u: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((u - 0.5).abs() < 0.005, "{u}");
        let e: f64 = (0..n).map(|_| r.exponential(100.0)).sum::<f64>() / n as f64;
        assert!((e - 100.0).abs() < 1.5, "{e}");
    }
}
