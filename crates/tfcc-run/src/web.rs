//! The `web` section of `summary.json`: what the access gateway of an `access-gateway` scenario
//! saw (003 Ch. 4), per class and for MSF-RS's window controller, in the measurement window.
//!
//! Rates are over whole seconds, as the gateway counts response bytes per second of the run
//! (`tfcc_sim::web::WebReport::class_bytes`); the per-second counts are kept too, so a metric
//! can measure any phase of a run (M1's four phases) from the summary alone.

use serde::{Deserialize, Serialize};
use tfcc_core::Time;
use tfcc_sim::scenario::WebInfo;
use tfcc_sim::web::WebReport;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WebSection {
    /// `msfrs` or `plain`.
    pub gateway: String,
    /// Requests generated over the run, and those still queued or in service at its end.
    pub requests: u64,
    pub unfinished: u64,
    /// Latency means count transactions that arrived in `[measure_from_s, latency_until_s)`.
    pub latency_until_s: f64,
    /// Mean latency `T_a = T_q + T_s` over every class (Definition 4.2), seconds.
    pub mean_latency_s: Option<f64>,
    pub transactions: u64,
    pub classes: Vec<WebClassEntry>,
    /// MSF-RS's WRC updates over the whole run (every T); empty for the plain gateway.
    pub windows: Vec<WindowEntry>,
    /// Mean and last W+ of the updates in the measurement window.
    pub mean_window_max: Option<f64>,
    pub final_window_max: Option<f64>,
    /// Mean of WRC's measured utilisation U (Eq. 4.2) over the updates in the window.
    pub mean_utilization: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WebClassEntry {
    pub class: usize,
    pub weight: f64,
    pub users: u64,
    /// Response bytes delivered to the class' clients, bits per second of the window.
    pub throughput_bps: f64,
    /// `throughput_bps / users` (003 §4.5.4's per-user share).
    pub per_user_bps: f64,
    /// Finished transactions that arrived in the latency window, and their mean latencies.
    pub transactions: u64,
    pub mean_latency_s: Option<f64>,
    pub mean_queued_s: Option<f64>,
    pub mean_service_s: Option<f64>,
    /// Response bytes delivered in each second of the run, from 0.
    pub bytes_per_second: Vec<u64>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct WindowEntry {
    pub t: f64,
    pub window_max: f64,
    pub utilization: f64,
    pub outstanding: u32,
    /// Whether the window bound at this update, so Eq. 4.3 recomputed W+ (003 Sec. 4.3.2); an
    /// update with `binding = false` left W+ where it was. Absent in summaries written before
    /// it was recorded, read back as false.
    #[serde(default)]
    pub binding: bool,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl WebSection {
    /// The section for a run measured over `[measure_from_s, sim_seconds)`.
    pub fn new(info: &WebInfo, report: &WebReport, measure_from_s: f64, sim_seconds: f64) -> Self {
        let from = Time::from_secs_f64(measure_from_s);
        let (a, b) = (measure_from_s.floor() as u64, sim_seconds.floor() as u64);
        let classes = (0..report.class_bytes.len())
            .map(|c| {
                let users = report.user_class.iter().filter(|&&x| x == c).count() as u64;
                let throughput_bps = report.class_rate(c, a, b);
                let l = report.latency(Some(c), from, info.latency_until);
                let some = |x: f64| (l.count > 0).then_some(x).and_then(finite);
                WebClassEntry {
                    class: c,
                    weight: info.weights.get(c).copied().unwrap_or(1.0),
                    users,
                    throughput_bps,
                    per_user_bps: throughput_bps / users.max(1) as f64,
                    transactions: l.count as u64,
                    mean_latency_s: some(l.active),
                    mean_queued_s: some(l.queued),
                    mean_service_s: some(l.service),
                    bytes_per_second: report.class_bytes[c].clone(),
                }
            })
            .collect();
        let all = report.latency(None, from, info.latency_until);
        let in_window: Vec<_> = report.windows.iter().filter(|w| w.time > from).collect();
        let mean = |f: fn(&&tfcc_sim::web::WindowSample) -> f64| {
            (!in_window.is_empty())
                .then(|| in_window.iter().map(f).sum::<f64>() / in_window.len() as f64)
                .and_then(finite)
        };
        WebSection {
            gateway: info.gateway.to_string(),
            requests: report.requests,
            unfinished: report.unfinished,
            latency_until_s: info.latency_until.as_secs_f64(),
            mean_latency_s: (all.count > 0).then_some(all.active).and_then(finite),
            transactions: all.count as u64,
            classes,
            windows: report
                .windows
                .iter()
                .map(|w| WindowEntry {
                    t: w.time.as_secs_f64(),
                    window_max: w.window_max,
                    utilization: w.utilization,
                    outstanding: w.outstanding,
                    binding: w.binding,
                })
                .collect(),
            mean_window_max: mean(|w| w.window_max),
            final_window_max: in_window.last().map(|w| w.window_max),
            mean_utilization: mean(|w| w.utilization),
        }
    }
}

#[cfg(test)]
mod tests {
    const SCENARIO: &str = r#"
duration = "30s"
measure_from = "10s"
sample_interval = "5s"
[topology]
kind = "access-gateway"
[web]
latency_exclude_last = "5s"
[[web.classes]]
weight = 4
think_time = "1s"
parallel = 4
[[web.classes]]
weight = 1
clients = 2
think_time = "1s"
parallel = 4
"#;

    #[test]
    fn an_access_gateway_run_reports_its_web_section_in_the_summary() {
        let dir = std::env::temp_dir().join(format!("tfcc-run-web-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("web.toml");
        std::fs::write(&path, SCENARIO).unwrap();
        let done = crate::run(&path, &[], None, &mut |_, _| true).unwrap();
        let plain = crate::run(&path, &["web.gateway=plain".into()], None, &mut |_, _| true);
        std::fs::remove_dir_all(&dir).ok();
        let w = done.summary.web.clone().expect("web section");
        assert_eq!(w.gateway, "msfrs");
        assert_eq!(w.latency_until_s, 25.0);
        assert_eq!(w.classes.len(), 2);
        assert_eq!((w.classes[0].users, w.classes[1].users), (4, 2));
        assert_eq!((w.classes[0].weight, w.classes[1].weight), (4.0, 1.0));
        for c in &w.classes {
            // The window rate is the per-second counts of seconds 10..30.
            let bytes: u64 = c.bytes_per_second.iter().skip(10).take(20).sum();
            assert!(
                (c.throughput_bps - bytes as f64 * 8.0 / 20.0).abs() < 1e-6,
                "{c:?}"
            );
            assert!(c.throughput_bps > 0.0 && c.transactions > 0, "{c:?}");
            assert_eq!(c.per_user_bps, c.throughput_bps / c.users as f64);
        }
        // One WRC update every 5 s; the mean is over those after 10 s.
        assert_eq!(w.windows.len(), 6);
        let after: Vec<f64> = w.windows[2..].iter().map(|x| x.window_max).collect();
        let mean = after.iter().sum::<f64>() / after.len() as f64;
        assert!((w.mean_window_max.unwrap() - mean).abs() < 1e-9);
        assert_eq!(w.final_window_max, after.last().copied());
        // The section survives summary.json (floats to within JSON's printing).
        let back: crate::Summary = serde_json::from_str(&done.summary.to_json()).unwrap();
        let b = back.web.expect("web section in the JSON");
        assert_eq!(b.classes, w.classes);
        assert_eq!(b.windows.len(), w.windows.len());
        for (x, y) in b.windows.iter().zip(&w.windows) {
            assert!((x.window_max - y.window_max).abs() < 1e-12 * y.window_max);
            assert_eq!(x.binding, y.binding);
        }
        // W+ moves only at binding updates (Eq. 4.3 is applied only when the window bound).
        for pair in w.windows.windows(2) {
            if !pair[1].binding {
                assert_eq!(pair[1].window_max, pair[0].window_max, "{pair:?}");
            }
        }
        // A summary written before `binding` was recorded still reads.
        let old = r#"{"t": 5.0, "window_max": 6.0, "utilization": 0.5, "outstanding": 3}"#;
        let e: super::WindowEntry = serde_json::from_str(old).unwrap();
        assert!(!e.binding);
        let p = plain.unwrap().summary.web.unwrap();
        assert_eq!(p.gateway, "plain");
        assert!(p.windows.is_empty() && p.mean_window_max.is_none());
    }

    #[test]
    fn other_scenarios_have_no_web_section() {
        let s: crate::Summary = serde_json::from_str(
            r#"{"scenario":"x","seed":1,"sim_seconds":1.0,"measure_from_s":0.0,"wall_seconds":0.0,
            "events":0,"peak_packets":0,"flows":[],"links":[],
            "metrics":{"fairness_theta":null,"jain_index":null}}"#,
        )
        .unwrap();
        assert!(s.web.is_none());
        assert!(!s.to_json().contains("\"web\""));
    }
}
