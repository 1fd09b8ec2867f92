//! Per-component random streams derived from the scenario seed and a stable component key.
//!
//! Every random component (a loss model, a RED queue, a flow's loss process on a per-flow
//! artificial-loss link, ...) draws from its own stream, seeded from `(scenario seed, key)` where
//! the key is a hash of the component's *name* ("link/bottleneck", "queue/r1-r2", ...), never of
//! its position in a list. Adding a flow or a link therefore leaves the draws of every other
//! component unchanged (DESIGN.md, "Simulator"), which keeps paired comparisons (same scenario,
//! one flow more) free of random-number noise.
//!
//! The generator is PCG-64 MCG (`rand_pcg::Pcg64Mcg`): portable (same output on every platform
//! and compiler), fast, 128-bit state, and versioned with the crate so that results only change
//! when the dependency is deliberately bumped. Uniform floats are built here from the raw 64-bit
//! output rather than through `rand`'s distributions, so their exact values do not depend on how
//! a `rand` release chooses to convert bits to floats.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// SplitMix64's finaliser: a bijective 64-bit mix whose outputs of nearby inputs are unrelated.
/// Used to turn `(seed, key)` into well-spread generator seeds (Steele, Lea and Flood, "Fast
/// splittable pseudorandom number generators", OOPSLA 2014).
pub const fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A stable 64-bit key for a component name (FNV-1a). Stable across runs, platforms and Rust
/// versions, unlike `std`'s hasher, which is randomly keyed.
pub fn component_key(name: &str) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in name.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// One component's random stream.
#[derive(Clone, Debug)]
pub struct SimRng(Pcg64Mcg);

impl SimRng {
    /// The stream of component `key` in a run seeded with `seed`.
    pub fn stream(seed: u64, key: u64) -> SimRng {
        let a = splitmix64(seed ^ splitmix64(key));
        let b = splitmix64(a ^ 0xD1B5_4A32_D192_ED03);
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&a.to_le_bytes());
        bytes[8..].copy_from_slice(&b.to_le_bytes());
        SimRng(Pcg64Mcg::from_seed(bytes))
    }

    /// The stream of the component called `name`.
    pub fn named(seed: u64, name: &str) -> SimRng {
        SimRng::stream(seed, component_key(name))
    }

    /// The stream of flow number `flow`'s video source. One name for both backends: the
    /// testbed draws its video flows' frames from it too, so that they are the simulator's.
    pub fn video(seed: u64, flow: u32) -> SimRng {
        SimRng::named(seed, &format!("flow/{flow}/video"))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform over the integers `lo..=hi` (`lo` when `hi < lo`), by the high half of a 64×64-bit
    /// product: no modulo bias worth the name, and no float rounding in nanosecond quantities.
    pub fn uniform_u64(&mut self, lo: u64, hi: u64) -> u64 {
        let span = u128::from(hi.saturating_sub(lo)) + 1;
        lo + ((u128::from(self.next_u64()) * span) >> 64) as u64
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `p` (`p <= 0` never, `p >= 1` always).
    pub fn bernoulli(&mut self, p: f64) -> bool {
        // `uniform() < p` is exact for p = 0 (never) and p = 1 (always).
        self.uniform() < p
    }

    /// Exponential with the given mean, by inversion. `1 - u` lies in `(0, 1]`, so the logarithm
    /// is finite.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_key_give_the_same_stream() {
        let mut a = SimRng::named(7, "link/bottleneck");
        let mut b = SimRng::named(7, "link/bottleneck");
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn streams_differ_by_seed_and_by_key() {
        let first = |seed, name| SimRng::named(seed, name).next_u64();
        assert_ne!(first(1, "flow/0"), first(2, "flow/0"));
        assert_ne!(first(1, "flow/0"), first(1, "flow/1"));
    }

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // First outputs of the reference SplitMix64 generator seeded with 0: state advances by
        // the golden gamma and each output is the finaliser of the new state.
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(0x9E37_79B9_7F4A_7C15), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn fnv1a_matches_published_vectors() {
        assert_eq!(component_key(""), 0xCBF2_9CE4_8422_2325);
        assert_eq!(component_key("a"), 0xAF63_DC4C_8601_EC8C);
    }

    #[test]
    fn uniform_and_exponential_have_the_right_means() {
        let mut r = SimRng::named(3, "test");
        let n = 200_000;
        let mut su = 0.0;
        let mut se = 0.0;
        for _ in 0..n {
            let u = r.uniform();
            assert!((0.0..1.0).contains(&u));
            su += u;
            se += r.exponential(5.0);
        }
        // Standard errors: 0.289/sqrt(n) = 6.5e-4 and 5/sqrt(n) = 0.011; allow 5 sigma.
        assert!((su / n as f64 - 0.5).abs() < 3.3e-3);
        assert!((se / n as f64 - 5.0).abs() < 0.056);
    }
}
