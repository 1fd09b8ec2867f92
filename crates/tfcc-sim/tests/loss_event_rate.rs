//! The summary's `loss_event_rate` is a rate in [0, 1] for every flow (docs/scenarios.md,
//! `loss_event_rate`): where the receiver counts the loss events (TFRC, WARC, TEAR), events per
//! packet its loss detector judged in the window; where the sender counts them (TCP, TFWC,
//! TTFWC, the window schemes GAIMD ... AIAD/H), events located in the window per data packet
//! sent in it. Random small dumbbells with random loss, queue and an optional outage of the
//! bottleneck, and a mix of those flows. TFRCP, whose receiver reports its loss ratio over the
//! run, is checked too.
//!
//! The sender-counted rates were not checked here until they located their events: counted
//! where detected, a window that starts during a long outage or as it ends held the losses of
//! packets sent before it, and this test found TFWC at 1.125 and TCP-SACK and CUBIC at 7/6
//! ([`a_window_opening_in_an_outage_counts_the_events_of_its_own_packets`]).

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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn every_loss_event_rate_is_between_0_and_1(
        seed in 0..=tfcc_sim::scenario::MAX_SEED,
        kbps in 300u64..5_000,
        delay_ms in 1u64..60,
        limit in 2u32..40,
        p in prop_oneof![Just(0.0), 0.0f64..0.3],
        first in 0..PROTOCOLS.len(),
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

/// The CUBIC flow this test found at 7/6: a window from 12 s, the bottleneck down from 8 s to
/// 21 s. Its back-off timeouts fired before the window and were resolved as losses in it, by
/// the first ACK after the outage; located where they fired, 3 of its 6 packets' events remain.
#[test]
fn a_window_opening_in_an_outage_counts_the_events_of_its_own_packets() {
    let text = "duration = \"45s\"\nmeasure_from = \"12s\"\n[topology]\nkind = \"dumbbell\"\n\
                bottleneck = { rate = \"1334kbps\", delay = \"52ms\", limit = 4, \
                loss = { model = \"bernoulli\", p = 0.26705510222637246 } }\n\
                access = { rate = \"100Mbps\", delay = \"1ms\" }\n\
                [[flows]]\nprotocol = \"tfrc\"\n[[flows]]\nprotocol = \"tcp-cubic\"\n\
                [[flows]]\nprotocol = \"tear\"\n\
                [[events]]\nat = \"8s\"\nlink = \"bottleneck\"\nup = false\n\
                [[events]]\nat = \"21s\"\nlink = \"bottleneck\"\nup = true\n";
    let r = tfcc_sim::scenario::load_str(text, "t.toml", "t", &[], Some(4_412_543_605_470_972_808))
        .unwrap()
        .into_simulation()
        .unwrap()
        .run();
    let cubic = &r.summary.flows[1];
    assert_eq!(cubic.protocol, "tcp-cubic");
    assert_eq!((cubic.packets_sent, cubic.timeouts), (6, 3));
    assert_eq!(cubic.loss_event_rate, 3.0 / 6.0);
}
