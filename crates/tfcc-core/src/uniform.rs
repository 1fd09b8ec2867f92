//! One uniform draw in `[0, 1)` from a seeded generator, shared by the protocols that draw
//! (TFWC's and TTFWC's cwnd jitter, TCP's ns-2 `overhead_`), so that a seed means the same
//! draws wherever it is used and the conversion is written once.

use rand::Rng;

/// The top 53 bits of the next `u64`, scaled to `[0, 1)`: every representable value equally
/// likely, 1 never drawn.
pub(crate) fn unit(rng: &mut impl Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}
