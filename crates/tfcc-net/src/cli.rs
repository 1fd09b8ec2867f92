//! `tfcc send` and `tfcc recv`: one flow between two hosts, with a rate report.
//!
//! Native like `tfcc run` (the `tfcc` console script hands these commands to Rust before
//! importing the Python CLI); also built as the `tfcc-net` binary for machines without the
//! Python package. Bad flags get one `error:` line and exit code 2.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;

use clap::Parser;
use tfcc_core::endpoint::{Receiver, Sender};
use tfcc_core::quantity::{parse_dur, parse_rate};
use tfcc_core::tfrc::{TfrcConfig, TfrcReceiver, TfrcSender};
use tfcc_core::tfwc::{TfwcConfig, TfwcReceiver, TfwcSender};
use tfcc_core::warc::{AnyRateEstimator, RateScheme, RateSender, RateSenderConfig, RoundReceiver};
use tfcc_core::{Dur, Rate, Time};
use tfcc_sim::flow::{CbrSender, CbrSink};
use tfcc_sim::rng::SimRng;
use tfcc_sim::video::{VideoConfig, VideoSource};
use tfcc_sim::CbrConfig;

use crate::stop_signal::{self, StopSignals};
use crate::video::VideoFeed;
use crate::wire::MAX_UDP_PAYLOAD;
use crate::{Protocol, Session, SessionConfig};

/// Send one flow to a `tfcc recv`, printing the rate once per report interval.
#[derive(Parser, Debug)]
#[command(name = "tfcc send", disable_version_flag = true)]
struct SendArgs {
    /// The receiver, HOST:PORT.
    to: String,
    /// Protocol: tfrc, tfwc, warc, tear, tfrcp, or cbr (uncontrolled, at --rate). WARC, TEAR
    /// and TFRCP (thesis 003) share one sender paced at the receiver's reports; the receiver
    /// runs the scheme, so give it the same --protocol (each end refuses the other scheme's
    /// packets).
    #[arg(long, default_value = "tfrc")]
    protocol: String,
    /// How long to send, e.g. 10s.
    #[arg(long, default_value = "10s", allow_hyphen_values = true)]
    duration: String,
    /// CBR's rate, e.g. 5Mbps [default: 1Mbps]. cbr only: the other protocols' rates are their
    /// congestion control's; a media application's own rate is --source video:RATE.
    // An Option, not a default, so that one given with tfrc or tfwc is seen and refused: it
    // was read by nobody, and the flow sent at whatever its controller allowed.
    #[arg(long, allow_hyphen_values = true)]
    rate: Option<String>,
    /// Bytes per datagram (TFRC's s; the rate schemes' packet, their rate being packets per
    /// RTT).
    #[arg(long, default_value_t = 1460)]
    packet_size: u32,
    /// Protocol preset: thesis or ns2, rfc5348 for TFRC, vic for TFWC [default: TFRC thesis (004), TFWC
    /// ns2 (Choi's ns-2.34 agent, which ran 002's simulations)]. Give the receiver the same.
    /// CBR, WARC, TEAR and TFRCP have none (003's parameters).
    #[arg(long)]
    preset: Option<String>,
    /// Local address to bind [default: 0.0.0.0:0, or [::]:0 for an IPv6 receiver].
    #[arg(long)]
    bind: Option<String>,
    /// Report interval, e.g. 1s (at least 1ms).
    #[arg(long, default_value = "1s", allow_hyphen_values = true)]
    report: String,
    /// Run the session under SCHED_FIFO at this priority (1-99; needs root or CAP_SYS_NICE),
    /// as the testbed does: on a busy machine normal priority leaves sends and reads
    /// milliseconds late.
    #[arg(long, value_name = "PRIO")]
    realtime: Option<i32>,
    /// What the application has to send: bulk (always backlogged), or video[:RATE[:FPS]], a
    /// codec handing the sender one frame every 1/FPS s at its real time (RATE default 1Mbps,
    /// FPS 25; GOP 12 with 3x I-frames, frame-size CV 0.2, as the simulator's video source);
    /// a frame's last datagram is short. With tfrc use --preset rfc5348 (at both ends) for
    /// RFC 5348's data-limited rules: the thesis' sender assumes it always has data. tfrc and
    /// tfwc only.
    #[arg(long, default_value = "bulk", value_name = "SOURCE")]
    source: String,
    /// A silent period of the video source, FROM-TO in session time (e.g. 3s-5s); repeat for
    /// more.
    #[arg(long, value_name = "FROM-TO")]
    pause: Vec<String>,
    /// Seed of the video source's frame sizes (0 to 9223372036854775807, as a scenario's)
    /// [default: 1]. A bulk source draws nothing, so it takes none.
    // A string for the message, as `tfcc run --seed` (tfcc_sim::scenario::parse_seed); an
    // Option so that one given with a bulk source is seen: it was read by nobody.
    #[arg(long, allow_negative_numbers = true)]
    seed: Option<String>,
}

/// Receive one flow from a `tfcc send`, printing the goodput once per report interval.
#[derive(Parser, Debug)]
#[command(name = "tfcc recv", disable_version_flag = true)]
struct RecvArgs {
    /// Protocol: tfrc, tfwc, warc, tear, tfrcp or cbr (must match the sender). For warc, tear
    /// and tfrcp this end runs the scheme (the receiver estimates the rate and reports it);
    /// packets of another of them are refused.
    #[arg(long, default_value = "tfrc")]
    protocol: String,
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0:5000")]
    listen: String,
    /// How long to listen, e.g. 15s.
    #[arg(long, default_value = "15s", allow_hyphen_values = true)]
    duration: String,
    /// Protocol preset: thesis or ns2, rfc5348 for TFRC, vic for TFWC [default: TFRC thesis (004), TFWC
    /// ns2 (Choi's ns-2.34 agent, which ran 002's simulations)]. Give the sender the same.
    /// CBR, WARC, TEAR and TFRCP have none (003's parameters).
    #[arg(long)]
    preset: Option<String>,
    /// Report interval, e.g. 1s (at least 1ms).
    #[arg(long, default_value = "1s", allow_hyphen_values = true)]
    report: String,
    /// Run the session under SCHED_FIFO at this priority (1-99; needs root or CAP_SYS_NICE),
    /// as the testbed does: on a busy machine normal priority leaves sends and reads
    /// milliseconds late.
    #[arg(long, value_name = "PRIO")]
    realtime: Option<i32>,
}

fn parse<T: Parser>(name: &str, argv: &[String]) -> Result<T, i32> {
    T::try_parse_from(std::iter::once(name.to_string()).chain(argv.iter().cloned())).map_err(|e| {
        let _ = e.print();
        if e.use_stderr() {
            2
        } else {
            0
        }
    })
}

fn fail(msg: &str) -> i32 {
    eprintln!("error: {msg}");
    2
}

/// The session configuration of `--realtime PRIO`, refused with a clear message when the
/// priority is out of range or the thread may not be made real-time.
fn session_config(realtime: Option<i32>) -> Result<SessionConfig, String> {
    if let Some(p) = realtime {
        if !(1..=99).contains(&p) {
            return Err(format!("--realtime {p}: SCHED_FIFO priorities are 1 to 99"));
        }
        // Try it here, so that the error names the flag rather than the session.
        let before = current_policy();
        crate::socket::set_realtime(p).map_err(|e| {
            format!(
                "--realtime {p}: cannot set SCHED_FIFO ({e}); run as root or with CAP_SYS_NICE, \
                 or drop --realtime"
            )
        })?;
        restore_policy(before);
    }
    Ok(SessionConfig {
        realtime,
        ..SessionConfig::default()
    })
}

fn current_policy() -> (i32, libc::sched_param) {
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid out-pointer.
    let policy = unsafe {
        libc::sched_getparam(0, &mut param);
        libc::sched_getscheduler(0)
    };
    (policy.max(0), param)
}

fn restore_policy((policy, param): (i32, libc::sched_param)) {
    // SAFETY: pid 0 is the calling thread; `param` came from sched_getparam.
    unsafe {
        libc::sched_setscheduler(0, policy, &param);
    }
}

fn dur(flag: &str, v: &str) -> Result<Dur, String> {
    match parse_dur(v) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err(format!("--{flag} {v}: must be positive")),
        Err(e) => Err(format!("--{flag} {v}: {e}")),
    }
}

/// The shortest `--report` interval: 1 ms. Each report is a printed line, and a shorter
/// interval starves the session: `--report 1ns` printed 7.7 million lines in 20 s and a 1 s
/// session did not end.
const MIN_REPORT: Dur = Dur::from_millis(1);

fn report_interval(v: &str) -> Result<Dur, String> {
    let d = dur("report", v)?;
    if d < MIN_REPORT {
        return Err(format!(
            "--report {v}: at least 1ms (one line per report), got {d}"
        ));
    }
    Ok(d)
}

fn tfrc_config(preset: Option<&str>, packet_size: Option<u32>) -> Result<TfrcConfig, String> {
    let preset = preset.unwrap_or("thesis");
    let mut cfg = TfrcConfig::preset(preset)
        .ok_or_else(|| format!("--preset {preset}: unknown (use thesis, ns2 or rfc5348)"))?;
    if let Some(s) = packet_size {
        cfg.packet_size = s;
    }
    cfg.validate().map_err(|e| e.to_string())?;
    Ok(cfg)
}

/// TFWC's configuration for `--preset`: Choi's ns-2.34 agent (`ns2`, the default), 002's
/// text (`thesis`) or the Vic code of 002 Ch. 6 (`vic`); goodput counts payload, after the TFWC data header.
fn tfwc_config(preset: Option<&str>, packet_size: Option<u32>) -> Result<TfwcConfig, String> {
    let preset = preset.unwrap_or("ns2");
    let mut cfg = TfwcConfig::preset(preset)
        .ok_or_else(|| format!("--preset {preset}: unknown (use ns2, thesis or vic)"))?;
    if let Some(s) = packet_size {
        cfg.packet_size = s;
    }
    cfg.header_size = tfcc_core::tfwc::wire::DATA_LEN as u32;
    cfg.validate().map_err(|e| e.to_string())?;
    Ok(cfg)
}

/// `TO` as one socket address. An address without a port (`::1`, `10.0.0.2`) is named as such:
/// the resolver's own words for it were "failed to lookup address information: Name or service
/// not known".
fn destination(to: &str) -> Result<SocketAddr, String> {
    if lacks_port(to) {
        return Err(format!("{to}: no port ({ADDR_FORM})"));
    }
    to.to_socket_addrs()
        .map_err(|e| format!("{to}: {e}"))?
        .next()
        .ok_or_else(|| format!("{to}: no address ({ADDR_FORM})"))
}

/// `--source` (and `--pause`): `None` for `bulk`, the video source's configuration for
/// `video[:RATE[:FPS]]`. The frame model is the simulator's ([`tfcc_sim::video`], one model
/// for both); the keys the flags do not set keep [`VideoConfig`]'s defaults.
fn video_source(source: &str, pauses: &[String]) -> Result<Option<VideoConfig>, String> {
    let mut parts = source.split(':');
    let cfg = match parts.next() {
        Some("bulk") if parts.clone().next().is_none() => None,
        Some("video") => {
            let mut c = VideoConfig::default();
            if let Some(r) = parts.next() {
                c.rate = parse_rate(r).map_err(|e| format!("--source {source}: rate {r}: {e}"))?;
            }
            if let Some(f) = parts.next() {
                c.fps = f
                    .parse()
                    .map_err(|_| format!("--source {source}: fps {f} is not a number"))?;
            }
            if parts.next().is_some() {
                return Err(format!(
                    "--source {source}: use video[:RATE[:FPS]], e.g. video:1Mbps:25"
                ));
            }
            for p in pauses {
                let (a, b) = p
                    .split_once('-')
                    .ok_or_else(|| format!("--pause {p}: use FROM-TO, e.g. 3s-5s"))?;
                let at = |v: &str| {
                    parse_dur(v)
                        .map(|d| Time::ZERO + d)
                        .map_err(|e| format!("--pause {p}: {e}"))
                };
                let (from, to) = (at(a)?, at(b)?);
                if to <= from {
                    // named here: VideoConfig's own check blamed `--source`
                    return Err(format!("--pause {p}: a pause must end after it starts"));
                }
                c.pauses.push((from, to));
            }
            c.validate()
                .map_err(|e| format!("--source {source}: {e}"))?;
            Some(c)
        }
        _ => {
            return Err(format!(
                "--source {source}: unknown (use bulk or video[:RATE[:FPS]])"
            ))
        }
    };
    if cfg.is_none() && !pauses.is_empty() {
        return Err("--pause: only a video --source pauses".into());
    }
    Ok(cfg)
}

/// `--preset` names a protocol's configuration; CBR and the rate schemes have none, so one
/// given for them is a mistake.
fn no_preset(protocol: &str, preset: Option<&str>) -> Result<(), String> {
    match preset {
        Some(p) => Err(format!(
            "--preset {p}: {protocol} has no presets (they are for tfrc and tfwc)"
        )),
        None => Ok(()),
    }
}

/// The rate scheme `--protocol` names, if it names one, refusing `--preset` with it.
fn rate_scheme(protocol: &str, preset: Option<&str>) -> Result<Option<RateScheme>, String> {
    let Some(scheme) = RateScheme::from_name(protocol) else {
        return Ok(None);
    };
    no_preset(protocol, preset)?;
    Ok(Some(scheme))
}

/// The rate schemes' sender configuration: the simulator's defaults (003's 1000-byte packets
/// aside: `packet_size` is the datagram), so that the flow paces and times out as `tfcc run`
/// runs one without `params`.
fn rate_sender_config(packet_size: u32) -> Result<RateSenderConfig, String> {
    let cfg = RateSenderConfig {
        packet_size,
        ..RateSenderConfig::default()
    };
    cfg.validate()
        .map_err(|e| format!("--packet-size {packet_size}: {e}"))?;
    Ok(cfg)
}

/// The first datagram of another rate scheme than this end's, named as a refusal: the two ends
/// would otherwise run a flow that is neither scheme (the sender paces at whatever the receiver
/// reports).
fn scheme_mismatch<E: tfcc_core::Endpoint>(s: &Session<E>) -> Result<(), String> {
    use crate::wire::WireError;
    use tfcc_core::warc::DecodeError;
    if let Some((
        from,
        crate::DropReason::Malformed(WireError::Warc(DecodeError::WrongScheme { got, expected })),
    )) = s.first_drop()
    {
        return Err(format!(
            "{from} runs {got}, this end {expected}: give both ends the same --protocol"
        ));
    }
    Ok(())
}

/// Ctrl-C (or SIGTERM) ends the flow early but still prints the summary, and the command exits
/// with 128 + the signal (130 for Ctrl-C), as a shell does. The handlers are installed for the
/// command and the previous ones put back after it.
fn with_stop_signals(f: impl FnOnce() -> i32) -> i32 {
    let code = {
        let _signals = StopSignals::install();
        f()
    };
    stop_signal::stopped_by().map_or(code, stop_signal::exit_status)
}

/// Runs the session to `end` or until a stop signal; returns whether it was stopped. A signal
/// cuts the session's wait short (`ppoll` returns `EINTR`), so this returns within a step.
fn run_slice<E: tfcc_core::Endpoint>(s: &mut Session<E>, end: Time) -> Result<bool, String> {
    while stop_signal::stopped_by().is_none() {
        let more = s.step(end).map_err(|e| e.to_string())?;
        scheme_mismatch(s)?;
        if !more {
            return Ok(false);
        }
    }
    eprintln!(
        "interrupted at {:.1} s; the summary covers the flow so far",
        s.now().as_secs_f64()
    );
    Ok(true)
}

/// `tfcc send ARGV`; returns the exit code.
pub fn send_command(argv: &[String]) -> i32 {
    let a: SendArgs = match parse("tfcc send", argv) {
        Ok(a) => a,
        Err(code) => return code,
    };
    with_stop_signals(|| match send(&a) {
        Ok(()) => 0,
        Err(e) => fail(&e),
    })
}

/// `tfcc recv ARGV`; returns the exit code.
pub fn recv_command(argv: &[String]) -> i32 {
    let a: RecvArgs = match parse("tfcc recv", argv) {
        Ok(a) => a,
        Err(code) => return code,
    };
    with_stop_signals(|| match recv(&a) {
        Ok(()) => 0,
        Err(e) => fail(&e),
    })
}

/// The wildcard address of `to`'s family: an IPv4 socket cannot send to an IPv6 receiver.
fn default_bind(to: &SocketAddr) -> &'static str {
    if to.is_ipv6() {
        "[::]:0"
    } else {
        "0.0.0.0:0"
    }
}

/// A socket that could not be made, named by its flag and address ("--listen 127.0.0.1:5000:
/// Address already in use"), not by the OS error alone.
fn bind_error(flag: &str, addr: &str, e: std::io::Error) -> String {
    if lacks_port(addr) {
        return format!("--{flag} {addr}: no port ({ADDR_FORM})");
    }
    format!("--{flag} {addr}: {e}")
}

/// How a socket address is written, for the messages that refuse one.
const ADDR_FORM: &str = "expected HOST:PORT, e.g. 10.0.0.2:5000 or [::1]:5000";

/// An address written without its port: a bare IPv4 or IPv6 address or a host name.
fn lacks_port(addr: &str) -> bool {
    addr.parse::<std::net::IpAddr>().is_ok() || !addr.contains(':')
}

/// `--packet-size` must fit a datagram and hold the protocol's header: a smaller packet would
/// go out as the bare header, larger than the `s` its rate is paced with.
fn check_packet_size(protocol: &str, size: u32) -> Result<(), String> {
    let header = match protocol {
        "tfrc" => tfcc_core::tfrc::wire::DATA_LEN,
        "tfwc" => tfcc_core::tfwc::wire::DATA_LEN,
        "cbr" => crate::wire::RAW_LEN,
        p if RateScheme::from_name(p).is_some() => tfcc_core::warc::wire::DATA_LEN,
        _ => return Ok(()), // the protocol check names it
    };
    if size > MAX_UDP_PAYLOAD {
        return Err(format!(
            "--packet-size {size}: larger than the largest UDP payload ({MAX_UDP_PAYLOAD} B)"
        ));
    }
    if (size as usize) < header {
        return Err(format!(
            "--packet-size {size}: smaller than the {protocol} header ({header} B)"
        ));
    }
    Ok(())
}

/// `--rate` is CBR's: TFRC, TFWC and the rate schemes send at what their congestion control
/// allows, so a rate given to them would be read by nobody. Refused rather than read as a cap: neither thesis 004
/// nor RFC 5348 (§4.3) gives TFRC one, nor 002 TFWC, and a media application's own rate is its
/// source's (`--source video:RATE`).
fn cbr_rate(protocol: &str, rate: Option<&str>) -> Result<Option<Rate>, String> {
    match (protocol, rate) {
        ("cbr", r) => {
            let r = r.unwrap_or("1Mbps");
            parse_rate(r)
                .map(Some)
                .map_err(|e| format!("--rate {r}: {e}"))
        }
        (p, Some(r)) if p == "tfrc" || p == "tfwc" || RateScheme::from_name(p).is_some() => {
            Err(format!(
                "--rate {r}: only cbr sends at a set rate; {protocol}'s rate is its congestion \
             control's (for a video stream's rate use --source video:RATE)"
            ))
        }
        _ => Ok(None), // no rate, or an unknown protocol, which the protocol check names
    }
}

fn send(a: &SendArgs) -> Result<(), String> {
    let duration = dur("duration", &a.duration)?;
    check_packet_size(&a.protocol, a.packet_size)?;
    let cbr_rate = cbr_rate(&a.protocol, a.rate.as_deref())?;
    let every = report_interval(&a.report)?;
    let seed = match &a.seed {
        Some(s) => tfcc_sim::scenario::parse_seed(s).map_err(|m| format!("--seed: {m}"))?,
        None => 1,
    };
    let to = destination(&a.to)?;
    let cfg = session_config(a.realtime)?;
    let bind = a
        .bind
        .clone()
        .unwrap_or_else(|| default_bind(&to).to_string());
    let video = video_source(&a.source, &a.pause)?;
    if let (None, Some(s)) = (&video, &a.seed) {
        return Err(format!(
            "--seed {s}: only a video --source draws (its frame sizes); a bulk source takes no seed"
        ));
    }
    if video.is_some() && a.protocol != "tfrc" && a.protocol != "tfwc" {
        return Err(format!(
            "--source {}: only tfrc and tfwc take an application-limited source",
            a.source
        ));
    }
    let tfwc_header = tfcc_core::tfwc::wire::DATA_LEN as u32;
    if video.is_some() && a.protocol == "tfwc" && a.packet_size <= tfwc_header {
        // TFWC's packet size is the datagram, header included: this one has no room for the
        // frames' bytes.
        return Err(format!(
            "--packet-size {}: with a video source a tfwc datagram needs room for payload after \
             its {tfwc_header} B header",
            a.packet_size
        ));
    }
    let header = tfcc_core::tfrc::wire::DATA_LEN as u32;
    if video.is_some() && a.protocol == "tfrc" && a.packet_size + header > MAX_UDP_PAYLOAD {
        return Err(format!(
            "--packet-size {}: with a video source a datagram is packet-size + {header} B, \
             larger than the largest UDP payload ({MAX_UDP_PAYLOAD} B)",
            a.packet_size
        ));
    }
    if let Some(scheme) = rate_scheme(&a.protocol, a.preset.as_deref())? {
        let ep = RateSender::new(rate_sender_config(a.packet_size)?);
        let s = Session::sender(ep, Protocol::Rate(scheme), &bind, to, cfg)
            .map_err(|e| bind_error("bind", &bind, e))?;
        return drive_sender(s, duration, every, true);
    }
    match a.protocol.as_str() {
        "tfrc" => {
            let mut c = tfrc_config(a.preset.as_deref(), Some(a.packet_size))?;
            let feed = video.map(|v| {
                // The frame's bytes ride after tfcc's data header, so that every offered byte
                // is on the wire once: datagrams of up to packet_size + 44 B, paced as
                // packet_size (the header on top, as ns-2's `headersize_`).
                c.header_size = tfcc_core::tfrc::wire::DATA_LEN as u32;
                VideoFeed::new(VideoSource::new(
                    v,
                    Time::ZERO,
                    SimRng::named(seed, "video"),
                ))
            });
            let ep = TfrcSender::new(c);
            let s = Session::sender(ep, Protocol::Tfrc, &bind, to, cfg)
                .map_err(|e| bind_error("bind", &bind, e))?;
            match feed {
                Some(f) => drive_sender_fed(s, duration, every, f),
                None => drive_sender(s, duration, every, true),
            }
        }
        "tfwc" => {
            // The frame's bytes ride after tfcc's 28-byte data header, inside `packet_size`
            // (TFWC's packet is the datagram); a frame's tail goes in a short datagram
            // (`TfwcConfig::tail_packet`), so every offered byte is on the wire once.
            let c = tfwc_config(a.preset.as_deref(), Some(a.packet_size))?;
            let ep = TfwcSender::new(c, Time::ZERO);
            let s = Session::sender(ep, Protocol::Tfwc, &bind, to, cfg)
                .map_err(|e| bind_error("bind", &bind, e))?;
            match video {
                Some(v) => {
                    let feed = VideoFeed::new(VideoSource::new(
                        v,
                        Time::ZERO,
                        SimRng::named(seed, "video"),
                    ));
                    drive_sender_fed(s, duration, every, feed)
                }
                None => drive_sender(s, duration, every, true),
            }
        }
        "cbr" => {
            no_preset("cbr", a.preset.as_deref())?;
            let c = CbrConfig {
                rate: cbr_rate.ok_or("--rate: cbr has no rate")?,
                packet_size: a.packet_size,
                on_off: None,
            };
            c.validate()
                .map_err(|e| format!("--rate/--packet-size: {e}"))?;
            let ep = CbrSender::new(c, Time::ZERO, Some(Time::ZERO + duration));
            let s = Session::sender(ep, Protocol::Raw, &bind, to, cfg)
                .map_err(|e| bind_error("bind", &bind, e))?;
            drive_sender(s, duration, every, false)
        }
        other => Err(format!(
            "--protocol {other}: unknown (use tfrc, tfwc, warc, tear, tfrcp or cbr)"
        )),
    }
}

fn recv(a: &RecvArgs) -> Result<(), String> {
    let duration = dur("duration", &a.duration)?;
    let every = report_interval(&a.report)?;
    let cfg = session_config(a.realtime)?;
    if let Some(scheme) = rate_scheme(&a.protocol, a.preset.as_deref())? {
        // Only the report size and the rounds' idle limit come from the sender's side: both
        // ends take the defaults for them.
        let sender = RateSenderConfig::default();
        let ep = RoundReceiver::for_sender(AnyRateEstimator::default_for(scheme), &sender);
        let s = Session::receiver(ep, Protocol::Rate(scheme), &a.listen, cfg)
            .map_err(|e| bind_error("listen", &a.listen, e))?;
        return drive_receiver(s, duration, every);
    }
    match a.protocol.as_str() {
        "tfrc" => {
            let ep = TfrcReceiver::new(tfrc_config(a.preset.as_deref(), None)?);
            let s = Session::receiver(ep, Protocol::Tfrc, &a.listen, cfg)
                .map_err(|e| bind_error("listen", &a.listen, e))?;
            drive_receiver(s, duration, every)
        }
        "tfwc" => {
            let ep = TfwcReceiver::new(&tfwc_config(a.preset.as_deref(), None)?);
            let s = Session::receiver(ep, Protocol::Tfwc, &a.listen, cfg)
                .map_err(|e| bind_error("listen", &a.listen, e))?;
            drive_receiver(s, duration, every)
        }
        "cbr" => {
            no_preset("cbr", a.preset.as_deref())?;
            let s = Session::receiver(CbrSink::new(), Protocol::Raw, &a.listen, cfg)
                .map_err(|e| bind_error("listen", &a.listen, e))?;
            drive_receiver(s, duration, every)
        }
        other => Err(format!(
            "--protocol {other}: unknown (use tfrc, tfwc, warc, tear, tfrcp or cbr)"
        )),
    }
}

fn mbps(bytes: u64, d: Dur) -> f64 {
    if d.is_zero() {
        return 0.0;
    }
    bytes as f64 * 8.0 / d.as_secs_f64() / 1e6
}

/// The allowed rate in Mb/s for a rate-based sender (TFRC, CBR), the window for a window-based
/// one (TFWC: "cwnd 12"), rather than a rate of 0 it does not have.
fn rate_column(st: &tfcc_core::Stats) -> String {
    match (st.rate, st.cwnd) {
        (Some(r), _) => format!("{:.3}", r * 8.0 / 1e6),
        (None, Some(w)) => format!("cwnd {w:.0}"),
        (None, None) => "-".into(),
    }
}

fn opt_ms(d: Option<Dur>) -> String {
    d.map_or("-".into(), |d| format!("{:.3}", d.as_millis_f64()))
}

/// One line on stderr for the first dropped datagram, the first refused send and a peer that
/// answers only with ICMP errors, each once, not once per datagram: a peer speaking another
/// protocol, junk on the port, or no receiver at all is visible at once, and the counts are in
/// the summary line.
#[derive(Default)]
struct Said {
    send_error: bool,
    icmp: bool,
    drop: bool,
}

fn say_first_drop<E: tfcc_core::Endpoint>(s: &Session<E>, said: &mut Said) {
    let peer = s.peer().map_or("the peer".to_string(), |p| p.to_string());
    if let (false, Some(kind)) = (said.send_error, s.first_send_error()) {
        eprintln!(
            "warning: the kernel refused a datagram to {peer} ({kind}). Further send errors are \
             counted, not shown (send errors in the summary line)."
        );
        said.send_error = true;
    }
    let c = s.counters();
    if !said.icmp && c.recv_errors > 0 && c.received == 0 {
        eprintln!(
            "warning: {peer} answers with ICMP errors (port unreachable?) and nothing else: is \
             `tfcc recv` listening there, with the same --protocol?"
        );
        said.icmp = true;
    }
    if let (false, Some((from, why))) = (said.drop, s.first_drop()) {
        let hint = match why {
            crate::DropReason::Malformed(_) => " Does the peer use the same --protocol?",
            _ => "",
        };
        eprintln!(
            "warning: dropped a datagram from {from} ({why}).{hint} Further drops are counted, \
             not shown: malformed, unexpected and truncated in the summary line."
        );
        said.drop = true;
    }
}

/// Runs a bulk sender for `duration`, printing a line per `every`; `feedback` says whether the
/// protocol expects reports back (TFRC, TFWC), so that a silent peer is pointed out.
fn drive_sender<S: Sender>(
    s: Session<S>,
    duration: Dur,
    every: Dur,
    feedback: bool,
) -> Result<(), String> {
    drive(s, duration, every, feedback, None)
}

/// Runs a TFRC or TFWC sender fed by a video source: each frame is offered
/// ([`Sender::offer`]) at its time, the session sending what is due between frames. The
/// per-interval line adds the rate offered and the bytes buffered; the summary says how many
/// frames and bytes were offered, sent and still buffered at the end (the sender's own
/// [`Sender::payload_sent`] and [`Sender::buffered`]).
fn drive_sender_fed<S: Sender>(
    s: Session<S>,
    duration: Dur,
    every: Dur,
    feed: VideoFeed,
) -> Result<(), String> {
    drive(s, duration, every, true, Some(feed))
}

fn drive<S: Sender>(
    mut s: Session<S>,
    duration: Dur,
    every: Dur,
    feedback: bool,
    mut feed: Option<VideoFeed>,
) -> Result<(), String> {
    let extra = if feed.is_some() {
        format!(" {:>12} {:>10}", "offered_Mbps", "buffered_B")
    } else {
        String::new()
    };
    println!(
        "{:>8} {:>10} {:>10} {:>9} {:>8}  mode{extra}",
        "time_s", "sent_Mbps", "rate_Mbps", "p", "rtt_ms"
    );
    if let Some(f) = &feed {
        // Application-limited from the start: nothing to send until the first frame.
        f.start(&mut s);
    }
    let end = Time::ZERO + duration;
    let mut last_bytes = 0u64;
    let mut t = Time::ZERO;
    let mut said = Said::default();
    // How long the flow ran: `duration`, or less if a signal stopped it.
    let mut ran = duration;
    'run: while t < end {
        let next = (t + every).min(end);
        let mut offered = 0u64;
        loop {
            // The next frame, or the end of the interval.
            let stop = feed.as_mut().map_or(next, |f| f.next_time().clamp(t, next));
            if run_slice(&mut s, stop)? {
                ran = s.now().saturating_since(Time::ZERO).min(duration);
                break 'run;
            }
            if let Some(f) = feed.as_mut() {
                offered += f.offer_due(&mut s, stop, end);
            }
            if stop >= next {
                break;
            }
        }
        say_first_drop(&s, &mut said);
        let c = s.counters();
        let st = s.endpoint().stats();
        let extra = if feed.is_some() {
            format!(
                " {:>12.3} {:>10}",
                mbps(offered, next - t),
                s.endpoint().buffered().unwrap_or(0)
            )
        } else {
            String::new()
        };
        println!(
            "{:>8.1} {:>10.3} {:>10} {:>9.5} {:>8}  {}{extra}",
            next.as_secs_f64(),
            mbps(c.sent_bytes - last_bytes, next - t),
            rate_column(&st),
            st.p.unwrap_or(0.0),
            opt_ms(st.rtt),
            st.mode
        );
        last_bytes = c.sent_bytes;
        t = next;
    }
    let c = s.counters();
    println!(
        "sent {} datagrams, {:.3} Mb/s average; send errors {} ({} buffer full), feedback {} (malformed {}, unexpected {}, ICMP errors {})",
        c.sent,
        mbps(c.sent_bytes, ran),
        c.send_errors,
        c.buffer_full,
        c.received,
        c.malformed,
        c.unexpected,
        c.recv_errors
    );
    if let Some(f) = &feed {
        let st = s.endpoint().stats();
        let (sent, buffered) = (s.endpoint().payload_sent(), s.endpoint().buffered());
        println!(
            "video: offered {} frames, {} B ({:.3} Mb/s); sent {} B of them in {} packets; {} B still buffered at the end",
            f.frames(),
            f.bytes(),
            mbps(f.bytes(), ran),
            sent.unwrap_or(0),
            st.packets_sent,
            buffered.unwrap_or(0)
        );
    }
    if feedback && c.received == 0 && c.sent > 0 {
        let peer = s.peer().map_or("the peer".to_string(), |p| p.to_string());
        eprintln!(
            "warning: no feedback from {peer} in {:.1} s: is `tfcc recv` listening there, with \
             the same --protocol, and does the path let its reports back?",
            ran.as_secs_f64()
        );
    }
    println!("pacing lateness: {}", s.lateness().summary());
    println!("pacing gap error: {}", s.gap_error().summary());
    Ok(())
}

fn drive_receiver<R: Receiver>(mut s: Session<R>, duration: Dur, every: Dur) -> Result<(), String> {
    println!(
        "{:>8} {:>12} {:>9} {:>8}",
        "time_s", "goodput_Mbps", "p", "rtt_ms"
    );
    let end = Time::ZERO + duration;
    let mut last = 0u64;
    let mut t = Time::ZERO;
    let mut said = Said::default();
    // How long the flow ran: `duration`, or less if a signal stopped it.
    let mut ran = duration;
    while t < end {
        let next = (t + every).min(end);
        if run_slice(&mut s, next)? {
            ran = s.now().saturating_since(Time::ZERO).min(duration);
            break;
        }
        say_first_drop(&s, &mut said);
        // By the row's end by kernel stamps: a late wake-up's reads go to the next row.
        let d = s.delivered_bytes_by_end();
        let st = s.endpoint().stats();
        println!(
            "{:>8.1} {:>12.3} {:>9.5} {:>8}",
            next.as_secs_f64(),
            mbps(d - last, next - t),
            st.p.unwrap_or(0.0),
            opt_ms(st.rtt)
        );
        last = d;
        t = next;
    }
    let c = s.counters();
    println!(
        "received {} datagrams, {} B delivered, {:.3} Mb/s average; malformed {}, unexpected {}, truncated {}",
        c.received,
        s.delivered_bytes(),
        mbps(s.delivered_bytes(), ran),
        c.malformed,
        c.unexpected,
        c.truncated
    );
    Ok(())
}

/// Dispatch `send`/`recv` from a full argv (`[prog, command, args...]`), for the binary.
pub fn main_from(argv: &[String]) -> i32 {
    let prog = argv
        .first()
        .map(|p| Path::new(p).display().to_string())
        .unwrap_or_default();
    match argv.get(1).map(String::as_str) {
        Some("send") => send_command(&argv[2..]),
        Some("recv") => recv_command(&argv[2..]),
        _ => fail(&format!("usage: {prog} send|recv ... (--help for each)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_error(args: &[&str]) -> String {
        let argv: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let a: SendArgs = parse("tfcc send", &argv).expect("flags parse");
        send(&a).expect_err("refused")
    }

    fn recv_error(args: &[&str]) -> String {
        let argv: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let a: RecvArgs = parse("tfcc recv", &argv).expect("flags parse");
        recv(&a).expect_err("refused")
    }

    #[test]
    fn a_destination_without_a_port_says_so() {
        // Before: "::1: failed to lookup address information: Name or service not known".
        for to in ["::1", "10.0.0.2", "localhost"] {
            assert_eq!(
                destination(to).unwrap_err(),
                format!("{to}: no port (expected HOST:PORT, e.g. 10.0.0.2:5000 or [::1]:5000)")
            );
        }
        assert_eq!(
            destination("[::1]:5000").unwrap(),
            "[::1]:5000".parse().unwrap()
        );
        assert_eq!(
            destination("127.0.0.1:9").unwrap(),
            "127.0.0.1:9".parse().unwrap()
        );
        let e = destination("127.0.0.1:99999").unwrap_err();
        assert!(e.starts_with("127.0.0.1:99999: invalid port value"), "{e}");
        // The same for the addresses a socket binds to.
        for a in [
            vec!["--listen", "10.0.0.2"],
            vec!["--listen", "::1"],
            vec!["--listen", "foo"],
        ] {
            assert_eq!(
                recv_error(&a),
                format!("--listen {}: no port ({ADDR_FORM})", a[1])
            );
        }
    }

    #[test]
    fn a_report_interval_under_a_millisecond_is_refused() {
        let e = recv_error(&["--listen", "127.0.0.1:0", "--report", "1ns"]);
        assert_eq!(
            e,
            "--report 1ns: at least 1ms (one line per report), got 1ns"
        );
        let e = send_error(&["127.0.0.1:9", "--report", "999us"]);
        assert!(e.starts_with("--report 999us: at least 1ms"), "{e}");
    }

    #[test]
    fn a_port_in_use_names_the_flag_and_address() {
        let taken = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap().to_string();
        let e = recv_error(&["--listen", &addr, "--duration", "1s"]);
        assert!(e.starts_with(&format!("--listen {addr}: ")), "{e}");
        let e = send_error(&["127.0.0.1:9", "--bind", &addr, "--duration", "1s"]);
        assert!(e.starts_with(&format!("--bind {addr}: ")), "{e}");
        let e = recv_error(&["--listen", ":5000"]);
        assert!(e.starts_with("--listen :5000: "), "{e}");
    }

    #[test]
    fn a_window_based_sender_shows_its_window_not_a_zero_rate() {
        use tfcc_core::Endpoint;
        let tfwc = TfwcSender::new(TfwcConfig::default(), Time::ZERO);
        assert_eq!(rate_column(&tfwc.stats()), "cwnd 1");
        let tfrc = TfrcSender::new(TfrcConfig::default());
        assert_eq!(rate_column(&tfrc.stats()), "0.012"); // 1460 B per second in Init RTT
    }

    #[test]
    fn the_default_bind_follows_the_receivers_address_family() {
        assert_eq!(default_bind(&"[::1]:5000".parse().unwrap()), "[::]:0");
        assert_eq!(
            default_bind(&"127.0.0.1:5000".parse().unwrap()),
            "0.0.0.0:0"
        );
    }

    #[test]
    fn packet_sizes_that_no_datagram_carries_are_refused() {
        let e = send_error(&["127.0.0.1:9", "--packet-size", "70000"]);
        assert!(e.contains("largest UDP payload"), "{e}");
        let e = send_error(&["127.0.0.1:9", "--packet-size", "10"]);
        assert!(e.contains("smaller than the tfrc header (44 B)"), "{e}");
        let e = send_error(&["127.0.0.1:9", "--protocol", "cbr", "--packet-size", "19"]);
        assert!(e.contains("cbr header (20 B)"), "{e}");
    }

    #[test]
    fn video_sources_parse_with_defaults_and_bad_ones_name_the_flag() {
        assert_eq!(video_source("bulk", &[]).unwrap(), None);
        let v = video_source("video", &[]).unwrap().unwrap();
        assert_eq!(v, VideoConfig::default());
        let p = ["3s-5s".to_string()];
        let v = video_source("video:2Mbps:30", &p).unwrap().unwrap();
        assert_eq!(v.rate, tfcc_core::Rate::from_mbps(2));
        assert_eq!(v.fps, 30.0);
        assert_eq!(v.pauses, vec![(Time::from_secs(3), Time::from_secs(5))]);
        for (src, pauses, msg) in [
            ("video:fast", &[][..], "--source video:fast: rate fast"),
            ("video:1Mbps:x", &[], "fps x is not a number"),
            ("video:1Mbps:25:9", &[], "use video[:RATE[:FPS]]"),
            ("video:1Mbps:0", &[], "fps must be in"),
            ("audio", &[], "--source audio: unknown"),
            ("bulk", &p[..], "only a video --source pauses"),
        ] {
            let e = video_source(src, pauses).unwrap_err();
            assert!(e.contains(msg), "{src}: {e}");
        }
        // was "--source video: a pause must end after it starts, got [5, 3]"
        let e = video_source("video", &["5s-3s".to_string()]).unwrap_err();
        assert_eq!(e, "--pause 5s-3s: a pause must end after it starts");
        let e = video_source("video", &["5s".to_string()]).unwrap_err();
        assert!(e.starts_with("--pause 5s: use FROM-TO"), "{e}");
        // Before: "only tfrc takes an application-limited source" for tfwc too.
        let e = send_error(&["127.0.0.1:9", "--protocol", "cbr", "--source", "video"]);
        assert!(e.contains("only tfrc and tfwc take"), "{e}");
        let e = send_error(&[
            "127.0.0.1:9",
            "--protocol",
            "tfwc",
            "--source",
            "video",
            "--packet-size",
            "28",
        ]);
        assert!(e.contains("room for payload after its 28 B header"), "{e}");
        let e = send_error(&["127.0.0.1:9", "--source", "video", "--packet-size", "65500"]);
        assert!(e.contains("packet-size + 44 B"), "{e}");
        // Before: read only for a video source, and silently dropped for a bulk one.
        let e = send_error(&["127.0.0.1:9", "--seed", "7", "--duration", "1s"]);
        assert_eq!(
            e,
            "--seed 7: only a video --source draws (its frame sizes); a bulk source takes no seed"
        );
    }

    #[test]
    fn a_rate_is_cbrs_and_refused_for_the_congestion_controlled_senders() {
        // Before: `--protocol tfrc --rate 50Mbps` sent at TFRC's own rate, and exit 0.
        for p in ["tfrc", "tfwc"] {
            let e = send_error(&["127.0.0.1:9", "--protocol", p, "--rate", "50Mbps"]);
            assert_eq!(
                e,
                format!(
                    "--rate 50Mbps: only cbr sends at a set rate; {p}'s rate is its congestion \
                     control's (for a video stream's rate use --source video:RATE)"
                )
            );
        }
        assert_eq!(cbr_rate("tfrc", None), Ok(None));
        assert_eq!(cbr_rate("cbr", None), Ok(Some(Rate::from_mbps(1))));
        assert_eq!(cbr_rate("cbr", Some("5Mbps")), Ok(Some(Rate::from_mbps(5))));
    }

    #[test]
    fn the_rate_schemes_take_no_preset_nor_rate_and_unknown_names_are_refused() {
        for p in ["warc", "tear", "tfrcp"] {
            let e = send_error(&["127.0.0.1:9", "--protocol", p, "--preset", "ns2"]);
            assert_eq!(
                e,
                format!("--preset ns2: {p} has no presets (they are for tfrc and tfwc)")
            );
            let e = recv_error(&[
                "--protocol",
                p,
                "--preset",
                "thesis",
                "--listen",
                "127.0.0.1:0",
            ]);
            assert!(
                e.starts_with(&format!("--preset thesis: {p} has no")),
                "{e}"
            );
            let e = send_error(&["127.0.0.1:9", "--protocol", p, "--rate", "1Mbps"]);
            assert!(
                e.starts_with("--rate 1Mbps: only cbr sends at a set rate"),
                "{e}"
            );
            let e = send_error(&["127.0.0.1:9", "--protocol", p, "--packet-size", "35"]);
            assert_eq!(
                e,
                format!("--packet-size 35: smaller than the {p} header (36 B)")
            );
            let e = send_error(&["127.0.0.1:9", "--protocol", p, "--source", "video"]);
            assert!(e.contains("only tfrc and tfwc take"), "{e}");
        }
        let e = send_error(&["127.0.0.1:9", "--protocol", "warcs"]);
        assert_eq!(
            e,
            "--protocol warcs: unknown (use tfrc, tfwc, warc, tear, tfrcp or cbr)"
        );
        let e = recv_error(&["--protocol", "TEAR", "--listen", "127.0.0.1:0"]);
        assert_eq!(
            e,
            "--protocol TEAR: unknown (use tfrc, tfwc, warc, tear, tfrcp or cbr)"
        );
    }

    /// A TEAR receiver given a WARC sender's packets stops at the first with one line naming
    /// both schemes, rather than reporting TEAR's rate to a sender that thinks it runs WARC.
    #[test]
    fn a_receiver_refuses_another_rate_schemes_packets() {
        let mut rx = Session::receiver(
            RoundReceiver::for_sender(
                AnyRateEstimator::default_for(RateScheme::Tear),
                &RateSenderConfig::default(),
            ),
            Protocol::Rate(RateScheme::Tear),
            "127.0.0.1:0",
            SessionConfig::default(),
        )
        .unwrap();
        let to = rx.local_addr().unwrap();
        let mut tx = Session::sender(
            RateSender::new(rate_sender_config(1000).unwrap()),
            Protocol::Rate(RateScheme::Warc),
            "127.0.0.1:0",
            to,
            SessionConfig::default(),
        )
        .unwrap();
        let from = tx.local_addr().unwrap();
        // The sender's first packet goes at once (then one per second before any report).
        tx.run_until(Time::from_millis(10)).unwrap();
        let e = run_slice(&mut rx, Time::from_millis(500)).unwrap_err();
        assert_eq!(
            e,
            format!("{from} runs warc, this end tear: give both ends the same --protocol")
        );
    }

    #[test]
    fn presets_apply_to_tfrc_and_tfwc_and_name_the_flag() {
        let e = send_error(&["127.0.0.1:9", "--protocol", "tfwc", "--preset", "nope"]);
        assert_eq!(e, "--preset nope: unknown (use ns2, thesis or vic)");
        let e = send_error(&["127.0.0.1:9", "--protocol", "tfrc", "--preset", "nope"]);
        assert_eq!(e, "--preset nope: unknown (use thesis, ns2 or rfc5348)");
        let e = recv_error(&[
            "--protocol",
            "cbr",
            "--preset",
            "thesis",
            "--listen",
            "127.0.0.1:0",
        ]);
        assert!(e.starts_with("--preset thesis: cbr has no presets"), "{e}");
        // TFWC's default is Choi's agent; `thesis` is 002's text.
        assert_eq!(tfwc_config(None, None).unwrap().history_size, 16);
        assert_eq!(tfwc_config(Some("thesis"), None).unwrap().history_size, 8);
        assert_eq!(
            tfrc_config(None, None).unwrap(),
            TfrcConfig::preset("thesis").unwrap()
        );
    }
}
