//! RTT estimators: TFRC's RTT and sqrt-RTT EWMAs (004 Sec. 3.3, 3.6.4) and TCP's SRTT/RTTVAR/RTO
//! as ns-2.35's Agent/TCP computes it, or exactly as RFC 6298 states it.
//!
//! Two unrelated estimators share this file because both turn RTT samples into the numbers a
//! protocol acts on:
//!
//! - [`TfrcRtt`]: the low-gain EWMA of 004 Eq. 3.2 that feeds the throughput equation, plus the
//!   EWMA of `sqrt(sample)` of Eq. 3.18 and the inter-packet-space modulation factor of Eq. 3.19.
//!   TFRC does not use RTTVAR: its `t_RTO` is a multiple of the smoothed RTT (004 Eq. 3.3, see
//!   [`crate::equation::Equation::rto`]).
//! - [`TcpRtt`]: Jacobson/Karels SRTT and RTTVAR (004 Eqs. 2.2–2.4, RFC 6298 §2) with the clock
//!   ticks, fixed-point shifts, clamps and back-off rules of ns-2.35 `tcp/tcp.cc`
//!   (`rtt_update`, `rtt_timeout`, `rtt_backoff`) and the defaults of `tcl/lib/ns-default.tcl`,
//!   so the TCP baselines time out when ns-2's do.
//!
//! Samples arrive as integer [`Dur`]; the estimates come out as [`Dur`] (and `f64` seconds where
//! an equation wants them).

use crate::time::{Dur, Time};
use thiserror::Error;

/// A configuration value of an RTT estimator is outside its domain.
#[derive(Clone, Copy, Debug, Error, PartialEq)]
pub enum RttConfigError {
    /// The EWMA gain must lie in `(0, 1]`.
    #[error("rtt: beta must be in (0, 1], got {0}")]
    Beta(f64),
    /// `min_rto` exceeds `max_rto`.
    #[error("rtt: min_rto ({min}) exceeds max_rto ({max})")]
    RtoBounds { min: Dur, max: Dur },
    /// The tick must be positive when samples are quantised in ticks.
    #[error("rtt: tick must be > 0 in ns-2 mode")]
    ZeroTick,
    /// The fixed-point shifts must satisfy `1 <= rttvar_bits <= srtt_bits <= 16`.
    #[error("rtt: need 1 <= rttvar_bits <= srtt_bits <= 16, got srtt_bits {srtt_bits}, rttvar_bits {rttvar_bits}")]
    Shifts { srtt_bits: u32, rttvar_bits: u32 },
    /// `rttvar_exp` above 16 makes the RTO meaningless.
    #[error("rtt: rttvar_exp must be <= 16, got {0}")]
    RttvarExp(u32),
    /// The back-off cap must be at least 1 (no back-off).
    #[error("rtt: max_backoff must be >= 1")]
    MaxBackoff,
    /// The RTT sample floor must be positive.
    #[error("rtt: min_rtt_sample must be > 0")]
    MinSample,
}

/// The default floor of an RTT sample, [`TfrcRttConfig::min_sample`]: 1 µs.
///
/// RFC 5348 §4.3 step 2 computes `R_sample = (t_now − t_recvdata) − t_delay` and says nothing
/// of a result `<= 0`, which is no round-trip time: it arises when the receiver's holding delay
/// `t_delay` covers the whole measured interval (a zero-delay path, a receiver that rounds its
/// holding delay up, a corrupt report). Fed to the estimators as it stands, a zero sample made
/// the smoothed RTT 0 (so `s/R` infinite), the ISM factor 0 and every RTT-derived timer 0.
/// tfcc floors every sample at this value rather than discarding it: a discarded first sample
/// would leave a sender whose reports all carry such a delay without any RTT, probing at its
/// initial one packet per second for ever, while a floored one lets it start and the EWMA
/// (`β` = 0.05) shrinks the weight of one wrong sample at once. The floor is the time base's
/// smallest meaningful granularity rather than its 1 ns unit: no real path (loopback included,
/// tens of µs) has an RTT below 1 µs, so no valid sample is changed, yet `s/R` stays bounded
/// (1460 B per µs). Linux's CCID-3 (RFC 4342 TFRC) replaces a non-positive sample by 100 µs
/// (`DCCP_SANE_RTT_MIN`); set the field to that to follow it.
pub const DEFAULT_MIN_RTT_SAMPLE: Dur = Dur::from_micros(1);

// ---------------------------------------------------------------------------------------------
// TFRC
// ---------------------------------------------------------------------------------------------

/// Parameters of [`TfrcRtt`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TfrcRttConfig {
    /// `β`, the gain of the RTT EWMA (004 Eq. 3.2) and of the sqrt-RTT EWMA (Eq. 3.18, "the same
    /// β"). 004 Sec. 4.8.1 picks 0.05 as "a reasonable compromise" between stability and
    /// responsiveness after testing 0.01 (much slower, E9); ns-2's TFRC agent has `df_ = 0.95`,
    /// the weight of the old value, i.e. the same β. Default 0.05.
    pub beta: f64,
    /// The smallest RTT sample the estimator takes: a sample below it (in particular an
    /// RFC 5348 §4.3 `R_sample <= 0`, which the sender's saturating subtraction turns into 0) is
    /// raised to it, so neither the smoothed RTT nor the latest sample is ever 0. Default
    /// [`DEFAULT_MIN_RTT_SAMPLE`] (1 µs), whose doc gives the reasoning; must be > 0.
    pub min_sample: Dur,
}

impl Default for TfrcRttConfig {
    fn default() -> Self {
        TfrcRttConfig {
            beta: 0.05,                         // 004 Sec. 4.8.1
            min_sample: DEFAULT_MIN_RTT_SAMPLE, // RFC 5348 §4.3 is silent; see the constant
        }
    }
}

impl TfrcRttConfig {
    /// Checks `β ∈ (0, 1]` and `min_sample > 0`.
    pub fn validate(&self) -> Result<(), RttConfigError> {
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err(RttConfigError::Beta(self.beta));
        }
        if self.min_sample.is_zero() {
            return Err(RttConfigError::MinSample);
        }
        Ok(())
    }
}

/// TFRC's sender-side RTT estimate (004 Sec. 3.3) and ISM factor (004 Sec. 3.6.4).
///
/// The state is kept in `f64` (nanoseconds and sqrt-seconds): an EWMA with `β = 0.01` rounded to
/// whole nanoseconds at every step would stop moving up to `0.5/β` = 50 ns short of its target,
/// and the float operations used (`+`, `*`, `sqrt`) are correctly rounded, so runs stay
/// bit-for-bit reproducible.
#[derive(Clone, Debug)]
pub struct TfrcRtt {
    beta: f64,
    /// [`TfrcRttConfig::min_sample`], at least 1 ns.
    min_sample: Dur,
    /// Smoothed RTT in nanoseconds (Eq. 3.2); meaningful once `latest` is `Some`.
    avg_ns: f64,
    /// Smoothed `sqrt(RTT)` in sqrt-seconds (Eq. 3.18).
    sqrt_avg: f64,
    latest: Option<Dur>,
    samples: u64,
    /// Samples raised to `min_sample`.
    floored: u64,
}

impl TfrcRtt {
    /// A new estimator with no samples. A `β` outside `(0, 1]` is clamped into it (NaN becomes
    /// the default 0.05) and a zero `min_sample` is made 1 ns, so a bad configuration cannot
    /// freeze or blow up the estimate; loaders call [`TfrcRttConfig::validate`] to reject it
    /// instead.
    pub fn new(cfg: TfrcRttConfig) -> Self {
        let beta = if cfg.beta.is_nan() {
            TfrcRttConfig::default().beta
        } else {
            cfg.beta.clamp(f64::MIN_POSITIVE, 1.0)
        };
        TfrcRtt {
            beta,
            min_sample: cfg.min_sample.max(Dur(1)),
            avg_ns: 0.0,
            sqrt_avg: 0.0,
            latest: None,
            samples: 0,
            floored: 0,
        }
    }

    /// A new RTT sample (004 Eq. 3.1, `t_now − t_ts` with any receiver delay removed), raised
    /// to [`TfrcRttConfig::min_sample`] if below it. The first sample initialises both
    /// averages: 004 leaves the initial value open (spec 004 §2.4 \[Gap\]) and ns-2's TFRC
    /// agent does the same.
    pub fn on_sample(&mut self, sample: Dur) {
        if sample < self.min_sample {
            self.floored += 1;
        }
        let sample = sample.max(self.min_sample);
        let ns = sample.as_nanos() as f64;
        let root = sample.as_secs_f64().sqrt();
        if self.latest.is_none() {
            self.avg_ns = ns;
            self.sqrt_avg = root;
        } else {
            // Eq. 3.2: t_RTT = β·sample + (1 − β)·t_RTT; Eq. 3.18 likewise on sqrt(sample).
            self.avg_ns = self.beta * ns + (1.0 - self.beta) * self.avg_ns;
            self.sqrt_avg = self.beta * root + (1.0 - self.beta) * self.sqrt_avg;
        }
        self.latest = Some(sample);
        self.samples += 1;
    }

    /// The smoothed RTT `t_RTT`, rounded to the nanosecond; `None` before the first sample.
    pub fn smoothed(&self) -> Option<Dur> {
        // avg_ns is a convex combination of u64 samples: finite and in range, `as` cannot wrap.
        self.latest.map(|_| Dur(self.avg_ns.round() as u64))
    }

    /// The smoothed RTT in seconds, unrounded, for the throughput equation.
    pub fn smoothed_secs(&self) -> Option<f64> {
        self.latest.map(|_| self.avg_ns * 1e-9)
    }

    /// The most recent sample, `t_RTT_cur`: 004 Sec. 3.4 groups losses into loss events with it,
    /// and Eq. 3.19 modulates packet spacing with it.
    pub fn latest(&self) -> Option<Dur> {
        self.latest
    }

    /// The smoothed `sqrt(RTT)` of 004 Eq. 3.18, in sqrt-seconds.
    pub fn sqrt_smoothed(&self) -> Option<f64> {
        self.latest.map(|_| self.sqrt_avg)
    }

    /// The number of samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The number of samples that were below [`TfrcRttConfig::min_sample`] and raised to it.
    pub fn floored_samples(&self) -> u64 {
        self.floored
    }

    /// The floor applied to samples ([`TfrcRttConfig::min_sample`], at least 1 ns).
    pub fn min_sample(&self) -> Dur {
        self.min_sample
    }

    /// The inter-packet-space modulation factor `f = sqrt(t_RTT_sample) / t_RTT_sqrt`
    /// (004 Eq. 3.19): above 1 when the latest sample is above the average, which lengthens the
    /// gap (Eq. 3.20). It is 1 before the first sample. The average is never zero (samples are
    /// floored at [`TfrcRttConfig::min_sample`]); the guard keeps the ratio defined regardless.
    pub fn ism_factor(&self) -> f64 {
        match self.latest {
            Some(s) if self.sqrt_avg > 0.0 => s.as_secs_f64().sqrt() / self.sqrt_avg,
            _ => 1.0,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// TCP
// ---------------------------------------------------------------------------------------------

/// How [`TcpRtt`] quantises samples and forms the RTO.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpRttMode {
    /// ns-2.35 Agent/TCP: samples are counted in whole `tick`s (at least one), SRTT and RTTVAR
    /// are fixed-point tick counts, the RTO is `(srtt + 2^rttvar_exp·rttvar)` truncated to whole
    /// ticks, and never below two ticks (`rtt_timeout`).
    #[default]
    Ns2,
    /// RFC 6298 §2 without a tick: samples in nanoseconds, `RTO = SRTT + max(G, K·RTTVAR)` with
    /// `G = tick` and `K = 2^rttvar_exp`, then the same clamps and back-off as ns-2.
    Rfc6298,
}

/// Where the sender's tick clock starts ([`TcpRttConfig::tick_phase`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TickPhase {
    /// Ticks at [`TcpRttConfig::boot_time`] `+ k·tick` (0 unless set): every flow with the same
    /// `boot_time` counts the same boundaries. The default, tfcc's behaviour before the field.
    #[default]
    Fixed,
    /// ns-2.35's per-agent draw: `TcpAgent::reset` sets `boot_time_ = Random::uniform(tcp_tick_)`
    /// (`tcp/tcp.cc`), so each agent's ticks lie at an independent phase in `[0, tick)`. The
    /// simulator replaces `boot_time` with a draw from the flow's own random stream of the run's
    /// seed ([`TcpRttConfig::resolve_tick_phase`]), so a run stays deterministic; a driver that
    /// never resolves it keeps `boot_time`.
    Random,
}

/// When an armed retransmission timer expires ([`TcpRttConfig::tick_timer`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TickTimer {
    /// Exactly `RTO` after it is armed, as ns-2's Agent/TCP schedules its timer (a timer event at
    /// `now + rto`, whatever `tcpTick_`). The default.
    #[default]
    Off,
    /// BSD's slow timer (4.4BSD `tcp_slowtimo`, every 500 ms, the Dummynet hosts' TCP of 004
    /// Sec. 3.2): the timer holds the RTO as a count of `k = ⌈RTO/tick⌉` ticks, which every tick
    /// of the sender's clock decrements, and fires at the tick that brings it to zero. A timer
    /// armed at `t` therefore expires at the `k`-th tick boundary after `t`, somewhere in
    /// `(t + RTO − tick, t + RTO]`: BSD's two-tick minimum (`TCPTV_MIN`) fires 0.5-1 s after
    /// arming.
    Countdown,
    /// The first tick boundary at or after `t + RTO`: a timer that is never early and fires on
    /// the clock's ticks, `(t + RTO, t + RTO + tick)` on average half a tick late. A reading in
    /// which the RTO floor is a true floor; kept for comparison with [`TickTimer::Countdown`].
    AfterRto,
}

/// Parameters of [`TcpRtt`]. `Default` is ns-2.35's Agent/TCP (`tcl/lib/ns-default.tcl`,
/// `tcp/tcp.cc` v1.182), the TCP the theses' ns-2 experiments ran against. Deserialises by field
/// name (durations as `"200ms"` or seconds), every field optional, so a TCP's `params` can set
/// e.g. `rtt = { min_rto = "1s" }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpRttConfig {
    /// Sample quantisation and RTO formula. Default [`TcpRttMode::Ns2`].
    pub mode: TcpRttMode,
    /// The TCP clock granularity, ns-2 `tcpTick_` = 0.01 s (ns-default.tcl; it was 0.1 s before
    /// ns-2 changed the default "to reflect a changing reality"). 004 Sec. 2.1 puts real TCP
    /// timers between 10 and 500 ms. In [`TcpRttMode::Rfc6298`] it is RFC 6298's `G`.
    pub tick: Dur,
    /// Lower bound on the RTO, ns-2 `minrto_` = 0.2 s (ns-default.tcl, changed from 1 s on
    /// 2004/10/14 to match common implementations; RFC 6298 (2.4) says 1 s).
    pub min_rto: Dur,
    /// Upper bound on the RTO including back-off, ns-2 `maxrto_` = 60 s (ns-default.tcl;
    /// RFC 6298 (2.5) allows a maximum of at least 60 s).
    pub max_rto: Dur,
    /// The RTO before the first sample, ns-2 `rtxcur_init_` = 3.0 s (ns-default.tcl, changed from
    /// 6 s on 2006/01/21; RFC 2988 §2.1's 3 s. RFC 6298 (2.1) lowered it to 1 s).
    pub initial_rto: Dur,
    /// The back-off multiplier stops doubling at this value: ns-2 `rtt_backoff` doubles
    /// `t_backoff_` while it is below 64. Default 64. A cap that is not a power of two is
    /// reached exactly (`min(2·b, cap)`). With [`TcpRttConfig::rfc2988`] doubling continues
    /// past the cap while the RTO is below `max_rto`.
    pub max_backoff: u32,
    /// ns-2 `rfc2988_` = true (ns-default.tcl). Two effects, both in tcp.cc: `rtt_timeout`
    /// raises the base RTO to `min_rto` *before* multiplying by the back-off (Tom Kelly's
    /// RFC 2988 correction; false multiplies first and clamps after), and `rtt_backoff` keeps
    /// doubling past `max_backoff` while the backed-off RTO is still below `max_rto`.
    pub rfc2988: bool,
    /// ns-2 `T_SRTT_BITS` = 3: SRTT is kept scaled by 2^3, so its gain is 1/8 (004 Eq. 2.2,
    /// RFC 6298 α).
    pub srtt_bits: u32,
    /// ns-2 `T_RTTVAR_BITS` = 2: RTTVAR is kept scaled by 2^2, so its gain is 1/4 (004 Eq. 2.3,
    /// RFC 6298 β).
    pub rttvar_bits: u32,
    /// ns-2 `rttvar_exp_` = 2: the RTO adds 2^2 = 4 RTTVARs (004 Eq. 2.4, RFC 6298 K).
    pub rttvar_exp: u32,
    /// When the back-off multiplier exceeds this, SRTT is discarded and the next sample
    /// re-initialises SRTT and RTTVAR as a first sample does: ns-2 `rtt_backoff` clobbers
    /// `t_srtt_` once `t_backoff_ > 8`; RFC 6298 §5 allows clearing both "after backing off the
    /// timer multiple times". Default `Some(8)`; `None` never forgets.
    pub forget_after_backoff: Option<u32>,
    /// The phase of this sender's tick clock, used by [`TcpRtt::on_sample_sent_at`]. ns-2 draws
    /// `boot_time_ = Random::uniform(tcp_tick_)` in `TcpAgent::reset`, so different flows count
    /// tick boundaries at different instants; a driver that wants that draws it from the flow's
    /// own RNG stream. Default 0 (deterministic without an RNG).
    pub boot_time: Dur,
    /// Whether `boot_time` is taken as set ([`TickPhase::Fixed`], the default) or drawn per
    /// flow as ns-2 draws it ([`TickPhase::Random`]). The theses do not name the phase; ns-2.35
    /// draws it, so an ns-2-modelled TCP can opt in with `rtt = { tick_phase = "random" }`.
    pub tick_phase: TickPhase,
    /// Whether the retransmission timer fires only on the ticks of the sender's clock (phase
    /// `boot_time`, period `tick`), as a BSD TCP's does, and by which rule: see [`TickTimer`]
    /// and [`TcpRtt::deadline`]. Default [`TickTimer::Off`] (ns-2's exact timer). 004 does not
    /// describe its hosts' timers beyond Sec. 2.1's "granularity ranges from 10 to 500 ms"; the
    /// 004 scenarios model the Dummynet hosts' BSD TCP with [`TickTimer::Countdown`].
    pub tick_timer: TickTimer,
}

impl Default for TcpRttConfig {
    fn default() -> Self {
        TcpRttConfig {
            mode: TcpRttMode::Ns2,
            tick: Dur::from_millis(10),     // tcpTick_ 0.01
            min_rto: Dur::from_millis(200), // minrto_ 0.2
            max_rto: Dur::from_secs(60),    // maxrto_ 60
            initial_rto: Dur::from_secs(3), // rtxcur_init_ 3.0
            max_backoff: 64,                // rtt_backoff: t_backoff_ < 64
            rfc2988: true,                  // rfc2988_ true
            srtt_bits: 3,                   // T_SRTT_BITS 3
            rttvar_bits: 2,                 // T_RTTVAR_BITS 2
            rttvar_exp: 2,                  // rttvar_exp_ 2
            forget_after_backoff: Some(8),  // rtt_backoff: t_backoff_ > 8
            boot_time: Dur::ZERO,           // boot_time_ (random in ns-2)
            tick_phase: TickPhase::Fixed,   // boot_time as set; `Random` draws as ns-2
            tick_timer: TickTimer::Off,     // ns-2 schedules the timer at now + rto
        }
    }
}

impl TcpRttConfig {
    /// Resolves [`TickPhase::Random`]: `boot_time` becomes `draw(n)`, which must return a
    /// uniform integer in `0..n` for `n` = the tick in nanoseconds (ns-2's
    /// `Random::uniform(tcp_tick_)`, here in whole nanoseconds), and the phase becomes
    /// [`TickPhase::Fixed`] so a second call draws nothing. A fixed phase or a zero tick leaves
    /// the configuration as it is and never calls `draw`, so the default consumes no draw.
    pub fn resolve_tick_phase(&mut self, draw: impl FnOnce(u64) -> u64) {
        if self.tick_phase == TickPhase::Random && !self.tick.is_zero() {
            let n = self.tick.as_nanos();
            self.boot_time = Dur(draw(n).min(n - 1));
            self.tick_phase = TickPhase::Fixed;
        }
    }

    /// The exact RFC 6298 estimator: no tick quantisation, `G` = 1 ms (an arbitrary fine
    /// granularity), RFC 6298's `min RTO` = 1 s, initial RTO = 1 s, and its suggested 60 s cap.
    pub fn rfc6298() -> Self {
        TcpRttConfig {
            mode: TcpRttMode::Rfc6298,
            tick: Dur::from_millis(1),
            min_rto: Dur::from_secs(1),
            initial_rto: Dur::from_secs(1),
            ..TcpRttConfig::default()
        }
    }

    /// Checks the configuration; [`TcpRtt::new`] repairs what this rejects.
    pub fn validate(&self) -> Result<(), RttConfigError> {
        if self.min_rto > self.max_rto {
            return Err(RttConfigError::RtoBounds {
                min: self.min_rto,
                max: self.max_rto,
            });
        }
        if self.mode == TcpRttMode::Ns2 && self.tick.is_zero() {
            return Err(RttConfigError::ZeroTick);
        }
        if !(1 <= self.rttvar_bits && self.rttvar_bits <= self.srtt_bits && self.srtt_bits <= 16) {
            return Err(RttConfigError::Shifts {
                srtt_bits: self.srtt_bits,
                rttvar_bits: self.rttvar_bits,
            });
        }
        if self.rttvar_exp > 16 {
            return Err(RttConfigError::RttvarExp(self.rttvar_exp));
        }
        if self.max_backoff == 0 {
            return Err(RttConfigError::MaxBackoff);
        }
        Ok(())
    }

    /// The nearest valid configuration: bounds swapped into order, a zero tick made 1 ns, shifts
    /// and exponent clamped, a zero back-off cap made 1.
    fn repaired(mut self) -> Self {
        if self.min_rto > self.max_rto {
            self.max_rto = self.min_rto;
        }
        if self.tick.is_zero() && self.mode == TcpRttMode::Ns2 {
            self.tick = Dur(1);
        }
        self.srtt_bits = self.srtt_bits.clamp(1, 16);
        self.rttvar_bits = self.rttvar_bits.clamp(1, self.srtt_bits);
        self.rttvar_exp = self.rttvar_exp.min(16);
        self.max_backoff = self.max_backoff.max(1);
        self
    }
}

/// TCP's retransmission-timer state: SRTT, RTTVAR, the RTO and its exponential back-off.
///
/// Karn's rule (no samples from retransmitted segments) and the choice of which segment to time
/// are the caller's: ns-2 times one segment per RTT (`rtt_active_`/`rtt_seq_`).
#[derive(Clone, Debug)]
pub struct TcpRtt {
    cfg: TcpRttConfig,
    /// SRTT in units (ticks in ns-2 mode, nanoseconds in RFC 6298 mode) scaled by 2^srtt_bits:
    /// ns-2's `t_srtt_`. Zero means no estimate, as in ns-2.
    srtt_scaled: i128,
    /// RTTVAR in units scaled by 2^rttvar_bits: ns-2's `t_rttvar_`.
    rttvar_scaled: i128,
    /// The un-backed-off, unclamped RTO: ns-2's `t_rtxcur_`.
    rtxcur: Dur,
    /// The back-off multiplier: ns-2's `t_backoff_`.
    backoff: u32,
    /// The last sample in units: ns-2's `t_rtt_`.
    last_units: Option<i128>,
}

impl TcpRtt {
    /// A new estimator with no samples; its RTO is `initial_rto`. An invalid configuration is
    /// repaired (see [`TcpRttConfig::validate`]) rather than rejected, so this cannot fail.
    pub fn new(cfg: TcpRttConfig) -> Self {
        let cfg = cfg.repaired();
        TcpRtt {
            cfg,
            srtt_scaled: 0,
            rttvar_scaled: 0,
            rtxcur: cfg.initial_rto,
            backoff: 1,
            last_units: None,
        }
    }

    /// The configuration in use (after repair).
    pub fn config(&self) -> &TcpRttConfig {
        &self.cfg
    }

    /// The nanoseconds per estimator unit.
    fn unit_ns(&self) -> i128 {
        match self.cfg.mode {
            TcpRttMode::Ns2 => self.cfg.tick.as_nanos() as i128,
            TcpRttMode::Rfc6298 => 1,
        }
    }

    /// A valid RTT measurement, e.g. the echo of a timestamp (ns-2 `timestamps_ true`). In ns-2
    /// mode it is rounded to the nearest tick, as `t_rtt_ = int(tao/tcp_tick_ + 0.5)` does (here
    /// in exact integers, so a sample of exactly k + ½ ticks always rounds up). Resets the
    /// back-off, as ns-2's `newack` does when the timed segment is acknowledged.
    pub fn on_sample(&mut self, sample: Dur) {
        let units = match self.cfg.mode {
            TcpRttMode::Ns2 => {
                let tick = self.cfg.tick.as_nanos() as i128;
                (2 * sample.as_nanos() as i128 + tick) / (2 * tick)
            }
            TcpRttMode::Rfc6298 => sample.as_nanos() as i128,
        };
        self.update(units);
    }

    /// A valid RTT measurement of a segment sent at `sent` and acknowledged at `now`, quantised
    /// as ns-2's Agent/TCP does without timestamps (its default, `timestamps_ false`): the sample
    /// is the number of tick boundaries of this sender's clock (phase `boot_time`) crossed
    /// between the two instants, `int((tao + fmod(sendtime + boot_time_, tick)) / tick)`. In
    /// RFC 6298 mode it is simply `now − sent`. A `now` before `sent` counts as a zero sample.
    pub fn on_sample_sent_at(&mut self, sent: Time, now: Time) {
        let units = match self.cfg.mode {
            TcpRttMode::Ns2 => {
                let tick = self.cfg.tick.as_nanos() as i128;
                let boot = self.cfg.boot_time.as_nanos() as i128;
                let (s, n) = (
                    sent.as_nanos() as i128 + boot,
                    now.as_nanos() as i128 + boot,
                );
                (n.div_euclid(tick) - s.div_euclid(tick)).max(0)
            }
            TcpRttMode::Rfc6298 => now.saturating_since(sent).as_nanos() as i128,
        };
        self.update(units);
    }

    /// ns-2 `rtt_update` on a sample of `m` units, plus the back-off reset of `newack`.
    fn update(&mut self, m: i128) {
        let sb = self.cfg.srtt_bits;
        let rb = self.cfg.rttvar_bits;
        // ns-2: "if (t_rtt_ < 1) t_rtt_ = 1", so a sample is never below one tick.
        let m = m.max(1);
        self.last_units = Some(m);
        if self.srtt_scaled != 0 {
            // d = m − srtt; srtt += d/8 (in scaled form: srtt8 += d).
            let delta = m - (self.srtt_scaled >> sb);
            self.srtt_scaled += delta;
            if self.srtt_scaled <= 0 {
                self.srtt_scaled = 1;
            }
            // rttvar += (|d| − rttvar)/4 (scaled: rttvar4 += |d| − rttvar4/4).
            self.rttvar_scaled += delta.abs() - (self.rttvar_scaled >> rb);
            if self.rttvar_scaled <= 0 {
                self.rttvar_scaled = 1;
            }
        } else {
            // First sample (or first after SRTT was forgotten): SRTT = R, RTTVAR = R/2.
            self.srtt_scaled = m << sb;
            self.rttvar_scaled = m << (rb - 1);
        }
        let unit = self.unit_ns();
        let var_term = self.rttvar_scaled << (self.cfg.rttvar_exp + sb - rb);
        let rtxcur_ns = match self.cfg.mode {
            // ((rttvar4 << (exp + 1)) + srtt8) >> 3, whole ticks, times the tick.
            TcpRttMode::Ns2 => ((var_term + self.srtt_scaled) >> sb) * unit,
            // SRTT + max(G, K·RTTVAR), truncated to the nanosecond.
            TcpRttMode::Rfc6298 => {
                let g = (self.cfg.tick.as_nanos() as i128) << sb;
                (self.srtt_scaled + var_term.max(g)) >> sb
            }
        };
        self.rtxcur = Dur(rtxcur_ns.clamp(0, u64::MAX as i128) as u64);
        self.backoff = 1;
    }

    /// The retransmission timeout to arm now: the base RTO times the back-off, clamped as ns-2's
    /// `rtt_timeout` does (with `rfc2988`, `min_rto` applies to the base before the back-off;
    /// without, to the product), then to `[min_rto, max_rto]`. In ns-2 mode it is also at least two
    /// ticks, unless that would exceed `max_rto`.
    pub fn rto(&self) -> Dur {
        let (min, max) = (self.cfg.min_rto, self.cfg.max_rto);
        let b = self.backoff as u64;
        let mut t = if self.cfg.rfc2988 {
            self.rtxcur.max(min).saturating_mul(b)
        } else {
            self.rtxcur.saturating_mul(b).max(min)
        };
        t = t.min(max);
        if self.cfg.mode == TcpRttMode::Ns2 {
            t = t.max(self.cfg.tick.saturating_mul(2));
        }
        t.clamp(min, max)
    }

    /// The instant a retransmission timer armed at `now` expires: `now + rto()` unless
    /// [`TcpRttConfig::tick_timer`] puts it on the sender's clock ticks (boundaries at
    /// `boot_time + j·tick`). [`TickTimer::Countdown`]: the `⌈rto/tick⌉`-th boundary strictly
    /// after `now` (a tick at the arming instant itself does not count, the slow timer runs
    /// after the packet processing that armed it). [`TickTimer::AfterRto`]: the first boundary
    /// at or after `now + rto`. With a zero tick the timer is exact.
    pub fn deadline(&self, now: Time) -> Time {
        let rto = self.rto();
        let tick = self.cfg.tick.as_nanos() as i128;
        if self.cfg.tick_timer == TickTimer::Off || tick == 0 {
            return now.saturating_add(rto);
        }
        let boot = self.cfg.boot_time.as_nanos() as i128;
        let t = now.as_nanos() as i128 + boot;
        let r = rto.as_nanos() as i128;
        let boundary = match self.cfg.tick_timer {
            TickTimer::Countdown => {
                let k = ((r + tick - 1) / tick).max(1);
                (t.div_euclid(tick) + k) * tick
            }
            TickTimer::AfterRto => (t + r + tick - 1).div_euclid(tick) * tick,
            TickTimer::Off => unreachable!("handled above"),
        };
        Time((boundary - boot).clamp(0, u64::MAX as i128) as u64)
    }

    /// A retransmission timeout fired: double the back-off (ns-2 `rtt_backoff`, RFC 6298 (5.5)),
    /// up to `max_backoff`, or beyond it while the RTO is below `max_rto` when `rfc2988` is set;
    /// then forget SRTT if the back-off passed `forget_after_backoff`.
    pub fn backoff(&mut self) {
        let below_cap = self.backoff < self.cfg.max_backoff;
        if below_cap {
            self.backoff = self.backoff.saturating_mul(2).min(self.cfg.max_backoff);
        } else if self.cfg.rfc2988 && self.rto() < self.cfg.max_rto {
            // Past the cap only while the RTO still grows; stop at u32's end.
            if let Some(b) = self.backoff.checked_mul(2) {
                self.backoff = b;
            }
        }
        if let Some(limit) = self.cfg.forget_after_backoff {
            if self.backoff > limit && self.srtt_scaled != 0 {
                // ns-2 moves SRTT into RTTVAR and zeroes SRTT; the next sample overwrites both.
                let sb = self.cfg.srtt_bits;
                self.rttvar_scaled += self.srtt_scaled >> sb;
                self.srtt_scaled = 0;
            }
        }
    }

    /// Ends the back-off without a new sample (e.g. ns-2's `ts_resetRTO_`, or a protocol that
    /// restarts its timer for another reason).
    pub fn reset_backoff(&mut self) {
        self.backoff = 1;
    }

    /// The current back-off multiplier (1 when not backed off): ns-2's `backoff_`.
    pub fn backoff_factor(&self) -> u32 {
        self.backoff
    }

    /// The RTO before back-off and clamps: ns-2's `t_rtxcur_` (`initial_rto` before the first
    /// sample).
    pub fn base_rto(&self) -> Dur {
        self.rtxcur
    }

    /// SRTT at the estimator's full fixed-point precision (ns-2 traces truncate it to whole
    /// ticks); `None` before the first sample and after back-off made the estimator forget it.
    pub fn srtt(&self) -> Option<Dur> {
        (self.srtt_scaled != 0).then(|| self.scaled_to_dur(self.srtt_scaled, self.cfg.srtt_bits))
    }

    /// RTTVAR at full fixed-point precision; `None` whenever [`TcpRtt::srtt`] is.
    pub fn rttvar(&self) -> Option<Dur> {
        (self.srtt_scaled != 0)
            .then(|| self.scaled_to_dur(self.rttvar_scaled, self.cfg.rttvar_bits))
    }

    /// The last sample as the estimator used it (whole ticks in ns-2 mode): ns-2's `rtt_`.
    pub fn last_sample(&self) -> Option<Dur> {
        self.last_units.map(|u| self.scaled_to_dur(u, 0))
    }

    fn scaled_to_dur(&self, v: i128, bits: u32) -> Dur {
        let ns = (v * self.unit_ns()) >> bits;
        Dur(ns.clamp(0, u64::MAX as i128) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // ---- TFRC -----------------------------------------------------------------------------

    /// Reports until 0.9·r2 <= t_RTT <= 1.1·r2, starting from t_RTT = r1 (004 Sec. 4.8.1, E9).
    fn reports_to_converge(beta: f64, r1: Dur, r2: Dur) -> u32 {
        let mut est = TfrcRtt::new(TfrcRttConfig {
            beta,
            ..TfrcRttConfig::default()
        });
        est.on_sample(r1);
        assert_eq!(est.smoothed(), Some(r1));
        let mut n = 0;
        loop {
            est.on_sample(r2);
            n += 1;
            let t = est.smoothed().unwrap().as_nanos();
            if 10 * t >= 9 * r2.as_nanos() && 10 * t <= 11 * r2.as_nanos() {
                return n;
            }
            assert!(n < 10_000, "no convergence");
        }
    }

    #[test]
    fn e9_convergence_counts_match_004() {
        let r1 = Dur::from_millis(100);
        // spec 004 §3 E9: r2/r1 = 2 → 32 (β 0.05), 161 (β 0.01); r2/r1 = 0.5 → 45, 230.
        assert_eq!(reports_to_converge(0.05, r1, Dur::from_millis(200)), 32);
        assert_eq!(reports_to_converge(0.01, r1, Dur::from_millis(200)), 161);
        assert_eq!(reports_to_converge(0.05, r1, Dur::from_millis(50)), 45);
        assert_eq!(reports_to_converge(0.01, r1, Dur::from_millis(50)), 230);
        // The counts depend only on the ratio: the same at r1 = 37 ms.
        let r1 = Dur::from_millis(37);
        assert_eq!(reports_to_converge(0.05, r1, Dur::from_millis(74)), 32);
        assert_eq!(reports_to_converge(0.01, r1, Dur::from_micros(18_500)), 230);
    }

    #[test]
    fn tfrc_ewma_follows_eq_3_2_and_keeps_latest() {
        let mut est = TfrcRtt::new(TfrcRttConfig::default());
        assert_eq!(est.smoothed(), None);
        assert_eq!(est.ism_factor(), 1.0);
        est.on_sample(Dur::from_millis(100));
        est.on_sample(Dur::from_millis(300));
        // 0.05·300 + 0.95·100 = 110 ms.
        assert_eq!(est.smoothed(), Some(Dur::from_millis(110)));
        assert_eq!(est.latest(), Some(Dur::from_millis(300)));
        assert_eq!(est.samples(), 2);
    }

    #[test]
    fn ism_factor_is_sqrt_ratio_of_eq_3_19() {
        let mut est = TfrcRtt::new(TfrcRttConfig::default());
        est.on_sample(Dur::from_millis(100));
        assert_eq!(est.ism_factor(), 1.0);
        est.on_sample(Dur::from_millis(400));
        let avg = 0.05 * 0.4f64.sqrt() + 0.95 * 0.1f64.sqrt();
        assert!((est.sqrt_smoothed().unwrap() - avg).abs() < 1e-15);
        let f = 0.4f64.sqrt() / avg;
        assert!((est.ism_factor() - f).abs() < 1e-12);
        assert!((f - 1.904_76).abs() < 1e-5, "{f}");
        // A sample below the average shortens the gap.
        est.on_sample(Dur::from_millis(50));
        assert!(est.ism_factor() < 1.0);
    }

    #[test]
    fn bad_beta_is_reported_and_repaired() {
        assert!(TfrcRttConfig {
            beta: 0.0,
            ..TfrcRttConfig::default()
        }
        .validate()
        .is_err());
        assert!(TfrcRttConfig {
            beta: f64::NAN,
            ..TfrcRttConfig::default()
        }
        .validate()
        .is_err());
        assert!(TfrcRttConfig::default().validate().is_ok());
        let zero_floor = TfrcRttConfig {
            min_sample: Dur::ZERO,
            ..TfrcRttConfig::default()
        };
        assert_eq!(zero_floor.validate(), Err(RttConfigError::MinSample));
        // Repaired to 1 ns: a zero sample is never taken as it stands.
        let mut est = TfrcRtt::new(zero_floor);
        est.on_sample(Dur::ZERO);
        assert_eq!(est.smoothed(), Some(Dur(1)));
        let mut est = TfrcRtt::new(TfrcRttConfig {
            beta: 7.0,
            ..TfrcRttConfig::default()
        });
        est.on_sample(Dur::from_millis(10));
        est.on_sample(Dur::from_millis(20));
        // β clamped to 1: the average is the latest sample.
        assert_eq!(est.smoothed(), Some(Dur::from_millis(20)));
    }

    // ---- TCP ------------------------------------------------------------------------------

    fn ns2() -> TcpRtt {
        TcpRtt::new(TcpRttConfig::default())
    }

    /// Backs `t` off `n` times: the factor and the RTO in milliseconds after each.
    fn backoffs(t: &mut TcpRtt, n: usize) -> Vec<(u32, u64)> {
        (0..n)
            .map(|_| {
                t.backoff();
                (t.backoff_factor(), t.rto().as_nanos() / 1_000_000)
            })
            .collect()
    }

    #[test]
    fn initial_rto_is_three_seconds_and_backs_off() {
        let mut t = ns2();
        assert_eq!(t.rto(), Dur::from_secs(3));
        assert_eq!(t.srtt(), None);
        assert_eq!(t.rttvar(), None);
        t.backoff();
        assert_eq!(t.rto(), Dur::from_secs(6));
    }

    #[test]
    fn first_sample_sets_srtt_r_rttvar_half_r() {
        let mut t = ns2();
        t.on_sample(Dur::from_millis(100));
        // 10 ticks: srtt8 = 80, rttvar4 = 20, rtxcur = ((20 << 3) + 80) >> 3 = 30 ticks.
        assert_eq!(t.srtt(), Some(Dur::from_millis(100)));
        assert_eq!(t.rttvar(), Some(Dur::from_millis(50)));
        assert_eq!(t.rto(), Dur::from_millis(300));
        // A short RTT: 30 ms gives 90 ms, raised to min_rto.
        let mut t = ns2();
        t.on_sample(Dur::from_millis(30));
        assert_eq!(t.base_rto(), Dur::from_millis(90));
        assert_eq!(t.rto(), Dur::from_millis(200));
        // RTTVAR = R/2 quantised: 50 ms is 5 ticks, rttvar4 = 10, i.e. 25 ms exactly.
        let mut t = ns2();
        t.on_sample(Dur::from_millis(50));
        assert_eq!(t.rttvar(), Some(Dur::from_micros(25_000)));
    }

    #[test]
    fn second_sample_follows_jacobson_with_tick_truncation() {
        let mut t = ns2();
        t.on_sample(Dur::from_millis(100));
        t.on_sample(Dur::from_millis(200));
        // SRTT = 7/8·100 + 1/8·200 = 112.5, RTTVAR = 3/4·50 + 1/4·100 = 62.5,
        // SRTT + 4·RTTVAR = 362.5 ms, truncated by ns-2 to 36 ticks.
        assert_eq!(t.srtt(), Some(Dur::from_micros(112_500)));
        assert_eq!(t.rttvar(), Some(Dur::from_micros(62_500)));
        assert_eq!(t.rto(), Dur::from_millis(360));

        let mut x = TcpRtt::new(TcpRttConfig {
            min_rto: Dur::ZERO,
            ..TcpRttConfig::rfc6298()
        });
        x.on_sample(Dur::from_millis(100));
        x.on_sample(Dur::from_millis(200));
        assert_eq!(x.srtt(), Some(Dur::from_micros(112_500)));
        assert_eq!(x.rto(), Dur::from_micros(362_500));
    }

    #[test]
    fn samples_are_quantised_in_ticks() {
        let mut t = ns2();
        for (ms_x10, ticks) in [
            (1040, 10),
            (1049, 10),
            (1050, 11),
            (1051, 11),
            (40, 1),
            (0, 1),
        ] {
            t.on_sample(Dur::from_micros(ms_x10 * 100));
            assert_eq!(
                t.last_sample(),
                Some(Dur::from_millis(10 * ticks)),
                "{ms_x10}"
            );
        }
        // Without timestamps: tick boundaries crossed between send and ACK.
        let ms = Time::from_millis;
        let cases = [
            ((95, 195), 10),
            ((99, 101), 1),
            ((101, 109), 1),
            ((91, 189), 9),
            ((90, 190), 10),
        ];
        for ((s, n), ticks) in cases {
            t.on_sample_sent_at(ms(s), ms(n));
            assert_eq!(
                t.last_sample(),
                Some(Dur::from_millis(10 * ticks)),
                "{s}->{n}"
            );
        }
        // The phase of the sender's clock moves the boundaries.
        let mut t = TcpRtt::new(TcpRttConfig {
            boot_time: Dur::from_millis(2),
            ..TcpRttConfig::default()
        });
        t.on_sample_sent_at(ms(99), ms(101)); // 101..103 crosses no boundary: clamped to 1.
        assert_eq!(t.last_sample(), Some(Dur::from_millis(10)));
        t.on_sample_sent_at(ms(91), ms(189)); // 93..191 crosses 10 boundaries.
        assert_eq!(t.last_sample(), Some(Dur::from_millis(100)));
    }

    #[test]
    fn a_random_tick_phase_is_resolved_once_from_the_draw() {
        // The default is a fixed phase: nothing is drawn and boot_time stays 0.
        let mut c = TcpRttConfig::default();
        c.resolve_tick_phase(|_| panic!("the default draws nothing"));
        assert_eq!(c, TcpRttConfig::default());
        // `tick_phase = "random"` deserialises and takes boot_time from the draw in 0..tick.
        let mut c: TcpRttConfig = toml::from_str("tick_phase = \"random\"").unwrap();
        assert_eq!(c.tick_phase, TickPhase::Random);
        let mut asked = 0;
        c.resolve_tick_phase(|n| {
            asked = n;
            3_000_000
        });
        assert_eq!(asked, 10_000_000); // the 10-ms tick in ns
        assert_eq!(c.boot_time, Dur::from_millis(3));
        assert_eq!(c.tick_phase, TickPhase::Fixed);
        c.resolve_tick_phase(|_| panic!("resolved once"));
        // A draw out of range is kept below one tick.
        let mut c = TcpRttConfig {
            tick_phase: TickPhase::Random,
            ..TcpRttConfig::default()
        };
        c.resolve_tick_phase(|n| n + 5);
        assert_eq!(c.boot_time, Dur(9_999_999));
        // With boot_time 3 ms the sender's clock ticks at real instants 7, 17, 27, ... ms
        // (ns-2 counts boundaries of `t + boot_time_`): samples count those.
        let ms = Time::from_millis;
        let mut t = TcpRtt::new(TcpRttConfig {
            boot_time: Dur::from_millis(3),
            ..TcpRttConfig::default()
        });
        t.on_sample_sent_at(ms(6), ms(8)); // crosses 7
        assert_eq!(t.last_sample(), Some(Dur::from_millis(10)));
        t.on_sample_sent_at(ms(8), ms(16)); // crosses none: clamped to one tick
        assert_eq!(t.last_sample(), Some(Dur::from_millis(10)));
        t.on_sample_sent_at(ms(8), ms(27)); // crosses 17 and 27
        assert_eq!(t.last_sample(), Some(Dur::from_millis(20)));
        t.on_sample_sent_at(ms(6), ms(37)); // 7, 17, 27, 37
        assert_eq!(t.last_sample(), Some(Dur::from_millis(40)));
    }

    #[test]
    fn rto_is_clamped_to_max() {
        let mut t = ns2();
        t.on_sample(Dur::from_secs(20));
        assert_eq!(t.base_rto(), Dur::from_secs(60)); // 20 + 4·10 s, exactly the cap
        assert_eq!(t.rto(), Dur::from_secs(60));
        t.on_sample(Dur::from_secs(30));
        // srtt8 = 16000 + 1000, rttvar4 = 4000 + 1000 − 1000: (32000 + 17000) >> 3 = 6125 ticks.
        assert_eq!(t.base_rto(), Dur::from_millis(61_250));
        assert_eq!(t.rto(), Dur::from_secs(60));
    }

    #[test]
    fn backoff_doubles_up_to_64_without_rfc2988() {
        let mut t = TcpRtt::new(TcpRttConfig {
            rfc2988: false,
            ..TcpRttConfig::default()
        });
        t.on_sample(Dur::from_millis(100));
        let seen = backoffs(&mut t, 8);
        assert_eq!(
            seen,
            vec![
                (2, 600),
                (4, 1200),
                (8, 2400),
                (16, 4800),
                (32, 9600),
                (64, 19200),
                (64, 19200),
                (64, 19200)
            ]
        );
        // Back-off past 8 forgot SRTT; the next sample starts afresh and ends the back-off.
        assert_eq!(t.srtt(), None);
        t.on_sample(Dur::from_millis(50));
        assert_eq!(t.backoff_factor(), 1);
        assert_eq!(t.srtt(), Some(Dur::from_millis(50)));
        assert_eq!(t.rttvar(), Some(Dur::from_millis(25)));
        assert_eq!(t.rto(), Dur::from_millis(200));
    }

    #[test]
    fn rfc2988_backoff_continues_until_max_rto() {
        let mut t = ns2();
        t.on_sample(Dur::from_millis(100));
        let seen = backoffs(&mut t, 11);
        // 300 ms ·64 = 19.2 s < 60 s, so 128 (38.4 s) and 256 (76.8 s → 60 s); then it stops.
        assert_eq!(
            seen,
            vec![
                (2, 600),
                (4, 1200),
                (8, 2400),
                (16, 4800),
                (32, 9600),
                (64, 19200),
                (128, 38400),
                (256, 60000),
                (256, 60000),
                (256, 60000),
                (256, 60000)
            ]
        );
        t.reset_backoff();
        assert_eq!(t.rto(), Dur::from_millis(300));
    }

    #[test]
    fn rfc2988_applies_min_rto_before_backoff() {
        // Base RTO 90 ms (30 ms samples) under min_rto 200 ms.
        let mut a = ns2();
        let mut b = TcpRtt::new(TcpRttConfig {
            rfc2988: false,
            ..TcpRttConfig::default()
        });
        for t in [&mut a, &mut b] {
            t.on_sample(Dur::from_millis(30));
            t.backoff();
        }
        assert_eq!(a.rto(), Dur::from_millis(400)); // max(90, 200)·2
        assert_eq!(b.rto(), Dur::from_millis(200)); // max(90·2, 200)
    }

    #[test]
    fn rfc6298_mode_uses_granularity_term() {
        let mut t = TcpRtt::new(TcpRttConfig {
            min_rto: Dur::ZERO,
            tick: Dur::from_millis(10),
            ..TcpRttConfig::rfc6298()
        });
        t.on_sample(Dur::from_micros(100_003));
        // Not quantised: SRTT is the sample to the nanosecond.
        assert_eq!(t.srtt(), Some(Dur::from_micros(100_003)));
        for _ in 0..200 {
            t.on_sample(Dur::from_millis(100));
        }
        // RTTVAR has decayed to (almost) nothing, so RTO = SRTT + G.
        assert!(t.rttvar().unwrap() < Dur::from_micros(1));
        assert_eq!(t.rto(), Dur::from_millis(110));
        // Defaults of the constructor: RFC 6298's 1 s initial and minimum RTO.
        let t = TcpRtt::new(TcpRttConfig::rfc6298());
        assert_eq!(t.rto(), Dur::from_secs(1));
    }

    #[test]
    fn ns2_rto_floors_are_three_ticks_after_samples_and_two_before() {
        let mut t = TcpRtt::new(TcpRttConfig {
            min_rto: Dur::ZERO,
            initial_rto: Dur::from_millis(1),
            ..TcpRttConfig::default()
        });
        // Before any sample the 1 ms initial RTO is raised to two ticks (rtt_timeout).
        assert_eq!(t.rto(), Dur::from_millis(20));
        t.on_sample(Dur::from_millis(1)); // 1 tick: srtt8 = 8, rttvar4 = 2, rtxcur 3 ticks
        assert_eq!(t.rto(), Dur::from_millis(30));
        for _ in 0..50 {
            t.on_sample(Dur::from_millis(1));
        }
        // rttvar4 decays by rttvar4 >> 2, which is 0 at 2: the fixed point keeps 3 ticks.
        assert_eq!(t.rttvar(), Some(Dur::from_millis(5)));
        assert_eq!(t.rto(), Dur::from_millis(30));
    }

    #[test]
    fn invalid_config_is_reported_and_repaired() {
        let bad = TcpRttConfig {
            min_rto: Dur::from_secs(2),
            max_rto: Dur::from_secs(1),
            ..TcpRttConfig::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(RttConfigError::RtoBounds { .. })
        ));
        let t = TcpRtt::new(bad);
        assert_eq!(t.rto(), Dur::from_secs(2));
        let bad = TcpRttConfig {
            tick: Dur::ZERO,
            srtt_bits: 0,
            rttvar_bits: 9,
            max_backoff: 0,
            ..TcpRttConfig::default()
        };
        assert!(bad.validate().is_err());
        let mut t = TcpRtt::new(bad);
        t.on_sample(Dur::from_millis(5));
        t.backoff();
        assert!(t.rto() >= Dur::from_millis(200));
        assert!(TcpRttConfig::default().validate().is_ok());
        assert!(TcpRttConfig::rfc6298().validate().is_ok());
    }

    /// The BSD Reno of the 004 scenarios: 500 ms ticks, a 1 s (two-tick) floor.
    fn bsd(tick_timer: TickTimer, boot_ms: u64) -> TcpRtt {
        TcpRtt::new(TcpRttConfig {
            tick: Dur::from_millis(500),
            min_rto: Dur::from_secs(1),
            boot_time: Dur::from_millis(boot_ms),
            tick_timer,
            ..TcpRttConfig::default()
        })
    }

    /// The deadline of a timer armed at `now_ms`, in milliseconds.
    fn armed_at(t: &TcpRtt, now_ms: u64) -> u64 {
        t.deadline(Time::from_millis(now_ms)).as_nanos() / 1_000_000
    }

    #[test]
    fn tick_timer_off_is_exact() {
        let mut t = bsd(TickTimer::Off, 0);
        t.on_sample(Dur::from_millis(150));
        // One sample of 150 ms is one tick: SRTT 0.5 s, RTTVAR 0.25 s, RTO 1.5 s (three ticks).
        assert_eq!(t.rto(), Dur::from_millis(1500));
        assert_eq!(armed_at(&t, 10_123), 11_623);
        // ns-2's default TCP is unchanged.
        assert_eq!(TcpRttConfig::default().tick_timer, TickTimer::Off);
    }

    #[test]
    fn countdown_fires_on_the_kth_tick_after_arming() {
        let mut t = bsd(TickTimer::Countdown, 0);
        t.on_sample(Dur::from_millis(150));
        assert_eq!(t.rto(), Dur::from_millis(1500)); // k = 3 ticks
                                                     // Armed at 10.123 s: ticks at 10.5, 11.0 and 11.5 s; the third fires it (1.377 s later).
        assert_eq!(armed_at(&t, 10_123), 11_500);
        // Armed just before a tick: that tick counts as the first, 1.001 s later.
        assert_eq!(armed_at(&t, 10_499), 11_500);
        // Armed on a tick: that tick does not count.
        assert_eq!(armed_at(&t, 10_500), 12_000);
        // Backed off (3 s, k = 6): the sixth tick.
        t.backoff();
        assert_eq!(t.rto(), Dur::from_secs(3));
        assert_eq!(armed_at(&t, 10_123), 13_000);
        // The clock's phase shifts the ticks: boot_time 200 ms puts them at 0.3 s + j·0.5 s.
        let mut p = bsd(TickTimer::Countdown, 200);
        p.on_sample(Dur::from_millis(150));
        assert_eq!(armed_at(&p, 10_123), 11_300);
        // The two-tick floor (1 s) fires 0.5-1 s after arming, as BSD's TCPTV_MIN does.
        let two = TcpRtt::new(TcpRttConfig {
            initial_rto: Dur::from_secs(1),
            ..*bsd(TickTimer::Countdown, 0).config()
        });
        assert_eq!(armed_at(&two, 10_123), 11_000);
        assert_eq!(armed_at(&two, 10_499), 11_000);
        // Always within (now + rto − tick, now + rto].
        for now_ms in (0..3000).step_by(37) {
            let d = armed_at(&t, now_ms) - now_ms;
            assert!(d > 3000 - 500 && d <= 3000, "{now_ms}: {d}");
        }
    }

    #[test]
    fn after_rto_fires_on_the_first_tick_not_before_the_rto() {
        let mut t = bsd(TickTimer::AfterRto, 0);
        t.on_sample(Dur::from_millis(150));
        assert_eq!(armed_at(&t, 10_123), 12_000);
        assert_eq!(armed_at(&t, 10_500), 12_000);
        for now_ms in (0..3000).step_by(37) {
            let d = armed_at(&t, now_ms) - now_ms;
            assert!((1500..2000).contains(&d), "{now_ms}: {d}");
        }
    }

    #[test]
    fn tick_timer_is_read_from_params() {
        let c: TcpRttConfig =
            toml::from_str("tick = \"500ms\"\nmin_rto = \"1s\"\ntick_timer = \"countdown\"")
                .unwrap();
        assert_eq!(c.tick_timer, TickTimer::Countdown);
        let c: TcpRttConfig = toml::from_str("tick_timer = \"after_rto\"").unwrap();
        assert_eq!(c.tick_timer, TickTimer::AfterRto);
        assert!(toml::from_str::<TcpRttConfig>("tick_timer = \"on\"").is_err());
    }

    #[derive(Clone, Debug)]
    enum Op {
        Sample(u64),
        SentAt(u64, u64),
        Backoff,
        Reset,
    }

    fn any_op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u64..200_000_000_000).prop_map(Op::Sample),
            (0u64..100_000_000_000, 0u64..100_000_000_000).prop_map(|(a, b)| Op::SentAt(a, b)),
            Just(Op::Backoff),
            Just(Op::Reset),
        ]
    }

    fn any_config() -> impl Strategy<Value = TcpRttConfig> {
        (
            any::<bool>(),
            any::<bool>(),
            1u64..1_000_000_000,
            0u64..5_000_000_000,
            0u64..120_000_000_000,
            0u64..10_000_000_000,
            1u32..200,
        )
            .prop_map(|(ns2, rfc2988, tick, min, max, init, cap)| TcpRttConfig {
                mode: if ns2 {
                    TcpRttMode::Ns2
                } else {
                    TcpRttMode::Rfc6298
                },
                rfc2988,
                tick: Dur(tick),
                min_rto: Dur(min),
                max_rto: Dur(max.max(min)),
                initial_rto: Dur(init),
                max_backoff: cap,
                ..TcpRttConfig::default()
            })
    }

    proptest! {
        #[test]
        fn rto_stays_within_bounds(cfg in any_config(), ops in proptest::collection::vec(any_op(), 0..60)) {
            let mut t = TcpRtt::new(cfg);
            prop_assert!(t.rto() >= cfg.min_rto && t.rto() <= cfg.max_rto);
            for op in ops {
                match op {
                    Op::Sample(ns) => t.on_sample(Dur(ns)),
                    Op::SentAt(a, b) => t.on_sample_sent_at(Time(a), Time(b)),
                    Op::Backoff => t.backoff(),
                    Op::Reset => t.reset_backoff(),
                }
                let rto = t.rto();
                prop_assert!(rto >= cfg.min_rto && rto <= cfg.max_rto, "{} not in [{}, {}]", rto, cfg.min_rto, cfg.max_rto);
                prop_assert!(t.backoff_factor() >= 1);
            }
        }

        #[test]
        fn backoff_never_shrinks_the_rto(cfg in any_config(), sample in 1u64..10_000_000_000, n in 1usize..40) {
            let mut t = TcpRtt::new(cfg);
            t.on_sample(Dur(sample));
            let mut prev = t.rto();
            for _ in 0..n {
                t.backoff();
                let now = t.rto();
                prop_assert!(now >= prev);
                prev = now;
            }
        }

        /// Whatever the samples (0 included: RFC 5348 §4.3 `R_sample <= 0` saturates to 0) and
        /// the floor, TFRC's smoothed RTT, latest sample and sqrt-average are never 0, and
        /// TCP's SRTT is never 0 either.
        #[test]
        fn no_rtt_estimate_is_ever_zero(
            beta in 0.001f64..=1.0,
            min_ns in 0u64..1_000_000,
            samples in proptest::collection::vec(proptest::prop_oneof![Just(0u64), 0u64..10, 0u64..10_000_000_000], 1..50),
            cfg in any_config(),
        ) {
            let mut est = TfrcRtt::new(TfrcRttConfig { beta, min_sample: Dur(min_ns) });
            let mut tcp = TcpRtt::new(cfg);
            for &s in &samples {
                est.on_sample(Dur(s));
                tcp.on_sample(Dur(s));
                prop_assert!(est.smoothed().is_some_and(|r| r >= Dur(min_ns.max(1))), "{:?}", est.smoothed());
                prop_assert!(est.latest().is_some_and(|r| r >= Dur(min_ns.max(1))));
                prop_assert!(est.smoothed_secs().is_some_and(|r| r > 0.0));
                prop_assert!(est.sqrt_smoothed().is_some_and(|r| r > 0.0));
                prop_assert!(est.ism_factor() > 0.0);
                prop_assert!(tcp.srtt().is_some_and(|r| r > Dur::ZERO));
            }
        }

        #[test]
        fn tfrc_average_stays_between_extreme_samples(
            beta in 0.001f64..1.0,
            samples in proptest::collection::vec(1u64..10_000_000_000, 1..50),
        ) {
            let mut est = TfrcRtt::new(TfrcRttConfig { beta, ..TfrcRttConfig::default() });
            for &s in &samples {
                est.on_sample(Dur(s));
            }
            let (lo, hi) = (*samples.iter().min().unwrap(), *samples.iter().max().unwrap());
            let t = est.smoothed().unwrap().as_nanos();
            prop_assert!(t >= lo && t <= hi);
            let f = est.ism_factor();
            prop_assert!(f.is_finite() && f > 0.0);
        }
    }
}
