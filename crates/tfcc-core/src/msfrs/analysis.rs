//! The analysis of 003 §4.4: batch latency (Eq. 4.4–4.6), the delay bound (Theorem 4.1) and the
//! fairness bound (Theorem 4.2).
//!
//! Model of §4.4.1: a batch of `m` requests arrives at once, every response has length `L`, the
//! downlink has capacity `C` and MSF-RS a fixed window `W+`. The responses in flight share `C`
//! equally: an ordinary gateway forwards all `m` at once (each gets `C/m`); MSF-RS releases them
//! in rounds of `W+` (each gets `C/W+`), the last round holding the `m mod W+` left.
//!
//! Times are in the unit of `L/C` (pass `len_over_capacity` = `L/C` in seconds to get seconds).

/// Eq. 4.4: mean active time `T_a` under an ordinary gateway, `m·L/C` (no queuing; `m`
/// responses share `C`).
pub fn ordinary_active_time(m: u64, len_over_capacity: f64) -> f64 {
    m as f64 * len_over_capacity
}

/// Eq. 4.5: mean queuing time `T_q` under MSF-RS,
/// `(1/m)·[W+·(0 + 1 + … + max(⌊m/W+⌋ − 1, 0)) + (m mod W+)·⌊m/W+⌋]·W+·L/C`.
///
/// Round `r` (from 0) of `W+` requests waits `r` round times of `W+·L/C`; the `m mod W+` left
/// over wait `⌊m/W+⌋` rounds. `m = 0` or `W+ = 0` give 0.
pub fn msfrs_queuing_time(m: u64, w_plus: u64, len_over_capacity: f64) -> f64 {
    if m == 0 || w_plus == 0 {
        return 0.0;
    }
    let full = m / w_plus;
    let rest = m % w_plus;
    // 0 + 1 + … + (full − 1), with max(·, 0) when full = 0.
    let rounds_waited = if full == 0 { 0 } else { full * (full - 1) / 2 };
    let total = (w_plus * rounds_waited + rest * full) as f64;
    total / m as f64 * w_plus as f64 * len_over_capacity
}

/// Eq. 4.6: mean service time `T_s` under MSF-RS,
/// `(1/m)·[(m − m mod W+)·W+·L/C + (m mod W+)·(m mod W+)·L/C]`: a full round's responses take
/// `W+·L/C` each, the last partial round's `(m mod W+)·L/C`.
pub fn msfrs_service_time(m: u64, w_plus: u64, len_over_capacity: f64) -> f64 {
    if m == 0 || w_plus == 0 {
        return 0.0;
    }
    let rest = m % w_plus;
    let total = ((m - rest) * w_plus + rest * rest) as f64;
    total / m as f64 * len_over_capacity
}

/// `T_a = T_q + T_s` under MSF-RS (Eq. 4.5 + Eq. 4.6).
pub fn msfrs_active_time(m: u64, w_plus: u64, len_over_capacity: f64) -> f64 {
    msfrs_queuing_time(m, w_plus, len_over_capacity)
        + msfrs_service_time(m, w_plus, len_over_capacity)
}

/// Fig. 4.5: `T_a(MSF-RS) / T_a(ordinary)`, independent of `L/C`; 1 for `m = 0`.
/// At `m = 2W+` it is 0.75, "MSF-RS can reduce 25 % of T_a".
pub fn active_time_ratio(m: u64, w_plus: u64) -> f64 {
    if m == 0 {
        return 1.0;
    }
    msfrs_active_time(m, w_plus, 1.0) / ordinary_active_time(m, 1.0)
}

/// Theorem 4.1: a transaction finishes under MSF-RS at most `2·L+/c` after it would under the
/// ideal weighted sharing MSF-RS*, with `c = C/W+` the rate of one of the `W+` sub-links and
/// `L+` the largest response. Arguments in bytes and bytes per second; the result in seconds.
pub fn delay_bound(max_response: f64, capacity_bytes_per_s: f64, w_plus: f64) -> f64 {
    2.0 * max_response / (capacity_bytes_per_s / w_plus)
}

/// Theorem 4.2: the fairness of MSF-RS (Golestani's measure: the largest difference in
/// normalised service, bytes/weight, between two backlogged classes over any interval) is
/// `W+·L_i+/w_i + L_j+/w_j`, with `i` the class with the larger `L+/w`.
pub fn fairness_bound(w_plus: f64, max_i: f64, weight_i: f64, max_j: f64, weight_j: f64) -> f64 {
    let (a, b) = (max_i / weight_i, max_j / weight_j);
    let (big, small) = if a >= b { (a, b) } else { (b, a) };
    w_plus * big + small
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn twice_the_window_gives_three_quarters() {
        // Fig. 4.5's dotted line: m = 2W+ → T_a ratio 0.75, a 25 % reduction (derived check in
        // spec 003 §4.5: 1.5·W+L/C against 2·W+L/C).
        for w in [1, 2, 5, 7, 13, 50] {
            assert!(
                (active_time_ratio(2 * w, w) - 0.75).abs() < 1e-12,
                "W+ = {w}"
            );
            assert!((msfrs_queuing_time(2 * w, w, 1.0) - 0.5 * w as f64).abs() < 1e-12);
            assert!((msfrs_service_time(2 * w, w, 1.0) - w as f64).abs() < 1e-12);
            assert!((ordinary_active_time(2 * w, 1.0) - 2.0 * w as f64).abs() < 1e-12);
        }
    }

    #[test]
    fn worked_values_of_eq_4_5_and_4_6() {
        // m = 7, W+ = 3: rounds of 3, 3 and 1.
        // T_q = (1/7)(3·(0+1) + 1·2)·3 = 15/7; T_s = (1/7)(6·3 + 1·1) = 19/7.
        assert!((msfrs_queuing_time(7, 3, 1.0) - 15.0 / 7.0).abs() < 1e-12);
        assert!((msfrs_service_time(7, 3, 1.0) - 19.0 / 7.0).abs() < 1e-12);
        assert!((active_time_ratio(7, 3) - 34.0 / 49.0).abs() < 1e-12);
        // Fewer requests than the window: nothing waits, and it is the ordinary gateway.
        assert_eq!(msfrs_queuing_time(3, 5, 1.0), 0.0);
        assert_eq!(active_time_ratio(3, 5), 1.0);
        // In seconds: 10 × 27 656 B at 2 Mb/s with W+ = 5 (L/C = 0.110624 s).
        let lc = 27_656.0 / 250_000.0;
        assert!((ordinary_active_time(10, lc) - 1.10624).abs() < 1e-9);
        assert!((msfrs_active_time(10, 5, lc) - 0.75 * 1.10624).abs() < 1e-9);
    }

    #[test]
    fn the_simulated_latency_reduction_is_the_thesis_arithmetic() {
        // 003 §4.5.3: 6.76 s against 8.83 s is "23.44 %".
        let r: f64 = (8.83 - 6.76) / 8.83;
        assert!((r - 0.2344).abs() < 5e-5, "{r}");
    }

    #[test]
    fn bounds_follow_the_theorems() {
        // 2 Mb/s = 250 000 B/s, W+ = 10: c = 25 000 B/s; L+ = 100 000 B → 8 s.
        assert!((delay_bound(100_000.0, 250_000.0, 10.0) - 8.0).abs() < 1e-12);
        // W+ = 10, class i: L+ 4000 B, w 1 → 4000; class j: 8000 B, w 4 → 2000.
        assert_eq!(fairness_bound(10.0, 4000.0, 1.0, 8000.0, 4.0), 42_000.0);
        assert_eq!(fairness_bound(10.0, 8000.0, 4.0, 4000.0, 1.0), 42_000.0);
    }

    proptest! {
        /// Fig. 4.5: "the ratio is smaller than 1 always" (equal to 1 when m ≤ W+).
        #[test]
        fn msfrs_is_never_slower_in_the_batch_model(m in 0u64..2000, w in 1u64..200) {
            let r = active_time_ratio(m, w);
            prop_assert!(r <= 1.0 + 1e-12, "m {m} W+ {w}: {r}");
            if m <= w {
                prop_assert!((r - 1.0).abs() < 1e-12);
            } else {
                prop_assert!(r < 1.0);
            }
        }
    }
}
