//! SURGE web traffic (Barford & Crovella 1998) as 001 Sec. 3.2 uses it for its short-lived
//! background (E5, E6): a user alternates between fetching a file over TCP and thinking.
//!
//! Distributions and parameters are 001's Table 1, with the printed typos corrected (spec 001
//! §3.1: `sqrt(2π)` for `sqrt(2x)`, `x^−(α+1)` for `x^−α+1`):
//!
//! - file size, body: lognormal `p(x) = exp(−(ln x − μ)²/(2σ²)) / (x σ sqrt(2π))`, μ = 9.375,
//!   σ = 1.318 (bytes; SURGE's paper is usually quoted with 9.357, the thesis' value is kept);
//! - file size, tail: Pareto `p(x) = α k^α x^−(α+1)`, k = 133 KB, α = 1.1;
//! - think time: Pareto with k = 1 s, α = 1.5.
//!
//! The thesis does not give the body/tail split. Reading chosen: a size is drawn from the body,
//! and one above `k` is replaced by a Pareto draw (which is ≥ `k`), so the body governs the
//! small files and the tail the large ones, continuous at `k` (SURGE's tail starts at 133 KB).
//! Sizes are capped at [`SurgeConfig::max_file`], since α = 1.1 has no finite variance and one
//! draw could otherwise outlast the run.
//!
//! Each file is a short TCP transfer: the flow's one TCP sender is offered the file's bytes and
//! starts it from a fresh window (initial window, threshold at the maximum window), as a new
//! connection would (without the SYN round trip; the thesis' SURGE connections are new TCP
//! connections). The think time starts when the file is fully acknowledged.
//!
//! Under PTCP (`congestion = { ptcp = { group = ... } }`, 001 Sec. 3.3.2: "five connections are
//! long-lived connections and the remaining five connections are short-lived connections", all
//! under the multi-connection mechanism) each file is a member connection of the named
//! aggregate: it joins `N_pm` with its first segment and leaves it when the file is fully
//! acknowledged ([`tfcc_core::tcp::aggregate::Aggregate::close`]), as the proxy of 001 Sec. 2.3
//! sees a connection open and close. Its ACKs count in the aggregate's slots; its window grows
//! by the aggregate's `k` in congestion avoidance (slow start stays Reno's, 001 Sec. 2.2).

use serde::Deserialize;
use tfcc_core::endpoint::{Endpoint, Sender, Stats};
use tfcc_core::tcp::TcpSender;
use tfcc_core::{Dur, Packet, Time};

use crate::rng::SimRng;

/// SURGE's parameters (001 Table 1).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SurgeConfig {
    /// Lognormal body: mean of `ln(size in bytes)` (001 Table 1: 9.375).
    pub body_mu: f64,
    /// Lognormal body: standard deviation of `ln(size)` (001 Table 1: 1.318).
    pub body_sigma: f64,
    /// Pareto tail: scale `k` in bytes (001 Table 1: 133K).
    #[serde(deserialize_with = "tfcc_core::quantity::bytes_u64")]
    pub tail_k: u64,
    /// Pareto tail: shape α (001 Table 1: 1.1).
    pub tail_alpha: f64,
    /// Think time, Pareto scale `k` (001 Table 1: 1 s).
    pub think_k: Dur,
    /// Think time, Pareto shape α (001 Table 1: 1.5).
    pub think_alpha: f64,
    /// Largest file (10 MB: see the module documentation).
    #[serde(deserialize_with = "tfcc_core::quantity::bytes_u64")]
    pub max_file: u64,
}

impl Default for SurgeConfig {
    fn default() -> Self {
        SurgeConfig {
            body_mu: 9.375,             // 001 Table 1
            body_sigma: 1.318,          // 001 Table 1
            tail_k: 133_000,            // 001 Table 1, "133K"
            tail_alpha: 1.1,            // 001 Table 1
            think_k: Dur::from_secs(1), // 001 Table 1
            think_alpha: 1.5,           // 001 Table 1
            max_file: 10_000_000,       // see the module doc
        }
    }
}

impl SurgeConfig {
    /// The field names, for a loader sharing one `params` table with the TCP underneath.
    pub const FIELDS: &'static [&'static str] = &[
        "body_mu",
        "body_sigma",
        "tail_k",
        "tail_alpha",
        "think_k",
        "think_alpha",
        "max_file",
    ];

    /// Checks every field; the message names the first bad one (`field: why`).
    pub fn validate(&self) -> Result<(), String> {
        let pos = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("{name}: must be a positive number, got {v}"))
            }
        };
        if !self.body_mu.is_finite() {
            return Err("body_mu: must be a number".into());
        }
        pos("body_sigma", self.body_sigma)?;
        pos("tail_alpha", self.tail_alpha)?;
        pos("think_alpha", self.think_alpha)?;
        // One message per key: think_k = 0 and max_file = 0 were blamed on tail_k.
        if self.tail_k == 0 {
            return Err("tail_k: must be positive (bytes)".into());
        }
        if self.max_file == 0 {
            return Err("max_file: must be positive (bytes)".into());
        }
        if self.think_k.is_zero() {
            return Err("think_k: must be positive (at least 1ns)".into());
        }
        Ok(())
    }

    /// A Pareto draw with scale `k` and shape `alpha`, by inversion (`1 − u` in `(0, 1]`).
    fn pareto(rng: &mut SimRng, k: f64, alpha: f64) -> f64 {
        k / (1.0 - rng.uniform()).powf(1.0 / alpha)
    }

    /// One file size in bytes (at least 1).
    pub fn file_size(&self, rng: &mut SimRng) -> u64 {
        // Box–Muller: a standard normal from two uniforms.
        let (u1, u2) = (1.0 - rng.uniform(), rng.uniform());
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        let mut x = (self.body_mu + self.body_sigma * z).exp();
        if x > self.tail_k as f64 {
            x = Self::pareto(rng, self.tail_k as f64, self.tail_alpha);
        }
        (x.round() as u64).clamp(1, self.max_file)
    }

    /// One think time.
    pub fn think_time(&self, rng: &mut SimRng) -> Dur {
        let s = Self::pareto(rng, self.think_k.as_secs_f64(), self.think_alpha);
        Dur::from_secs_f64(s.min(1e6))
    }
}

/// A SURGE user over one TCP sender.
pub struct WebSender {
    cfg: SurgeConfig,
    tcp: TcpSender,
    rng: SimRng,
    /// New segments offered so far, the SYN included.
    offered: u64,
    /// Thinking until this time; `None` while a file is in transfer.
    thinking: Option<Time>,
    files: u64,
    file_bytes: u64,
}

impl WebSender {
    /// The first file starts with the flow.
    pub fn new(cfg: SurgeConfig, tcp: TcpSender, rng: SimRng) -> WebSender {
        let mut w = WebSender {
            cfg,
            tcp,
            rng,
            offered: u64::from(0u8),
            thinking: None,
            files: 0,
            file_bytes: 0,
        };
        if w.tcp.config().syn {
            w.offered = 1;
        }
        w.start_file(false);
        w
    }

    /// Files started and their bytes.
    pub fn files(&self) -> (u64, u64) {
        (self.files, self.file_bytes)
    }

    /// The TCP sender that carries the files.
    pub fn tcp(&self) -> &TcpSender {
        &self.tcp
    }

    /// The TCP sender, mutably (the simulator joins a PTCP user to its aggregate and feeds it
    /// the oracle).
    pub fn tcp_mut(&mut self) -> &mut TcpSender {
        &mut self.tcp
    }

    fn start_file(&mut self, fresh: bool) {
        let size = self.cfg.file_size(&mut self.rng);
        let seg = u64::from(self.tcp.config().segment_size.max(1));
        self.offered += size.div_ceil(seg);
        self.files += 1;
        self.file_bytes += size;
        if fresh {
            self.tcp.restart_window();
        }
        self.tcp.offer(Some(size));
        self.thinking = None;
    }

    /// Every offered segment sent and acknowledged: the file is done, think.
    fn check_done(&mut self, now: Time) {
        if self.thinking.is_some() {
            return;
        }
        let s = self.tcp.stats();
        let new_sent = s.packets_sent - s.retransmits;
        if new_sent >= self.offered && self.tcp.outstanding() == 0 {
            self.thinking = Some(now + self.cfg.think_time(&mut self.rng));
            // The connection closes: it leaves a PTCP aggregate's N_pm until the next file.
            if let Some(p) = self.tcp.ptcp_mut() {
                p.close();
            }
        }
    }
}

impl Endpoint for WebSender {
    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        self.tcp.on_packet(now, pkt);
        self.check_done(now);
    }
    fn on_timeout(&mut self, now: Time) {
        if self.thinking.is_some_and(|t| now >= t) {
            self.start_file(true);
        }
        self.tcp.on_timeout(now);
    }
    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.tcp.poll_transmit(now)
    }
    fn next_timeout(&self) -> Option<Time> {
        match (self.thinking, self.tcp.next_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn stats(&self) -> Stats {
        let mut s = self.tcp.stats();
        if self.thinking.is_some() {
            s.mode = "think";
        }
        s
    }
}

impl Sender for WebSender {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_scale_names_its_own_key() {
        let err = |f: fn(&mut SurgeConfig)| {
            let mut c = SurgeConfig::default();
            f(&mut c);
            c.validate().unwrap_err()
        };
        assert_eq!(err(|c| c.tail_k = 0), "tail_k: must be positive (bytes)");
        assert_eq!(
            err(|c| c.max_file = 0),
            "max_file: must be positive (bytes)"
        );
        assert_eq!(
            err(|c| c.think_k = Dur::ZERO),
            "think_k: must be positive (at least 1ns)"
        );
    }

    #[test]
    fn sizes_follow_the_lognormal_body_with_a_pareto_tail() {
        let cfg = SurgeConfig::default();
        let mut rng = SimRng::named(1, "surge-test");
        let n = 100_000;
        let mut sizes: Vec<u64> = (0..n).map(|_| cfg.file_size(&mut rng)).collect();
        sizes.sort_unstable();
        // Median of the body: exp(μ) = 11 800 B (the tail only moves sizes above 133 KB).
        let median = sizes[n / 2] as f64;
        assert!(
            (median / 9.375f64.exp() - 1.0).abs() < 0.03,
            "median {median}"
        );
        // P(size > 133 KB) is the body's: P(Z > (ln 133000 − 9.375)/1.318) ≈ 3.3 %.
        let above = sizes.iter().filter(|&&s| s >= 133_000).count() as f64 / n as f64;
        assert!((above - 0.033).abs() < 0.004, "{above}");
        // Above k the tail is Pareto(1.1): P(X > 10k | X > k) = 10^−1.1 ≈ 7.9 %.
        let big = sizes.iter().filter(|&&s| s >= 1_330_000).count() as f64;
        let frac = big / (above * n as f64);
        assert!((frac - 0.079).abs() < 0.02, "{frac}");
    }

    #[test]
    fn think_times_are_pareto_from_one_second() {
        let cfg = SurgeConfig::default();
        let mut rng = SimRng::named(2, "surge-test");
        let v: Vec<f64> = (0..50_000)
            .map(|_| cfg.think_time(&mut rng).as_secs_f64())
            .collect();
        assert!(v.iter().all(|&x| x >= 1.0 - 1e-9));
        // P(X > 4 s) = 4^−1.5 = 1/8.
        let p = v.iter().filter(|&&x| x > 4.0).count() as f64 / v.len() as f64;
        assert!((p - 0.125).abs() < 0.01, "{p}");
    }

    #[test]
    fn a_web_transfer_in_a_group_counts_in_n_pm_while_active() {
        use tfcc_core::endpoint::Endpoint;
        use tfcc_core::tcp::aggregate::{self, Aggregate};
        use tfcc_core::tcp::{Congestion, PtcpConfig, TcpConfig, TcpSink, Variant};
        // One long-lived member (index 0, driven by hand) and one SURGE user whose files run
        // under PTCP in the same aggregate (001 Sec. 3.3.2).
        let pc = PtcpConfig {
            group: Some("proxy".into()),
            estimator: tfcc_core::tcp::EstimatorKind::Oracle,
            ..PtcpConfig::default()
        };
        let cfg = TcpConfig {
            variant: Variant::Sack,
            congestion: Congestion::Ptcp(pc.clone()),
            ..TcpConfig::default()
        };
        let agg = Aggregate::shared(pc, cfg.segment_size);
        let long = aggregate::lock(&agg).join();
        let mut tcp = TcpSender::new(cfg.clone());
        tcp.ptcp_mut().unwrap().join(agg.clone());
        let mut sink = TcpSink::new(&cfg);
        let mut web = WebSender::new(SurgeConfig::default(), tcp, SimRng::named(7, "surge-group"));
        let n_pm = |now: Time| aggregate::lock(&agg).active(now, long).n;
        // Before the user's first segment only the long-lived member is active.
        assert_eq!(n_pm(Time::ZERO), 1);
        // Loop the user's packets through the sink, one round trip per 10 ms, until its first
        // file is acknowledged: N_pm is 2 while the transfer runs.
        let mut now = Time::ZERO;
        let mut active_rounds = 0;
        while web.stats().mode != "think" {
            assert!(
                now < Time::ZERO + Dur::from_secs(30),
                "the file never finished"
            );
            let mut acks = Vec::new();
            let mut data = false;
            while let Some(p) = web.poll_transmit(now) {
                // The first round is the SYN (no data: the member is not active yet).
                data |= p.size > cfg.header_size;
                sink.on_packet(now, &p);
                while let Some(a) = sink.poll_transmit(now) {
                    acks.push(a);
                }
            }
            if data {
                assert_eq!(n_pm(now), 2, "a transfer in flight at {now:?}");
                active_rounds += 1;
            }
            now += Dur::from_millis(10);
            for a in &acks {
                web.on_packet(now, a);
            }
            if web.next_timeout().is_some_and(|t| t <= now) {
                web.on_timeout(now);
            }
        }
        assert!(active_rounds >= 1);
        // The file is done: the user leaves N_pm at once, not group_idle (500 ms) later.
        assert_eq!(n_pm(now), 1);
        // Its next file brings it back with the first new segment.
        let mut next = now;
        while web.stats().mode == "think" {
            next = web.next_timeout().expect("think time");
            web.on_timeout(next);
        }
        assert_eq!(n_pm(next), 1);
        assert!(web.poll_transmit(next).is_some());
        assert_eq!(n_pm(next), 2);
    }

    #[test]
    fn config_validates_and_reads_from_params() {
        let c: SurgeConfig = toml::from_str("tail_k = \"133KB\"\nthink_k = \"1s\"").unwrap();
        assert_eq!(c.tail_k, 133_000);
        assert_eq!(c.validate(), Ok(()));
        let bad = SurgeConfig {
            tail_alpha: 0.0,
            ..SurgeConfig::default()
        };
        assert!(bad.validate().unwrap_err().starts_with("tail_alpha"));
    }
}
