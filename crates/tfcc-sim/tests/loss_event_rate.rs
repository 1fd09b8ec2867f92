//! The summary's `loss_event_rate` of a flow whose receiver counts the loss events (TFRC,
//! WARC, TEAR) is a rate in [0, 1]: events per packet the receiver's loss detector judged in
//! the window (docs/scenarios.md, `loss_event_rate`). Random small dumbbells with random loss,
//! queue and an optional outage of the bottleneck, and a mix of those flows with flows whose
//! sender counts the events (TCP, TFWC, TTFWC, the window schemes GAIMD ... AIAD/H). TFRCP,
//! whose receiver reports its loss ratio over the run, is checked too.
//!
//! Sender-counted rates keep their definition, loss events per data packet sent, and are not
//! checked here: in a window that starts during a long outage or as it ends, a sender can
//! resolve more losses of packets it sent before the window than it sends in it. Found by this
//! test with the sender-counted flows asserted too: TFWC read 1.125 (692 kb/s, 49 ms, 8
//! packets, outage 3-12 s, window from 5 s, seed 0) and TCP-SACK 7/6 (628 kb/s, 8 ms, 14
//! packets, p = 0.082, outage 6-19 s, window from 19 s).

use proptest::prelude::*;

/// The protocols drawn, receiver-counted ones first.
const PROTOCOLS: &[&str] = &[
    "tfrc",
    "warc",
    "tear",
    "tfrcp",
    "tcp-reno",
    "tcp-sack",
    "tcp-cubic",
    "tfwc",
    "ttfwc",
    "gaimd",
    "iiad",
    "sqrt",
    "simd",
    "aiadh",
];
/// How many of [`PROTOCOLS`] have their `loss_event_rate` counted by the receiver.
const RECEIVER_COUNTED: usize = 4;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_receiver_counted_loss_event_rate_is_between_0_and_1(
        seed in 0..=tfcc_sim::scenario::MAX_SEED,
        kbps in 300u64..5_000,
        delay_ms in 1u64..60,
        limit in 2u32..40,
        p in prop_oneof![Just(0.0), 0.0f64..0.3],
        first in 0..RECEIVER_COUNTED,
        others in proptest::collection::vec(0..PROTOCOLS.len(), 0..3),
        // The bottleneck down from `down` s for `outage` s (0: no outage).
        down in 1u64..10,
        outage in prop_oneof![Just(0u64), 1u64..30],
        measure_from in 0u64..40,
    ) {
        let mut text = format!(
            "duration = \"45s\"\nmeasure_from = \"{measure_from}s\"\n\
             [topology]\nkind = \"dumbbell\"\n\
             bottleneck = {{ rate = \"{kbps}kbps\", delay = \"{delay_ms}ms\", limit = {limit}, \
             loss = {{ model = \"bernoulli\", p = {p} }} }}\n\
             access = {{ rate = \"100Mbps\", delay = \"1ms\" }}\n"
        );
        let drawn: Vec<usize> = std::iter::once(first).chain(others).collect();
        for &i in &drawn {
            text += &format!("[[flows]]\nprotocol = \"{}\"\n", PROTOCOLS[i]);
        }
        if outage > 0 {
            text += &format!(
                "[[events]]\nat = \"{down}s\"\nlink = \"bottleneck\"\nup = false\n\
                 [[events]]\nat = \"{}s\"\nlink = \"bottleneck\"\nup = true\n",
                down + outage
            );
        }
        let r = tfcc_sim::scenario::load_str(&text, "t.toml", "t", &[], Some(seed))
            .unwrap()
            .into_simulation()
            .unwrap()
            .run();
        for (f, &i) in r.summary.flows.iter().zip(&drawn) {
            prop_assert_eq!(&f.protocol, PROTOCOLS[i]);
            if i < RECEIVER_COUNTED {
                prop_assert!(
                    (0.0..=1.0).contains(&f.loss_event_rate),
                    "{} flow {}: loss_event_rate {}\n{text}",
                    f.protocol,
                    f.id,
                    f.loss_event_rate
                );
            }
        }
    }
}
