//! An application-limited TFRC sender over real sockets (issue 5): `tfcc send --source video`
//! and `tfcc recv` (the `tfcc-net` binary, the same code `tfcc send`/`recv` run) on loopback,
//! a 1 Mb/s, 25 fps video silent from 3 s to 5 s, with RFC 5348's rules (`--preset rfc5348`).
//! (A TFWC sender fed the same way: the last test.)
//!
//! - Every offered byte is sent once: the sender's summary has offered = sent and nothing left
//!   in the buffer, and the receiver got exactly those bytes plus tfcc's data header (`DATA_LEN`, 44 B)
//!   per datagram (loopback loses nothing).
//! - The receiver's goodput is the stream's rate outside the pause.
//! - When the stream resumes, the allowed rate is at least RFC 5348's `W_init/R` (§4.2
//!   `W_init = min(4·s, max(2·s, 4380))` = 4380 B for s = 1460; §4.3, §4.4: an idle sender's
//!   `X_recv` is not halved below the recovery rate, and with no loss `X >= W_init/R` after
//!   every report), with `R` the sender's smoothed RTT then; the lines cannot show that `R`,
//!   so the test checks that the `R` this implies is a loopback RTT (see the last check).

use std::process::{Command, Stdio};

const EXE: &str = env!("CARGO_BIN_EXE_tfcc-net");
/// tfcc's TFRC data header, on top of the frame bytes each datagram carries.
const HEADER: u64 = tfcc_core::tfrc::wire::DATA_LEN as u64;
const W_INIT: f64 = 4380.0;

fn free_port() -> u16 {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    s.local_addr().unwrap().port()
}

/// The rows of a per-interval table: whitespace-split lines whose first field is a time.
fn rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|r| r.len() >= 4 && r[0].parse::<f64>().is_ok())
        .collect()
}

/// The number after `key` in `line` ("offered 125 frames" -> 125 for "offered").
fn after(line: &str, key: &str) -> u64 {
    let mut w = line.split_whitespace();
    w.by_ref()
        .find(|&x| x == key)
        .unwrap_or_else(|| panic!("{key} in {line}"));
    w.next().unwrap().trim_end_matches(',').parse().unwrap()
}

/// Runs `tfcc-net recv --listen ADDR RECV...` and then `tfcc-net send ADDR SEND... SOURCE...` to
/// it on a free loopback port; both must succeed. Returns their standard outputs (sender,
/// receiver). The receiver's clock must start before the sender's, or the frame that ends a
/// pause (sent at 5 s) counts in the receiver's second to 5 s: the sender starts once the
/// receiver has printed its header line, which it does once its session (and clock) exists.
/// With a fixed 100 ms sleep instead the first test failed once in a workspace run (bytes in the
/// receiver's second to 5 s; the output was not kept), most likely a receiver slower to start.
fn send_and_receive(recv_args: &[&str], send_args: &[&str], source: &[&str]) -> (String, String) {
    let addr = format!("127.0.0.1:{}", free_port());
    let mut recv = Command::new(EXE)
        .args(["recv", "--listen", &addr])
        .args(recv_args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut rstdout = std::io::BufReader::new(recv.stdout.take().unwrap());
    let mut header = String::new();
    std::io::BufRead::read_line(&mut rstdout, &mut header).unwrap();
    assert!(header.contains("time_s"), "{header}");
    let send = Command::new(EXE)
        .args(["send", &addr])
        .args(send_args)
        .args(source)
        .output()
        .unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut rstdout, &mut rest).unwrap();
    let recv = recv.wait_with_output().unwrap();
    let rout = header + &rest;
    let sout = String::from_utf8_lossy(&send.stdout).into_owned();
    println!("{sout}\n{rout}");
    assert!(
        send.status.success(),
        "{}",
        String::from_utf8_lossy(&send.stderr)
    );
    assert!(
        recv.status.success(),
        "{}",
        String::from_utf8_lossy(&recv.stderr)
    );
    (sout, rout)
}

#[test]
fn a_video_with_a_pause_is_sent_once_at_its_rate_and_resumes_above_w_init_over_r() {
    let (sout, rout) = send_and_receive(
        &["--duration", "7500ms", "--preset", "rfc5348"],
        &["--duration", "7s", "--preset", "rfc5348"],
        &["--source", "video:1Mbps:25", "--pause", "3s-5s"],
    );

    // Every offered byte sent once, and received once.
    let video = sout.lines().find(|l| l.starts_with("video:")).unwrap();
    let (frames, offered) = (after(video, "offered"), after(video, "frames,"));
    let (sent, packets) = (after(video, "sent"), after(video, "in"));
    // 5 s of frames at 25 fps: 125.
    assert_eq!(frames, 125, "{video}");
    assert_eq!(sent, offered, "{video}");
    assert!(video.ends_with("0 B still buffered at the end"), "{video}");
    let rline = rout.lines().find(|l| l.starts_with("received")).unwrap();
    assert_eq!(after(rline, "received"), packets, "{rline}");
    assert_eq!(
        after(rline, "datagrams,"),
        offered + HEADER * packets,
        "{rline}"
    );
    // 5 s of a 1 Mb/s stream: 625 kB, within the frame-size noise.
    assert!((offered as f64 - 625e3).abs() < 0.05 * 625e3, "{video}");

    // The receiver's goodput in the seconds wholly inside the stream (its clock starts up to
    // a few ms before the sender's): the stream's 1 Mb/s plus the headers (about 3 %), within
    // a second's frame-size variation (an I-frame more or less is 7 %).
    let r = rows(&rout);
    for t in ["2.0", "3.0", "7.0"] {
        let g: f64 = r.iter().find(|x| x[0] == t).unwrap()[1].parse().unwrap();
        assert!(
            (0.85..1.2).contains(&g),
            "goodput {g} Mb/s in the second to {t} s"
        );
    }
    // Nothing arrives in the second wholly inside the pause.
    let g: f64 = r.iter().find(|x| x[0] == "5.0").unwrap()[1]
        .parse()
        .unwrap();
    assert_eq!(g, 0.0, "{rout}");

    // At resumption (the sender's line at 5 s: the first frame offered, no report yet). On
    // loopback `p = 0`, so each frame's first report (one RTT after the last rate change) set
    // `X = max(min(2X, recv_limit), W_init/R)` = `W_init/R` (§4.3 step 4; `X_recv` is far
    // below), with `R` as it was then; the reports of the same frame within that RTT moved the
    // smoothed `R` (q = 0.9) without recomputing `X`. Through the pause the idle,
    // loss-free sender below `2·recover_rate` is not halved (§4.4): `X` at 5 s is `X` at 4 s.
    let s = rows(&sout);
    let line = |t: &str| s.iter().find(|x| x[0] == t).unwrap().clone();
    let (at4, at5) = (line("4.0"), line("5.0"));
    let x_mbps: f64 = at5[2].parse().unwrap();
    let r_max = ["1.0", "2.0", "3.0", "4.0", "5.0"]
        .iter()
        .map(|t| line(t)[4].parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    let rtt_ms: f64 = at5[4].parse().unwrap();
    let floor = W_INIT * 8.0 / (r_max / 1e3) / 1e6;
    println!(
        "X at resumption {x_mbps:.1} Mb/s; W_init/R {floor:.1} Mb/s with the largest R \
         ({r_max} ms), {:.1} Mb/s with R then ({rtt_ms} ms)",
        W_INIT * 8.0 / (rtt_ms / 1e3) / 1e6
    );
    // The lines sample `R` once a second, in whole µs, but `X` was set at a report between two
    // lines with `R` as it was at that report, which no line shows. On an idle loopback `R`
    // wanders by a few µs around 40 µs (a fresh-clone run: `X` 856.9 Mb/s, i.e. `R` = 40.9 µs,
    // where every line showed 40 µs); on a loaded 2-core CI machine a single late sample moves
    // the smoothed `R` further (CI run of 853e8a3: `X` 733.2 Mb/s, i.e. `R` = 47.8 µs at the
    // last report, where the lines showed at most 42 µs). So this end-to-end test checks what
    // its output can show: the `R` implied by `X = W_init/R` is a loopback RTT (at most 1 ms,
    // `X` at least 35 Mb/s), where the failure it guards against (`X` decayed through the
    // pause) leaves `X` in kb/s, an implied `R` of seconds. The exact rule, `X = W_init/R` with
    // the `R` of the report, is checked in tfcc-core's unit tests
    // (`rfc_nofeedback_timer_halves_through_x_recv_set_but_not_below_recover_rate_when_idle`).
    let implied_r_ms = W_INIT * 8.0 / (x_mbps * 1e6) * 1e3;
    assert!(
        implied_r_ms <= 1.0,
        "{at5:?}: X = W_init/R with R = {implied_r_ms:.3} ms, not a loopback RTT \
         (W_init/R = {floor:.1} Mb/s with the largest R the lines show)"
    );
    assert_eq!(at4[2], at5[2], "X halved during the pause: {at4:?} {at5:?}");
    // Nothing was sent during the pause.
    let quiet = s.iter().find(|x| x[0] == "4.0").unwrap();
    assert_eq!(quiet[1], "0.000", "{quiet:?}");
}

/// The same over TFWC (`--protocol tfwc`, Choi's ns-2.34 agent, the default preset): a
/// 1 Mb/s, 25 fps video for 3 s. TFWC's `--packet-size` (1460) is the datagram, so a frame goes
/// out in datagrams of 1432 B of its bytes after tfcc's 28-byte header and its tail in a short
/// one (`TfwcConfig::tail_packet`).
///
/// - Every frame due is offered (3 s at 25 fps: 75), and the sender's bytes add up exactly:
///   offered = sent + still buffered, sent counting the frames' bytes only.
/// - The receiver counts payload: it gets at most what was sent, and when every datagram
///   arrived (loopback loses nothing), exactly the bytes sent. A padded tail (the sender's rule
///   before 2026-11-28) made it count up to 1431 B of padding per frame more than was offered.
/// - Each of the sender's lines has the offered rate and the buffered bytes.
#[test]
fn a_video_over_tfwc_is_sent_in_short_tails_and_every_byte_is_accounted_for() {
    const TFWC_HEADER: u64 = tfcc_core::tfwc::wire::DATA_LEN as u64;
    let (sout, rout) = send_and_receive(
        &["--duration", "4s", "--protocol", "tfwc"],
        &["--duration", "3s", "--protocol", "tfwc"],
        &["--source", "video:1Mbps:25"],
    );

    let head = sout.lines().next().unwrap();
    assert!(
        head.ends_with("offered_Mbps buffered_B"),
        "the sender's header: {head}"
    );
    let s = rows(&sout);
    assert_eq!(s.len(), 3, "one line a second: {sout}");
    for r in &s {
        // time, sent, "cwnd N", p, rtt, mode, offered, buffered
        assert_eq!(r.len(), 9, "{r:?}");
        let offered: f64 = r[7].parse().unwrap();
        assert!(
            offered > 0.5,
            "a 1 Mb/s stream offered {offered} Mb/s: {r:?}"
        );
        r[8].parse::<u64>().unwrap();
    }

    let video = sout.lines().find(|l| l.starts_with("video:")).unwrap();
    let (frames, offered) = (after(video, "offered"), after(video, "frames,"));
    let (sent, packets) = (after(video, "sent"), after(video, "in"));
    let buffered = after(video, "packets;");
    assert_eq!(frames, 75, "{video}");
    assert_eq!(offered, sent + buffered, "{video}");
    // 3 s of a 1 Mb/s stream: 375 kB, within the frame-size noise (3 GOPs of 12 frames).
    assert!((offered as f64 - 375e3).abs() < 0.1 * 375e3, "{video}");
    // At least one datagram per frame that went out, and at most one short one per frame.
    let full = 1460 - TFWC_HEADER;
    assert!(packets >= sent.div_ceil(full), "{video}");
    assert!(packets <= sent / full + frames, "{video}");

    let rline = rout.lines().find(|l| l.starts_with("received")).unwrap();
    let (got, delivered) = (after(rline, "received"), after(rline, "datagrams,"));
    assert!(got <= packets, "{rline} / {video}");
    assert!(delivered <= sent, "{rline} / {video}");
    if got == packets {
        assert_eq!(delivered, sent, "{rline} / {video}");
    }
}
