//! MSF-RS as a whole: releases against the window, the idle and `W < W+` cases, the batch
//! model of Eq. 4.4–4.6 run through the real scheduler, and property tests of the invariants and
//! of Theorems 4.1 and 4.2 on the thesis' sub-link model (§4.4.2).

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::analysis::{delay_bound, fairness_bound, msfrs_active_time, ordinary_active_time};
use super::*;
use crate::units::Rate;

fn fixed_window(weights: &[f64], w_plus: f64) -> MsfrsConfig {
    MsfrsConfig {
        weights: weights.to_vec(),
        initial_window: w_plus,
        // Far beyond any test: W+ stays fixed, as the §4.4 analysis assumes.
        update_interval: Dur::MAX,
        ..MsfrsConfig::default()
    }
}

fn drain(m: &mut Msfrs<u64>, now: Time) -> Vec<Release<u64>> {
    std::iter::from_fn(|| m.poll_release(now)).collect()
}

#[test]
fn arrival_below_the_window_leaves_at_once() {
    let mut m = Msfrs::new(&fixed_window(&[4.0, 2.0, 1.0], 2.0), Time::ZERO).unwrap();
    m.on_request(Time::ZERO, 2, 0, 1).unwrap();
    // W = 0 < W+ = 2: released at arrival, T_q = 0 (Theorem 4.1 Case 1, b_k = a_k).
    let r = drain(&mut m, Time::ZERO);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].queued_for, Dur::ZERO);
    // W = 1 < 2, but not idle: still released at once under the default rule ...
    m.on_request(Time::from_secs(1), 1, 1, 2).unwrap();
    assert_eq!(drain(&mut m, Time::from_secs(1)).len(), 1);
    // ... and now W = W+: the third waits until a response ends.
    m.on_request(Time::from_secs(2), 0, 2, 3).unwrap();
    assert!(drain(&mut m, Time::from_secs(2)).is_empty());
    assert_eq!(m.stats().queued, 1);
    m.on_response_bytes(Time::from_secs(3), 2, 1000).unwrap();
    assert!(drain(&mut m, Time::from_secs(3)).is_empty());
    m.on_response_end(Time::from_secs(3), 2, 0).unwrap();
    let r = drain(&mut m, Time::from_secs(3));
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].request, r[0].queued_for), (3, Dur::from_secs(1)));
}

#[test]
fn literal_when_idle_rule_holds_arrivals_while_anything_is_outstanding() {
    let cfg = MsfrsConfig {
        release: ReleaseRule::WhenIdle,
        ..fixed_window(&[1.0], 4.0)
    };
    let mut m = Msfrs::new(&cfg, Time::ZERO).unwrap();
    m.on_request(Time::ZERO, 0, 0, 1).unwrap();
    m.on_request(Time::ZERO, 0, 1, 2).unwrap();
    // W = 0: Request_Receiver releases one (Fig. 4.3), then W ≠ 0 stops it.
    assert_eq!(drain(&mut m, Time::ZERO).len(), 1);
    // Fig. 4.4's loop runs on response data and fills the window.
    m.on_response_bytes(Time::from_secs(1), 0, 500).unwrap();
    assert_eq!(drain(&mut m, Time::from_secs(1)).len(), 1);
}

#[test]
fn w_plus_is_frozen_while_requests_are_too_few() {
    // Default (adaptive) WRC, W+ = 1 → 2 → 4 while backlogged, then a trickle: W < W+ at every
    // update, so W+ stays 4 although U is far below 98 % (003 §4.5.5, Fig. 4.13).
    let cfg = MsfrsConfig {
        weights: vec![1.0],
        update_interval: Dur::from_secs(1),
        ..MsfrsConfig::default()
    };
    let mut m = Msfrs::new(&cfg, Time::ZERO).unwrap();
    for k in 0..4 {
        m.on_request(Time::ZERO, 0, k, k as u64).unwrap();
    }
    let mut out = drain(&mut m, Time::ZERO);
    for s in 1..=2 {
        let now = Time::from_secs(s);
        let u = m.on_timeout(now).unwrap();
        assert!(u.binding);
        out.extend(drain(&mut m, now));
    }
    assert_eq!(m.stats().window_max, 4.0);
    assert_eq!(out.len(), 4);
    // Everything finishes; from now on one request at a time.
    for r in out {
        m.on_response_end(Time::from_secs(2), 0, r.user).unwrap();
    }
    let _ = drain(&mut m, Time::from_secs(2));
    for s in 3..=20u64 {
        let now = Time::from_secs(s);
        let _ = m.on_timeout(now);
        for r in drain(&mut m, now) {
            m.on_response_bytes(now, 0, 1000).unwrap();
            m.on_response_end(now, 0, r.user).unwrap();
        }
        assert_eq!(m.stats().window_max, 4.0, "at {s} s");
    }
}

#[test]
fn bad_events_are_refused_without_changing_state() {
    let mut m = Msfrs::new(&MsfrsConfig::default(), Time::ZERO).unwrap();
    assert_eq!(
        m.on_request(Time::ZERO, 3, 0, 0u64),
        Err(MsfrsError::UnknownClass {
            class: 3,
            classes: 3
        })
    );
    assert_eq!(
        m.on_response_end(Time::ZERO, 0, 9),
        Err(MsfrsError::NoOutstanding { class: 0, user: 9 })
    );
    assert!(m.on_response_bytes(Time::ZERO, 7, 1).is_err());
    let s = m.stats();
    assert_eq!((s.arrived, s.outstanding, s.refused), (0, 0, 3));
}

/// 003 §4.3.1: "once the idle class becomes busy, its SC is updated to the minimal SC among all
/// active classes", unconditionally: a class that had received more than the others before it
/// went idle comes back *down* to the minimum, not only up (mechanism audit, msfrsaudit).
#[test]
fn returning_idle_class_takes_the_minimum_even_from_above() {
    let mut m = Msfrs::new(&fixed_window(&[1.0, 1.0], 4.0), Time::ZERO).unwrap();
    m.on_request(Time::ZERO, 0, 0, 1).unwrap();
    m.on_request(Time::ZERO, 1, 1, 2).unwrap();
    assert_eq!(drain(&mut m, Time::ZERO).len(), 2);
    m.on_response_bytes(Time::from_secs(1), 0, 9000).unwrap();
    m.on_response_bytes(Time::from_secs(1), 1, 2000).unwrap();
    m.on_response_end(Time::from_secs(1), 0, 0).unwrap();
    // Class 0 is idle with SC 9000; class 1 is active (its response is outstanding), SC 2000.
    assert_eq!(m.class_stats(0).unwrap().users, 0);
    m.on_request(Time::from_secs(2), 0, 0, 3).unwrap();
    assert_eq!(m.class_stats(0).unwrap().service, 2000.0);
}

/// Fig. 4.4: the SC update of Eq. 4.1 comes before `UC_i − 1` for the data holding a
/// response's tail, so the leaving user's last bytes are still divided by its class' `UC`
/// including that user; the next class bytes are divided by the smaller `UC`.
#[test]
fn a_response_tail_is_credited_before_its_user_leaves() {
    let mut m = Msfrs::new(&fixed_window(&[2.0], 4.0), Time::ZERO).unwrap();
    m.on_request(Time::ZERO, 0, 0, 1).unwrap();
    m.on_request(Time::ZERO, 0, 1, 2).unwrap();
    assert_eq!(drain(&mut m, Time::ZERO).len(), 2);
    m.on_response_bytes(Time::from_secs(1), 0, 1000).unwrap();
    m.on_response_end(Time::from_secs(1), 0, 0).unwrap();
    // 1000/(w 2 · UC 2) = 250.
    assert_eq!(m.class_stats(0).unwrap().service, 250.0);
    assert_eq!(m.class_stats(0).unwrap().users, 1);
    m.on_response_bytes(Time::from_secs(2), 0, 1000).unwrap();
    // + 1000/(2 · 1) = 500.
    assert_eq!(m.class_stats(0).unwrap().service, 750.0);
}

/// 003 §4.6: class-attributed traffic no request asked for (type 2) is "accumulated into the SC
/// of the class", and counts in U as the downlink responses it is; traffic of no class
/// (type 3) is "considered as response traffic, when WRC monitors the utilization" only: no SC
/// moves.
#[test]
fn exceptive_traffic_counts_where_section_4_6_says() {
    let cfg = MsfrsConfig {
        weights: vec![1.0, 1.0],
        capacity: Rate::from_mbps(1),
        update_interval: Dur::from_secs(1),
        ..MsfrsConfig::default()
    };
    let mut m = Msfrs::new(&cfg, Time::ZERO).unwrap();
    m.on_request(Time::ZERO, 0, 0, 1).unwrap();
    assert_eq!(drain(&mut m, Time::ZERO).len(), 1);
    m.on_unclassified_bytes(Time::from_millis(100), 25_000);
    assert_eq!(m.class_stats(0).unwrap().service, 0.0);
    assert_eq!(m.class_stats(1).unwrap().service, 0.0);
    // Type 2 for the active class 0: SC and U.
    m.on_response_bytes(Time::from_millis(200), 0, 25_000)
        .unwrap();
    assert_eq!(m.class_stats(0).unwrap().service, 25_000.0);
    let u = m.on_timeout(Time::from_secs(1)).unwrap();
    // (25 000 + 25 000) B · 8 / 1 Mb/s = 40 %.
    assert!((u.utilization - 0.4).abs() < 1e-12);
}

#[test]
fn unclassified_traffic_shrinks_the_window_and_its_end_regrows_it() {
    // §4.6 type 3: counted in U only. A full window of 10 at 1 Mb/s; CBR adds 50 % of C.
    let cfg = MsfrsConfig {
        weights: vec![1.0],
        capacity: Rate::from_mbps(1),
        update_interval: Dur::from_secs(1),
        initial_window: 10.0,
        ..MsfrsConfig::default()
    };
    let mut m = Msfrs::new(&cfg, Time::ZERO).unwrap();
    for k in 0..100 {
        m.on_request(Time::ZERO, 0, k, k as u64).unwrap();
    }
    assert_eq!(drain(&mut m, Time::ZERO).len(), 10);
    m.on_response_bytes(Time::from_millis(500), 0, 62_500)
        .unwrap();
    m.on_unclassified_bytes(Time::from_millis(500), 62_500);
    let u = m.on_timeout(Time::from_secs(1)).unwrap();
    assert!((u.utilization - 1.0).abs() < 1e-12);
    assert!((u.after - 9.8).abs() < 1e-9);
    // The CBR stops: responses alone fill 49 %, W+ doubles (capped by K).
    m.on_response_bytes(Time::from_millis(1500), 0, 61_250)
        .unwrap();
    let u = m.on_timeout(Time::from_secs(2)).unwrap();
    assert!((u.after - 19.6).abs() < 1e-9);
}

/// Runs a batch of `m` equal responses through MSF-RS over a processor-sharing downlink (every
/// outstanding response gets `C/n`), the model of §4.4.1; returns the mean `T_a` in seconds.
fn batch_mean_active_time(m: u64, w_plus: f64, len: u64, capacity: Rate) -> f64 {
    let mut s = Msfrs::new(&fixed_window(&[1.0], w_plus), Time::ZERO).unwrap();
    for k in 0..m {
        s.on_request(Time::ZERO, 0, k as u32, k).unwrap();
    }
    let c = capacity.bytes_per_sec();
    let mut now = 0.0f64;
    // (user, remaining bytes, release time)
    let mut flying: Vec<(u32, f64, f64)> = drain(&mut s, Time::ZERO)
        .iter()
        .map(|r| (r.user, len as f64, 0.0))
        .collect();
    let mut total = 0.0;
    while !flying.is_empty() {
        let n = flying.len() as f64;
        let step = flying.iter().map(|f| f.1).fold(f64::INFINITY, f64::min) * n / c;
        now += step;
        let t = Time::from_secs_f64(now);
        for f in flying.iter_mut() {
            f.1 -= step * c / n;
        }
        let (done, rest): (Vec<_>, Vec<_>) = flying.into_iter().partition(|f| f.1 <= 1e-6);
        flying = rest;
        for (user, _, _) in done {
            s.on_response_bytes(t, 0, len).unwrap();
            s.on_response_end(t, 0, user).unwrap();
            // Active time = arrival (0) to the last byte.
            total += now;
        }
        flying.extend(drain(&mut s, t).iter().map(|r| (r.user, len as f64, now)));
    }
    total / m as f64
}

#[test]
fn the_scheduler_reproduces_eq_4_4_to_4_6_on_a_batch() {
    let (len, cap) = (27_656u64, Rate::from_mbps(2));
    let lc = len as f64 / cap.bytes_per_sec();
    for (m, w) in [(20u64, 10u64), (7, 3), (25, 4), (3, 5), (1, 1)] {
        let sim = batch_mean_active_time(m, w as f64, len, cap);
        let eq = msfrs_active_time(m, w, lc);
        assert!((sim - eq).abs() < 1e-6 * eq, "m {m} W+ {w}: {sim} vs {eq}");
        // An ordinary gateway is MSF-RS with a window that never binds (Eq. 4.4).
        let ord = batch_mean_active_time(m, m as f64, len, cap);
        assert!((ord - ordinary_active_time(m, lc)).abs() < 1e-6 * ord);
    }
    // m = 2W+: 25 % less.
    let r = batch_mean_active_time(20, 10.0, len, cap) / batch_mean_active_time(20, 20.0, len, cap);
    assert!((r - 0.75).abs() < 1e-6, "{r}");
}

/// One operation of the invariant proptest.
#[derive(Clone, Debug)]
enum Op {
    Arrive { class: usize, user: u32 },
    Bytes { pick: usize, bytes: u64 },
    End { pick: usize },
    BadEnd { class: usize, user: u32 },
    Unclassified { bytes: u64 },
    Advance { ms: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..4, 0u32..6).prop_map(|(class, user)| Op::Arrive { class, user }),
        3 => (any::<usize>(), 1u64..100_000).prop_map(|(pick, bytes)| Op::Bytes { pick, bytes }),
        3 => any::<usize>().prop_map(|pick| Op::End { pick }),
        1 => (0usize..5, 0u32..8).prop_map(|(class, user)| Op::BadEnd { class, user }),
        1 => (1u64..100_000).prop_map(|bytes| Op::Unclassified { bytes }),
        2 => (1u64..3000).prop_map(|ms| Op::Advance { ms }),
    ]
}

/// The expected MOA choice from the public class snapshots.
fn expected_class(m: &Msfrs<u64>) -> Option<usize> {
    let s: Vec<ClassStats> = (0..m.classes())
        .map(|c| m.class_stats(c).unwrap())
        .collect();
    let mut best: Option<usize> = None;
    for (i, c) in s.iter().enumerate().filter(|(_, c)| c.queued > 0) {
        best = match best {
            Some(b)
                if (s[b].service, -s[b].weight * s[b].users as f64)
                    <= (c.service, -c.weight * c.users as f64) =>
            {
                Some(b)
            }
            _ => Some(i),
        };
    }
    best
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// No request is lost or duplicated; W counts exactly the outstanding responses and never
    /// passes ⌈W+⌉ through a release; UC counts the users with something in MSF-RS; every
    /// release is the minimum-SC class with the thesis' tie-break.
    #[test]
    fn requests_are_conserved_and_counters_stay_exact(
        ops in proptest::collection::vec(op(), 1..300),
        per_user in any::<bool>(),
        k_rule in 0u8..4,
    ) {
        let cfg = MsfrsConfig {
            weights: vec![4.0, 2.0, 1.0, 1.0],
            capacity: Rate::from_mbps(1),
            update_interval: Dur::from_secs(1),
            per_user,
            window_rounding: if k_rule & 1 == 0 { WindowRounding::Continuous } else { WindowRounding::Nearest },
            binding: if k_rule & 2 == 0 { BindingRule::AtUpdate } else { BindingRule::DuringInterval },
            ..MsfrsConfig::default()
        };
        let mut m = Msfrs::new(&cfg, Time::ZERO).unwrap();
        let mut now = Time::ZERO;
        let mut next_id = 0u64;
        let mut queued: BTreeMap<u64, (usize, u32)> = BTreeMap::new();
        let mut outstanding: Vec<(u64, usize, u32)> = Vec::new();
        let mut released: BTreeSet<u64> = BTreeSet::new();
        for o in ops {
            match o {
                Op::Arrive { class, user } => {
                    m.on_request(now, class, user, next_id).unwrap();
                    queued.insert(next_id, (class, user));
                    next_id += 1;
                }
                Op::Bytes { pick, bytes } if !outstanding.is_empty() => {
                    let (_, class, _) = outstanding[pick % outstanding.len()];
                    m.on_response_bytes(now, class, bytes).unwrap();
                }
                Op::End { pick } if !outstanding.is_empty() => {
                    let (_, class, user) = outstanding.remove(pick % outstanding.len());
                    m.on_response_end(now, class, user).unwrap();
                }
                Op::BadEnd { class, user } => {
                    let has = outstanding.iter().any(|o| o.1 == class && o.2 == user);
                    if !has {
                        let before = m.stats();
                        prop_assert!(m.on_response_end(now, class, user).is_err());
                        prop_assert_eq!(m.stats().outstanding, before.outstanding);
                    }
                }
                Op::Unclassified { bytes } => m.on_unclassified_bytes(now, bytes),
                Op::Advance { ms } => {
                    now += Dur::from_millis(ms);
                    let _ = m.on_timeout(now);
                }
                _ => {}
            }
            loop {
                let want = expected_class(&m);
                let Some(r) = m.poll_release(now) else { break };
                prop_assert_eq!(Some(r.class), want);
                prop_assert!(released.insert(r.request), "released twice: {}", r.request);
                let q = queued.remove(&r.request);
                prop_assert_eq!(q, Some((r.class, r.user)), "not queued: {}", r.request);
                outstanding.push((r.request, r.class, r.user));
                prop_assert!(m.stats().outstanding <= m.stats().limit);
            }
            let s = m.stats();
            prop_assert_eq!(s.outstanding as usize, outstanding.len());
            prop_assert_eq!(s.queued, queued.len());
            prop_assert_eq!(s.arrived, next_id);
            prop_assert_eq!(s.released as usize, released.len());
            prop_assert!(s.window_max >= 1.0);
            // Work conservation: something waits only if the window is full.
            if s.queued > 0 {
                prop_assert!(s.outstanding as f64 >= s.window_max);
            }
            for c in 0..m.classes() {
                let users: BTreeSet<u32> = queued.values().filter(|q| q.0 == c).map(|q| q.1)
                    .chain(outstanding.iter().filter(|o| o.1 == c).map(|o| o.2)).collect();
                let cs = m.class_stats(c).unwrap();
                prop_assert_eq!(cs.users as usize, users.len(), "UC of class {}", c);
                prop_assert_eq!(cs.outstanding as usize, outstanding.iter().filter(|o| o.1 == c).count());
            }
        }
    }
}

/// One web transaction of the bound tests: class, arrival (s), response length (B).
type Arrival = (usize, f64, u64);

/// A class turning active from idle: (class, time in s).
type Entry = (usize, f64);

/// The §4.4.2 model of MSF-RS: `W+` sub-links of `c = C/W+` each; a released response is
/// received on one at `c`, in `chunk`-byte pieces, each reported to MOA (Eq. 4.1 counts any part
/// of a response). Returns per transaction its finish time `d_k`, for Theorem 4.2 the worst
/// normalised-service difference seen for every pair of classes while both were backlogged,
/// and the times at which a class turned active from idle (no queued or outstanding request).
fn run_sublinks(
    weights: &[f64],
    w_plus: u32,
    cap: f64,
    chunk: u64,
    arrivals: &[Arrival],
) -> (Vec<f64>, Vec<Vec<f64>>, Vec<Entry>) {
    let n = weights.len();
    let c = cap / w_plus as f64;
    let mut s = Msfrs::new(&fixed_window(weights, w_plus as f64), Time::ZERO).unwrap();
    let mut done = vec![f64::NAN; arrivals.len()];
    // (request, class, start time, bytes delivered, length)
    let mut flying: Vec<(u64, usize, f64, u64, u64)> = Vec::new();
    let mut service = vec![0.0f64; n]; // received bytes / weight
    let mut backlog = vec![0usize; n]; // queued requests per class
    let mut open: Vec<Vec<Option<(f64, f64)>>> = vec![vec![None; n]; n];
    let mut worst = vec![vec![0.0f64; n]; n];
    let mut next = 0usize;
    let mut was_active = vec![false; n];
    let mut entries = Vec::new();
    let note = |open: &mut Vec<Vec<Option<(f64, f64)>>>, service: &[f64], i: usize, j: usize| {
        let d = service[i] - service[j];
        let e = open[i][j].get_or_insert((d, d));
        e.0 = e.0.min(d);
        e.1 = e.1.max(d);
    };
    loop {
        // Next event: an arrival or the next chunk of a flying response.
        let t_arr = arrivals.get(next).map(|a| a.1).unwrap_or(f64::INFINITY);
        let (t_chunk, which) = flying
            .iter()
            .enumerate()
            .map(|(k, f)| (f.2 + (f.3 + chunk).min(f.4) as f64 / c, k))
            .fold(
                (f64::INFINITY, usize::MAX),
                |a, b| if b.0 < a.0 { b } else { a },
            );
        let t = t_arr.min(t_chunk);
        if !t.is_finite() {
            break;
        }
        let now = Time::from_secs_f64(t);
        // Service up to t counts for intervals in which the pair was backlogged before t.
        let before: Vec<bool> = backlog.iter().map(|&b| b > 0).collect();
        if t_chunk <= t_arr {
            let f = &mut flying[which];
            let piece = chunk.min(f.4 - f.3);
            f.3 += piece;
            service[f.1] += piece as f64 / weights[f.1];
            s.on_response_bytes(now, f.1, piece).unwrap();
            if f.3 == f.4 {
                let f = flying.swap_remove(which);
                done[f.0 as usize] = t;
                s.on_response_end(now, f.1, f.1 as u32).unwrap();
            }
        } else {
            let (class, _, _) = arrivals[next];
            // One user per class: "each class has equal users" (§4.4.2).
            s.on_request(now, class, class as u32, next as u64).unwrap();
            backlog[class] += 1;
            next += 1;
        }
        for i in 0..n {
            for j in 0..n {
                if i != j && before[i] && before[j] {
                    note(&mut open, &service, i, j);
                }
            }
        }
        while let Some(r) = s.poll_release(now) {
            backlog[r.class] -= 1;
            let len = arrivals[r.request as usize].2;
            flying.push((r.request, r.class, t, 0, len));
        }
        for (i, was) in was_active.iter_mut().enumerate() {
            let active = backlog[i] > 0 || flying.iter().any(|f| f.1 == i);
            if active && !*was {
                entries.push((i, t));
            }
            *was = active;
        }
        for i in 0..n {
            for j in 0..n {
                if i == j {
                    continue;
                }
                if backlog[i] > 0 && backlog[j] > 0 {
                    note(&mut open, &service, i, j);
                } else if let Some((lo, hi)) = open[i][j].take() {
                    worst[i][j] = worst[i][j].max(hi - lo);
                }
            }
        }
    }
    (done, worst, entries)
}

/// MSF-RS*, the ideal of §4.4.2: `C` shared among the classes with unfinished transactions in
/// proportion to their weights, each class serving its own requests one at a time in arrival
/// order (it "has W+ = n": one sub-link per class). Returns `d_k*` per transaction.
fn run_ideal(weights: &[f64], cap: f64, arrivals: &[Arrival]) -> Vec<f64> {
    let n = weights.len();
    let mut done = vec![f64::NAN; arrivals.len()];
    let mut queues: Vec<std::collections::VecDeque<(usize, f64)>> = vec![Default::default(); n];
    let mut next = 0usize;
    let mut t = 0.0f64;
    loop {
        let active: f64 = (0..n)
            .filter(|&i| !queues[i].is_empty())
            .map(|i| weights[i])
            .sum();
        let t_arr = arrivals.get(next).map(|a| a.1).unwrap_or(f64::INFINITY);
        let mut t_done = f64::INFINITY;
        let mut who = usize::MAX;
        for i in 0..n {
            if let Some(&(_, rem)) = queues[i].front() {
                let ti = t + rem / (cap * weights[i] / active);
                if ti < t_done {
                    (t_done, who) = (ti, i);
                }
            }
        }
        let t_next = t_arr.min(t_done);
        if !t_next.is_finite() {
            break;
        }
        for i in 0..n {
            if let Some(front) = queues[i].front_mut() {
                front.1 -= (t_next - t) * cap * weights[i] / active;
            }
        }
        t = t_next;
        if t_done <= t_arr {
            let (k, _) = queues[who].pop_front().unwrap();
            done[k] = t;
        } else {
            let (class, _, len) = arrivals[next];
            queues[class].push_back((next, len as f64));
            next += 1;
        }
    }
    done
}

/// Up to 80 transactions arriving within 3 s: up to 4.8 MB offered to a 250 kB/s link, so the
/// classes stay backlogged for seconds and MOA's ordering decides.
fn arrivals_strategy(classes: usize) -> impl Strategy<Value = Vec<Arrival>> {
    proptest::collection::vec((0..classes, 0.0f64..3.0, 1_000u64..60_000), 1..80).prop_map(
        |mut v| {
            v.sort_by(|a, b| a.1.total_cmp(&b.1));
            v
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Theorem 4.1: `d_k − d_k* ≤ 2·L+/c` for every transaction, with W+ fixed and one user per
    /// class (the theorem's assumptions), for two classes of any weights. The theorem is wrong
    /// as stated: its assumptions hold in the three pinned counterexamples
    /// ([`theorem_4_1_is_exceeded_with_three_classes`],
    /// [`theorem_4_1_is_exceeded_with_two_classes`], found by this test in CI, and
    /// [`theorem_4_1_is_exceeded_without_a_class_entering`]); the proof's Eq. 4.8–4.9 charge the
    /// other classes the same service in MSF-RS and MSF-RS*, which fails when a class enters
    /// from idle with the minimum SC (SC counts received bytes, not those in flight) and when
    /// MSF-RS* served class i's earlier transactions at the full C before a_k. Ignored because
    /// it searches for failures of a bound known not to hold; run it with `--ignored`.
    #[test]
    #[ignore = "Theorem 4.1 does not hold as stated (rarely, by up to about 3 % here); see the pinned counterexamples"]
    fn theorem_4_1_delay_bound_two_classes(
        arrivals in arrivals_strategy(2),
        w_plus in 1u32..8,
        w0 in 1u32..9,
        w1 in 1u32..9,
    ) {
        let weights = [w0 as f64, w1 as f64];
        let cap = 250_000.0; // 2 Mb/s
        let (d, _, _) = run_sublinks(&weights, w_plus, cap, 1000, &arrivals);
        let ideal = run_ideal(&weights, cap, &arrivals);
        let l_max = arrivals.iter().map(|a| a.2).max().unwrap() as f64;
        let bound = delay_bound(l_max, cap, w_plus as f64);
        for k in 0..arrivals.len() {
            prop_assert!(d[k] - ideal[k] <= bound + 1e-6,
                "transaction {} ({:?}): d {} d* {} excess {} > bound {}",
                k, arrivals[k], d[k], ideal[k], d[k] - ideal[k], bound);
        }
    }

    /// Theorem 4.2: over any interval in which two classes are both backlogged, their
    /// normalised services differ by at most `W+·L_i+/w_i + L_j+/w_j`. Ignored for the same
    /// reason as Theorem 4.1's search: it found an input that exceeds the bound (by half a
    /// normalised byte, in exact arithmetic), pinned as [`theorem_4_2_is_exceeded_by_a_byte`];
    /// a random search for a bound known not to hold would make the suite fail at random.
    #[test]
    #[ignore = "Theorem 4.2 does not hold exactly: exceeded by 0.5 normalised bytes in the pinned case; run with --ignored"]
    fn theorem_4_2_fairness_bound(
        arrivals in arrivals_strategy(3),
        w_plus in 1u32..8,
    ) {
        let weights = [4.0, 2.0, 1.0];
        let (_, worst, _) = run_sublinks(&weights, w_plus, 250_000.0, 1000, &arrivals);
        let l_max: Vec<f64> = (0..3)
            .map(|c| arrivals.iter().filter(|a| a.0 == c).map(|a| a.2).max().unwrap_or(0) as f64)
            .collect();
        for i in 0..3 {
            for j in 0..3 {
                if i == j { continue; }
                let bound = fairness_bound(w_plus as f64, l_max[i], weights[i], l_max[j], weights[j]);
                prop_assert!(worst[i][j] <= bound + 1e-6,
                    "classes {} {}: {} > {}", i, j, worst[i][j], bound);
            }
        }
    }
}

/// 2 Mb/s in bytes per second: the link of the Theorem 4.1 counterexamples.
const CAP_2MBPS: f64 = 250_000.0;

/// Transaction `k` of `arrivals` with class weights `weights` on a 2 Mb/s link: its finish
/// time in the sub-link model with `w_plus` sub-links (1000 B pieces), its finish time under
/// MSF-RS*, and the classes that entered from idle while it waited (after its arrival, before
/// its sub-link finish).
fn theorem_4_1_case(
    weights: &[f64],
    w_plus: u32,
    arrivals: &[Arrival],
    k: usize,
) -> (f64, f64, Vec<usize>) {
    let (d, _, entries) = run_sublinks(weights, w_plus, CAP_2MBPS, 1000, arrivals);
    let ideal = run_ideal(weights, CAP_2MBPS, arrivals);
    let a_k = arrivals[k].1;
    let entered = entries
        .iter()
        .filter(|&&(_, t)| t > a_k && t < d[k])
        .map(|&(j, _)| j)
        .collect();
    (d[k], ideal[k], entered)
}

/// A counterexample to Theorem 4.1 as stated, found by proptest on the sub-link model with the
/// 4 : 2 : 1 classes, W+ = 1 and 2 Mb/s: transaction 6 (class 0, 1000 B, arriving at 0.504 s)
/// finishes 0.504 s later than under MSF-RS*, above `2·L+/c` = 2·57 626/250 000 = 0.461 s.
/// The release trace shows why: class 0's 32 025 B response (k = 5) is in flight with k = 6
/// and 7 queued behind it when class 1 returns from idle at 0.954 s and takes the minimum
/// active SC (§4.3.1), 20 857.5, which is class 0's SC *before* the bytes still in flight: SC
/// counts received bytes only. Class 1 (SC 20 857.5 < class 0's 20 863.75 when the window
/// opens) is served first, and its 56 235 B response takes the only sub-link for 0.225 s
/// while MSF-RS* would be giving class 0 4/7 of C. The proof's Case 2 gives other classes no
/// such re-entry. Searches with three classes also found W+ = 2 cases 3 % over the bound; two
/// classes never exceeded it (the proptest above).
#[test]
fn theorem_4_1_is_exceeded_with_three_classes() {
    let arrivals: Vec<Arrival> = vec![
        (1, 0.009801601314742671, 50799),
        (0, 0.02046393643403137, 11836),
        (0, 0.1416868916598257, 35594),
        (1, 0.24212822701914155, 48261),
        (2, 0.30276064306299616, 57626),
        (0, 0.44805432579819804, 32025),
        (0, 0.5038550644410976, 1000),
        (0, 0.5240244107524263, 1000),
        (1, 0.9543648005416224, 56235),
        (1, 1.2489299966851213, 12139),
        (1, 1.2989173769043063, 30022),
    ];
    let (d, ideal, entered) = theorem_4_1_case(&[4.0, 2.0, 1.0], 1, &arrivals, 6);
    // Class 1 re-enters from idle while transaction 6 waits: outside the proof's Case 2.
    assert!(entered.contains(&1), "{entered:?}");
    let bound = delay_bound(57_626.0, CAP_2MBPS, 1.0);
    assert!((bound - 0.461008).abs() < 1e-9);
    let excess = d - ideal;
    assert!((excess - 0.50408).abs() < 1e-4, "excess {excess}");
    assert!(excess > bound);
}

/// A two-class counterexample to Theorem 4.1 that the property test found: class 0 backlogged
/// with large transactions, a 1000-byte one (transaction 13) arriving just before class 1
/// (weight 5) starts, W+ = 1. Its delay exceeds the ideal by 0.4615 s against a bound of
/// 0.4494 s (2.7 % over).
#[test]
fn theorem_4_1_is_exceeded_with_two_classes() {
    let arrivals: Vec<Arrival> = vec![
        (0, 0.5043354084836603, 49980),
        (0, 0.5554423919659933, 34962),
        (0, 0.572221809532011, 52969),
        (0, 0.7498782527779357, 42046),
        (0, 0.9445206368354078, 32423),
        (0, 1.1453022036620586, 28942),
        (0, 1.2301563481756093, 15698),
        (0, 1.2354537623827309, 39023),
        (0, 1.247056821456269, 56180),
        (0, 1.4945772357382956, 22496),
        (0, 1.5100751182167127, 40141),
        (0, 1.6470001274270858, 47720),
        (0, 1.887442292210677, 24254),
        (0, 1.9384578990916093, 1000),
        (1, 2.1702570724796333, 3061),
        (1, 2.398349002709731, 15534),
        (1, 2.52604950721949, 47984),
        (1, 2.5926130378145578, 21033),
        (1, 2.7794518442218132, 51348),
    ];
    let (d, ideal, entered) = theorem_4_1_case(&[1.0, 5.0], 1, &arrivals, 13);
    // Class 1 enters from idle while transaction 13 waits: outside the proof's Case 2.
    assert!(entered.contains(&1), "{entered:?}");
    let bound = delay_bound(56_180.0, CAP_2MBPS, 1.0);
    assert!((bound - 0.44944).abs() < 1e-9, "bound {bound}");
    let excess = d - ideal;
    assert!((excess - 0.46145).abs() < 1e-4, "excess {excess}");
    assert!(excess > bound);
}

/// A third counterexample to Theorem 4.1, in which no class enters from idle while the marked
/// transaction waits, so the re-entry rule of the first two is not the only gap. Proptest found
/// it (weights 6 : 2 : 1, W+ = 3) and shrank it to the edge, hence the small excess (1.9 µs
/// over `2·L+/c` = 1.326192 s). Transaction 6 (class 2, 1000 B) arrives at 0.423 s behind
/// class 2's 55 258 B and 10 216 B responses. MSF-RS* served most of the first one at the full
/// C while class 2 was alone, and finishes transaction 6 at 0.498 s; in the sub-link model every
/// response gets only c = C/W+, and SC_2 has grown by 65 474 B / 1, so classes 0 and 1 are
/// released first as long as they have requests, and transaction 6 finishes at 1.824 s. Eq. 4.9
/// bounds d_k* from below by charging class i's earlier transactions of the same active period
/// (and the others' `m·L_i/r_i·r_j`) after a_k, as if MSF-RS* had not served any of them before
/// a_k; with the full C before a_k it has, so the difference of Eq. 4.8 and 4.9 is not a bound.
#[test]
fn theorem_4_1_is_exceeded_without_a_class_entering() {
    let arrivals: Vec<Arrival> = vec![
        (2, 0.028180352347952638, 55258),
        (1, 0.23452390066491968, 4661),
        (1, 0.23734314065058945, 54693),
        (2, 0.2421851557191337, 10216),
        (0, 0.3106027706139967, 21251),
        (1, 0.31583113634771776, 12110),
        (2, 0.42294084364124174, 1000),
        (0, 0.6605251436535281, 39324),
        (0, 0.6760022494340702, 1000),
        (1, 0.7583934878671125, 29524),
        (0, 0.8042404638567968, 45295),
        (1, 0.8352837081171455, 19680),
        (0, 0.8494843859440405, 25164),
        (0, 0.895366559038991, 22016),
        (0, 0.9751503879751388, 43114),
        (0, 1.3756368469256424, 1000),
        (0, 1.4094231804179178, 14340),
        (0, 1.689791434458872, 8282),
        (0, 1.7584233718442275, 4499),
    ];
    let (d, ideal, entered) = theorem_4_1_case(&[6.0, 2.0, 1.0], 3, &arrivals, 6);
    let class = arrivals[6].0;
    assert!(entered.iter().all(|&j| j == class), "{entered:?}");
    let bound = delay_bound(55_258.0, CAP_2MBPS, 3.0);
    assert!((bound - 1.326192).abs() < 1e-9, "bound {bound}");
    assert!((d - 1.82438).abs() < 1e-4 && (ideal - 0.49819).abs() < 1e-4);
    // Over the bound by more than the property tests' 1e-6 s allowance for rounding.
    assert!(d - ideal > bound + 1e-6, "excess {}", d - ideal);
}

/// A counterexample to Theorem 4.2 found by its property test in this project's CI: 4 : 2 : 1
/// classes, W+ = 2, 2 Mb/s. While classes 0 and 1 are both backlogged their normalised services
/// drift apart by 69 218.5 B, half a byte more than `W+·L_1+/w_1 + L_0+/w_0` = 2·55 408/2 +
/// 55 240/4 = 69 218 B. Service is counted in exact bytes (1000 B pieces and the remainders), so
/// this is not floating-point rounding but one byte of class 1 beyond the bound; the cause was
/// not analysed further (the proof shares Eq. 4.8-4.9's accounting with Theorem 4.1's, whose gaps
/// are documented above). The test pins the amount so that a change in the model shows.
#[test]
fn theorem_4_2_is_exceeded_by_a_byte() {
    let arrivals: Vec<Arrival> = vec![
        (0, 0.13443361173375953, 48287),
        (2, 0.17052679819516112, 20325),
        (0, 0.17156882143409227, 22258),
        (1, 0.26781100016540094, 23293),
        (0, 0.2984445913696643, 55240),
        (1, 0.36391253841177723, 6580),
        (1, 0.42753849519427367, 13225),
        (1, 0.49161130355043103, 4412),
        (2, 0.5834654112025722, 42629),
        (1, 0.6912702594458767, 4697),
        (0, 0.7771336580143967, 1000),
        (1, 0.9719794366057337, 55408),
        (1, 1.00951335435326, 54115),
        (1, 1.0880776023974381, 1000),
        (0, 1.452340588285895, 1000),
    ];
    let weights = [4.0, 2.0, 1.0];
    let (_, worst, _) = run_sublinks(&weights, 2, 250_000.0, 1000, &arrivals);
    let bound = fairness_bound(2.0, 55_240.0, 4.0, 55_408.0, 2.0);
    assert_eq!(bound, 69_218.0);
    assert_eq!(worst[0][1], 69_218.5);
}
