//! WARC's analysis results (003 Sec. 3.4 and App. 2) as functions, so that the reproduction
//! computes them rather than copying the thesis' numbers.

/// The History-Reset false-positive probability under i.i.d. exponential inter-loss times,
/// Eqs. 3.10–3.11: `P[HR] = F_Gamma(N,1)(N/K)`, the regularised lower incomplete gamma
/// function at `N/K` for integer `N`: `1 − e^(−x) Σ_{i<N} x^i/i!`.
pub fn hr_false_positive_probability(k: f64, n: u32) -> f64 {
    let x = f64::from(n) / k;
    if !(x.is_finite() && x >= 0.0) || n == 0 {
        return 0.0;
    }
    let (mut term, mut sum) = (1.0, 1.0);
    for i in 1..n {
        term *= x / f64::from(i);
        sum += term;
    }
    (1.0 - (-x).exp() * sum).clamp(0.0, 1.0)
}

/// `1/Aggr(m)`, Eq. 3.8 (App. A2.9): the RTTs WARC(s) needs to raise its rate by a factor `m`
/// after a step increase of bandwidth, starting from a steady mean window `w`. The threshold
/// is `m ≤ 2/3 + s/(2W)` (the printed `(2/3)W + s/(2W)` is a typo, spec 003 §3.6).
pub fn aggressiveness_rtts(m: f64, w: f64, s: f64) -> f64 {
    if m <= 2.0 / 3.0 + s / (2.0 * w) {
        (w + (w * w + 18.0 * m * s * w - 18.0 * s * w).max(0.0).sqrt()) / 3.0
    } else {
        (m - 2.0 / 3.0) * w + s / 2.0
    }
}

/// `1/Resp(m)`, Eq. 3.9: loss events before WARC cuts its rate to `1/m` after a step change of
/// the loss condition, from a mean window `w`: `3sm/(2W) + 4/3` in the averaging regime, or
/// `N` once History-Reset fires (it fires when the rate exceeds K times the TCP mean over the
/// last N epochs, Eq. A2.12; evaluated here from Eq. A2.10 rather than with the ≈1.1K rule).
pub fn responsiveness_losses(m: f64, w: f64, s: f64, k: f64, n: u32) -> f64 {
    let rte = 3.0 * s * m / (2.0 * w) + 4.0 / 3.0;
    // Eq. A2.10 at n = N: after N epochs of length T = W/(1.5m) the average still holds
    // (s − NT) windows of the old mean 1.5mT.
    let t = w / (1.5 * m);
    let nn = f64::from(n);
    if s > nn * t {
        let mut sum = 0.0;
        for i in 1..=n {
            sum += (m - 1.0) * t / 2f64.powi(i as i32 - 1) + 1.5 * t;
        }
        let r_n = ((s - nn * t) * 1.5 * m * t + t * sum) / s;
        if r_n > 1.5 * k * t {
            return nn.min(rte);
        }
    }
    rte
}

/// `CV̄[w]` of WARC (Eqs. 3.7 and A2.4–A2.8): the steady coefficient of variation of the
/// per-RTT rate between losses, for mean window `w` and averaging length `s`, with the number
/// of packets between losses i.i.d. exponential of mean `2W²/3`. Integrated numerically.
pub fn warc_cv(w: f64, s: f64) -> f64 {
    // T is the inter-loss time in RTTs: x packets at mean window W take T = x/W rounds.
    let var = |t: f64| -> f64 {
        if t <= s {
            t * t * (12.0 * t * t - 15.0 * w * t + 5.0 * w * w) / (540.0 * s * s)
        } else {
            (45.0 * t.powi(4) - 15.0 * s.powi(4)
                + 6.0 * s.powi(3) * (12.0 * t - 5.0 * w)
                + 10.0 * s * t * w * (-9.0 * t + 2.0 * w)
                - 15.0 * s * s * (6.0 * t * t - 7.0 * t * w + w * w))
                / (540.0 * t * t)
        }
    };
    let mean_x = 2.0 * w * w / 3.0;
    // E[Var] = ∫ Var(x/W) · (1/mean_x) e^(−x/mean_x) dx, by the trapezium rule to 40 means.
    let steps = 20_000;
    let top = 40.0 * mean_x;
    let h = top / f64::from(steps);
    let mut acc = 0.0;
    for i in 0..=steps {
        let x = f64::from(i) * h;
        let f = var(x / w).max(0.0) * (-x / mean_x).exp() / mean_x;
        acc += if i == 0 || i == steps { f / 2.0 } else { f };
    }
    (acc * h).sqrt() / w
}

/// `E[T²]/W²` for the inter-loss time `T = x/W` in RTTs when the packets between losses `x`
/// are i.i.d. exponential with mean `2W²/3` (the model of Eqs. A2.4–A2.8): `E[T] = 2W/3` and
/// `E[T²] = 2·E[T]² = 8W²/9`.
const EPOCH_T2_OVER_W2: f64 = 8.0 / 9.0;

/// `CV̄[w]` (Eq. 3.7) of a window that grows linearly at `slope` packets per RTT between losses,
/// under the same loss model as [`warc_cv`]: within an epoch of `T` rounds the window is uniform
/// over a range of `slope·T`, so `Var[w] = slope²·T²/12` and
/// `CV̄ = slope·√(E[T²]/12)/W = slope·√(8/108)`. GAIMD's slope is `α`; near a mean window `W`,
/// IIAD's (`α/w` per RTT) is `α/W`. The thesis does not print these two (Fig. 3.5(b) plots
/// them); this is the reading used to place all three schemes at one smoothness.
pub fn linear_increase_cv(slope: f64) -> f64 {
    slope * (EPOCH_T2_OVER_W2 / 12.0).sqrt()
}

/// Fig. 3.5(b): the RTTs each scheme needs to raise its window by the factor `m` from a steady
/// mean `w`, with its parameter chosen so that its `CV̄[w]` equals `cv` (the thesis compares
/// the schemes at equal smoothness, `CV̄[w] = 0.04`, `m = 4`). Returns `(WARC, GAIMD, IIAD)`.
///
/// - WARC: the averaging length `s` solving [`warc_cv`]`(w, s) = cv` (bisection; `CV̄` falls
///   as `s` grows), then Eq. 3.8 ([`aggressiveness_rtts`]).
/// - GAIMD: `α = cv/√(8/108)` from [`linear_increase_cv`]; `+α` per RTT takes `(m − 1)·w/α`.
/// - IIAD: `α = cv·w/√(8/108)`; `d(w²)/dt = 2α` takes `(m² − 1)·w²/(2α)`.
pub fn equal_smoothness_aggressiveness(m: f64, cv: f64, w: f64) -> (f64, f64, f64) {
    let unit = linear_increase_cv(1.0);
    let gaimd_alpha = cv / unit;
    let iiad_alpha = cv * w / unit;
    let (mut lo, mut hi) = (1.0_f64, 1.0e5_f64);
    for _ in 0..60 {
        let mid = (lo * hi).sqrt();
        if warc_cv(w, mid) > cv {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let s = (lo * hi).sqrt();
    (
        aggressiveness_rtts(m, w, s),
        (m - 1.0) * w / gaimd_alpha,
        (m * m - 1.0) * w * w / (2.0 * iiad_alpha),
    )
}

/// Sec. 3.4.4: the mean time that 1000 loss events span, `∫∫ 1000·(W/1.5)·RTT`, for `W`
/// uniform in `[w_lo, w_hi]` packets and `RTT` uniform in `[rtt_lo, rtt_hi]` seconds (an epoch of
/// mean window `W` lasts `W/1.5` rounds). With independent uniforms the double integral is the
/// product of the means. The thesis' range, `W` in [6, 30] and RTT in [0.05, 0.3] s, gives
/// 2100 s: one false History-Reset per 2100 s, well beyond the ≤ 600 s stationary periods.
pub fn span_of_1000_losses_s(w_lo: f64, w_hi: f64, rtt_lo: f64, rtt_hi: f64) -> f64 {
    1000.0 * ((w_lo + w_hi) / 2.0 / 1.5) * ((rtt_lo + rtt_hi) / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_smoothness_aggressiveness_is_near_fig_3_5b() {
        // Fig. 3.5(b), m = 4, CV̄[w] = 0.04, from W = 20 (Fig. 3.5(a)'s initial window): the
        // thesis reads WARC ≈ 150, GAIMD ≈ 445, IIAD ≈ 1080 RTTs off its plot. This model gives
        // 130 / 408 / 1021: the order and the ratios (GAIMD ≈ 3×, IIAD ≈ 7–8× WARC) hold, the
        // values are 13 %, 8 % and 6 % low (see docs/reproductions/warc.md).
        let (warc, gaimd, iiad) = equal_smoothness_aggressiveness(4.0, 0.04, 20.0);
        assert!((warc - 150.0).abs() / 150.0 < 0.15, "WARC {warc:.1}");
        assert!((gaimd - 445.0).abs() / 445.0 < 0.10, "GAIMD {gaimd:.1}");
        assert!((iiad - 1080.0).abs() / 1080.0 < 0.10, "IIAD {iiad:.1}");
        assert!(warc < gaimd && gaimd < iiad);
        // Exact values of the model, so a change to it shows.
        assert!((gaimd - 408.25).abs() < 0.1, "{gaimd}");
        assert!((iiad - 1020.6).abs() < 0.1, "{iiad}");
        assert!((warc - 130.0).abs() < 0.5, "{warc}");
    }

    #[test]
    fn linear_increase_cv_is_the_uniform_spread_over_an_exponential_epoch() {
        // GAIMD(β = 1/8) has α = 0.2: CV̄ = 0.2·√(8/108) = 0.0544.
        assert!((linear_increase_cv(0.2) - 0.05443).abs() < 1e-5);
    }

    #[test]
    fn a_thousand_losses_span_2100_s() {
        assert!((span_of_1000_losses_s(6.0, 30.0, 0.05, 0.3) - 2100.0).abs() < 1e-9);
    }

    #[test]
    fn false_positive_probabilities_match_sec_3_4_4() {
        // The admissible pairs of Sec. 3.4.4, all near the 1e-3 target.
        let close = |a: f64, b: f64| (a - b).abs() < 0.01e-4;
        assert!(close(hr_false_positive_probability(3.0, 12), 9.15e-4));
        assert!(close(hr_false_positive_probability(2.5, 16), 9.92e-4));
        assert!(close(hr_false_positive_probability(3.4, 10), 9.53e-4));
        assert!(close(
            hr_false_positive_probability(3.0, 1),
            1.0 - (-1.0f64 / 3.0).exp()
        ));
    }

    #[test]
    fn aggressiveness_matches_the_worked_values() {
        // Spec 003 §3.6 [DERIVED], W = 20, s = 160.
        assert!((aggressiveness_rtts(1.6, 20.0, 160.0) - 69.0).abs() < 0.1);
        assert!((aggressiveness_rtts(2.0, 20.0, 160.0) - 86.9).abs() < 0.1);
        assert!((aggressiveness_rtts(4.0, 20.0, 160.0) - 145.4).abs() < 0.1);
    }

    #[test]
    fn responsiveness_matches_the_worked_values() {
        let r = |m| responsiveness_losses(m, 20.0, 160.0, 3.0, 12);
        assert!((r(1.5) - 19.33).abs() < 0.01, "{}", r(1.5));
        assert!((r(2.0) - 25.33).abs() < 0.01);
        assert!((r(3.0) - 37.33).abs() < 0.01);
        assert_eq!(r(5.0), 12.0, "History-Reset regime");
    }

    #[test]
    fn warc_is_smoother_than_tcp() {
        // TCP's CV̄[w] under the same model (s → per-RTT window, Jin et al.): the sawtooth
        // from 2W/3 to 4W/3 has CV 1/(3√3)·... ; here only the shape: WARC(160) at W = 20 is
        // well below 0.2 and grows with W (Fig. 3.4).
        let a = warc_cv(20.0, 160.0);
        let b = warc_cv(60.0, 160.0);
        assert!(a > 0.0 && a < b, "{a} {b}");
    }
}
