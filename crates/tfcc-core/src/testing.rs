//! Strategies shared by the property tests of several modules.

/// Any `u64`, with the edges (small values, values near `u64::MAX`) drawn as often as the rest:
/// uniform draws almost never come near the overflow boundaries that a peer's wild header
/// fields (times, sequence numbers, delays) must not cross.
pub(crate) fn wild_u64() -> impl proptest::strategy::Strategy<Value = u64> {
    proptest::prop_oneof![
        proptest::num::u64::ANY,
        0u64..1_000_000_000,
        (u64::MAX - (1u64 << 48))..=u64::MAX,
    ]
}
