//! A 10 s dumbbell on real namespaces: one TFRC flow against one kernel TCP (CUBIC) flow
//! through a 10 Mb/s tbf bottleneck with a 100-packet pfifo; and a 7 s video flow (issue 5).
//! Skipped without root or `ip`. One at a time: two testbeds at once would share the 2 cores.

use std::sync::Mutex;
use std::time::Duration;

use tfcc_core::tfrc::TfrcConfig;
use tfcc_core::Time;
use tfcc_net::testbed::{run_flows, FlowKind};
use tfcc_sim::rng::SimRng;
use tfcc_sim::video::{VideoConfig, VideoSource};

mod common;

static SERIAL: Mutex<()> = Mutex::new(());

/// A TFRC sender fed by a 1 Mb/s video silent from 3 s to 5 s, alone on a 4 Mb/s tbf
/// bottleneck for 7 s: the receiver gets exactly the frames the simulator's source produces
/// with the same seed (every offered byte once; the bottleneck loses nothing at a quarter of
/// its rate), nothing in the pause, and the stream's rate outside it.
#[test]
fn a_video_flow_delivers_its_frames_and_nothing_in_the_pause() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = common::dumbbell(4, 100) else {
        return;
    };
    let video = VideoConfig {
        pauses: vec![(Time::from_secs(3), Time::from_secs(5))],
        ..VideoConfig::default()
    };
    // The frame bytes ride after tfcc's data header (`DATA_LEN`, 44 B), as `tfcc send --source
    // video` does (a scenario's `header_size = "72B"`, with UDP/IPv4's 28): the receiver counts the
    // payload after it. With the thesis' layout (the header inside packet_size) a frame's tail
    // shorter than the header would go out padded to it. The datagrams are the packets
    // (`kernel_headers` 0), as `tfcc send` sends them; the testbed's plan runs the simulator's
    // packets 28 B shorter instead (`KernelHeaders`), which tfcc-run's tests check.
    let kind = FlowKind::TfrcVideo {
        cfg: TfrcConfig {
            header_size: tfcc_core::tfrc::wire::DATA_LEN as u32,
            ..TfrcConfig::rfc5348()
        },
        kernel_headers: 0,
        video: video.clone(),
        seed: 4,
        flow: 0,
    };
    let res = run_flows(
        &bed,
        &[(kind, Duration::ZERO)],
        Duration::from_secs(7),
        Duration::from_secs(1),
    )
    .unwrap();
    drop(bed);
    // The frames of [0, 7 s) outside the pause: 125 of them.
    let mut src = VideoSource::new(video, Time::ZERO, SimRng::video(4, 0));
    let mut want = 0;
    while src.next_time() < Time::from_secs(7) {
        want += src.take_frame();
    }
    let r = &res[0];
    eprintln!(
        "video: {} B delivered, the source produced {want} B",
        r.total_bytes
    );
    assert_eq!(r.total_bytes, want);
    frames_account_for_the_stream(r, 25.0);
    // Nothing lost: every frame due by 6.5 s was whole at the receiver by the run's end.
    let frames = r.frames.as_ref().unwrap();
    assert!(
        frames
            .iter()
            .filter(|f| f.t < Time::from_millis(6500))
            .all(|f| f.complete_at.is_some()),
        "{frames:?}"
    );
    // Sampled every 100 ms: nothing arrives from 3.2 s (the last frame before the pause left
    // at 2.96 s) to 4.9 s. Not to the 5.0 s sample: the frame due at 5.0 s, the first after
    // the pause, reaches the receiver a few ms later (a 1.5 kB packet takes 3 ms at the 4 Mb/s
    // bottleneck), and a receiver thread that wakes for its sample a few ms late on a loaded
    // machine counts it there (seen once, 2026-11-28).
    let d = &r.delivered;
    assert_eq!(d[31], d[48], "{:?}", &d[28..52]);
    // Outside the pause the stream's 1 Mb/s (within a second's frame-size variation), over
    // 1-2 s, 2-3 s and 6-7 s (entry k is at (k + 1)/10 s).
    for (a, b) in [(9, 19), (19, 29), (59, 69)] {
        let mbps = (d[b] - d[a]) as f64 * 8.0 / ((b - a) as f64 / 10.0) / 1e6;
        eprintln!(
            "goodput {mbps:.3} Mb/s from {:.1} s to {:.1} s",
            (a + 1) as f64 / 10.0,
            (b + 1) as f64 / 10.0
        );
        assert!((0.85..1.2).contains(&mbps), "{mbps} Mb/s from {a} to {b}");
    }
}

/// A TFWC sender (002 Ch. 6's Vic preset) fed by a 30 fps, 2 Mb/s video coupled to its send
/// buffer as Vic's grabber is (`adapt`, 002 Algorithm 4, q fixed at 10), through a 1 Mb/s
/// bottleneck for 6 s: the source offers twice what the path carries, so the coupling skips
/// frames, and every byte is accounted for exactly: the grabbed frames' bytes offered are the
/// bytes the sender sent plus what it still holds, the receiver counts no more than was sent
/// (the frames' bytes only, its tails in short datagrams), and all of it when every datagram
/// arrived.
#[test]
fn a_coupled_video_over_tfwc_skips_frames_and_accounts_for_every_byte() {
    use tfcc_core::send_buffer_control::SendBufferConfig;
    use tfcc_core::tfwc::TfwcConfig;
    use tfcc_sim::video::VicCoupling;
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = common::dumbbell(1, 20) else {
        return;
    };
    let video = VideoConfig {
        fps: 30.0,
        rate: tfcc_core::Rate::from_mbps(2),
        gop: 1,
        adapt: Some(VicCoupling {
            control: SendBufferConfig {
                quantizer_control: false,
                ..SendBufferConfig::default()
            },
            ..VicCoupling::default()
        }),
        ..VideoConfig::default()
    };
    // A 972-byte datagram (UDP/IPv4 adds 28), the frames' bytes after tfcc's 28-byte header,
    // as `tfcc send --protocol tfwc --source video` sends them (`kernel_headers` 0: the
    // datagrams are the packets), so that the receiver counts exactly the bytes sent. The
    // testbed's plan runs the simulator's 1000-byte packets 28 B shorter instead
    // (`KernelHeaders`), where a tail under 56 B is counted padded; tfcc-run's tests check it.
    let cfg = TfwcConfig {
        packet_size: 972,
        header_size: tfcc_core::tfwc::wire::DATA_LEN as u32,
        ..TfwcConfig::vic()
    };
    let kind = FlowKind::TfwcVideo {
        cfg,
        kernel_headers: 0,
        video,
        seed: 1,
        flow: 0,
    };
    let res = run_flows(
        &bed,
        &[(kind, Duration::ZERO)],
        Duration::from_secs(6),
        Duration::from_secs(2),
    )
    .unwrap();
    drop(bed);
    let r = &res[0];
    let v = r.video.expect("a video flow reports its frames");
    let (sent_dg, got_dg) = (
        r.sender_counters.unwrap().sent,
        r.receiver_counters.unwrap().received,
    );
    eprintln!(
        "{v:?}; {sent_dg} datagrams sent, {got_dg} received, {} B delivered",
        r.total_bytes
    );
    let (due, grabbed) = (v.at_end.frames_due, v.at_end.frames_grabbed);
    // A frame every 1/30 s of the 6 s (the sender's thread starts within a frame of the run).
    assert!((179..=180).contains(&due), "{v:?}");
    // Twice the path's rate offered: the coupling suspended grabbing, not forever.
    assert!(grabbed > 0 && grabbed < due, "{v:?}");
    // q fixed at 10 for every grabbed frame.
    assert_eq!(v.at_end.q_sum, 10 * grabbed, "{v:?}");
    // The window's frames are the run's from 2 s.
    assert!(
        v.at_window.frames_due > 0 && v.at_window.frames_due < due,
        "{v:?}"
    );
    assert_eq!(v.offered, v.sent + v.buffered, "{v:?}");
    assert!(v.sent > 0);
    assert!(r.total_bytes <= v.sent, "{} > {v:?}", r.total_bytes);
    if got_dg == sent_dg {
        assert_eq!(r.total_bytes, v.sent, "{v:?}");
    }
    frames_account_for_the_stream(r, 30.0);
}

/// A video flow's frame records (`frames.parquet`'s rows) account for what its source offered
/// and its sender sent: one row per frame slot due, in order, on the source's grid from the
/// run's start (frame `k` at `k/fps`, the simulator's times); the grabbed rows' bytes are every byte offered; a frame
/// whose bytes were all sent went out in at least one packet, one none of whose bytes were
/// sent in none; no frame has more packets delivered than carried it, and one is complete
/// (no earlier than it came due) exactly when all of them arrived and its last byte was sent.
/// With a datagram lost (or still queued at the run's end), some frame is incomplete.
fn frames_account_for_the_stream(r: &tfcc_net::testbed::FlowResult, fps: f64) {
    let v = r.video.unwrap();
    let frames = r
        .frames
        .as_ref()
        .expect("a video flow's frames are followed");
    assert_eq!(frames.len() as u64, v.at_end.frames_due, "{v:?}");
    let grabbed: Vec<_> = frames.iter().filter(|f| f.grabbed).collect();
    assert_eq!(grabbed.len() as u64, v.at_end.frames_grabbed, "{v:?}");
    assert_eq!(grabbed.iter().map(|f| f.bytes).sum::<u64>(), v.offered);
    let (mut offered, mut incomplete) = (0, 0);
    for (k, f) in frames.iter().enumerate() {
        // In slot order; a pause's slots are skipped.
        assert!(k == 0 || f.index > frames[k - 1].index, "{f:?}");
        assert_eq!(
            f.t,
            Time::ZERO + tfcc_core::Dur::from_secs_f64(f.index as f64 / fps),
            "{f:?}"
        );
        assert!(f.delivered <= f.packets, "{f:?}");
        if !f.grabbed {
            assert!(
                f.bytes == 0 && f.packets == 0 && f.complete_at.is_none(),
                "{f:?}"
            );
            continue;
        }
        let end = offered + f.bytes;
        if end <= v.sent {
            assert!(f.packets >= 1, "{f:?} of bytes [{offered}, {end}), {v:?}");
        } else if offered >= v.sent {
            assert_eq!(f.packets, 0, "{f:?} of bytes [{offered}, {end}), {v:?}");
        }
        match f.complete_at {
            Some(at) => assert!(
                end <= v.sent && f.delivered == f.packets && at >= f.t,
                "{f:?} of bytes [{offered}, {end}), {v:?}"
            ),
            None => {
                assert!(end > v.sent || f.delivered < f.packets, "{f:?}");
                incomplete += 1;
            }
        }
        offered = end;
    }
    let (sent_dg, got_dg) = (
        r.sender_counters.unwrap().sent,
        r.receiver_counters.unwrap().received,
    );
    if got_dg < sent_dg {
        assert!(
            incomplete > 0,
            "{sent_dg} datagrams sent, {got_dg} received"
        );
    }
    eprintln!(
        "frames: {} due, {} grabbed, {} complete; {incomplete} grabbed and incomplete",
        frames.len(),
        grabbed.len(),
        frames.iter().filter(|f| f.complete_at.is_some()).count()
    );
}

/// TFRC with RFC 5348's rules (`TfrcConfig::rfc5348()`, what an RFC 5348 reader deploys),
/// not the thesis preset, whose loss events span the sender's latest RTT sample (004 Sec.
/// 3.4): this dumbbell has no propagation delay (RTT 0.1-0.2 ms when the 100-packet queue is
/// empty, 100-120 ms when it is full), and a sample taken in a moment the queue had drained
/// then groups the losses of the refilled queue one lost run per event. Traced (one run
/// on a loaded 2-core machine): latest sample 100.6 µs beside a smoothed RTT of 101 ms, 6 of every
/// 7 TFRC packets lost while CUBIC refilled the queue, about 50 events in 50 ms, `p` 0.00028 to
/// 0.81, `X` 119 B/s, and no packet for the rest of the 10 s run; 4 of about 50 thesis-preset
/// runs under load, none of 15 with this preset (docs/reproductions/log/tfrc.md, "The current-RTT
/// rule on a path without propagation delay").
#[test]
fn tfrc_and_kernel_tcp_share_a_10_mbps_tbf_bottleneck() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = common::ten_mbps_dumbbell() else {
        return;
    };
    let ns = bed.sender_ns();
    let window = Duration::from_secs(7);
    let res = run_flows(
        &bed,
        &[
            (
                FlowKind::Tfrc {
                    cfg: TfrcConfig::rfc5348(),
                    kernel_headers: 0,
                },
                Duration::ZERO,
            ),
            (
                FlowKind::Tcp {
                    cc: "cubic".into(),
                    mss: None,
                },
                Duration::ZERO,
            ),
        ],
        Duration::from_secs(10),
        Duration::from_secs(3),
    )
    .unwrap();
    drop(bed);
    let names = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&names.stdout).contains(&ns),
        "namespaces left behind"
    );
    let tfrc = res[0].goodput_bps(window);
    let tcp = res[1].goodput_bps(window);
    eprintln!(
        "goodput over 3-10 s: tfrc {:.3} Mb/s, tcp-cubic {:.3} Mb/s",
        tfrc / 1e6,
        tcp / 1e6
    );
    // The TFRC sender's state every 100 ms for 1.5 s, then once a second, and both sessions' counters, to tell a transport
    // stall from the protocol's rate when a check below fails.
    for (k, smp) in res[0]
        .sender
        .iter()
        .enumerate()
        .filter(|(k, _)| *k < 15 || (k + 1) % 10 == 0)
    {
        eprintln!(
            "{:>4.1} s: delivered {} B, rate {:?} B/s, p {:?}, rtt {:?}, sent {}, timeouts {}",
            (k + 1) as f64 / 10.0,
            res[0].delivered[k],
            smp.rate,
            smp.p,
            smp.rtt,
            smp.packets_sent,
            smp.timeouts
        );
    }
    eprintln!(
        "tfrc sender {:?}\ntfrc receiver {:?}",
        res[0].sender_counters, res[0].receiver_counters
    );
    let sum = tfrc + tcp;
    // Goodput counts payload only; the bottleneck carries headers on top.
    assert!(sum <= 10e6 * 1.02, "sum {sum} above the bottleneck");
    assert!(sum >= 10e6 * 0.8, "bottleneck under-used: {sum}");
    assert!(
        tfrc > 0.1 * sum && tcp > 0.1 * sum,
        "tfrc {tfrc}, tcp {tcp}"
    );
}

/// Both directions of the bottleneck are shaped: tbf at the bottleneck's rate with a pfifo of
/// the forward limit on the router's egress to the receivers, and one of the reverse limit on
/// its egress to the senders (the simulator's `bottleneck-rev`).
#[test]
fn the_reverse_direction_has_its_own_tbf_and_queue_limit() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bed = match tfcc_net::testbed::Dumbbell::new(tfcc_net::testbed::Bottleneck {
        rate: tfcc_core::Rate::from_mbps(4),
        limit: 30,
        reverse_limit: 50,
    }) {
        Ok(b) => b,
        Err(tfcc_net::testbed::TestbedError::NotRoot) => return,
        Err(e) => panic!("{e}"),
    };
    let show = |dev: &str| {
        let out = std::process::Command::new("tc")
            .args(["-n", &bed.router_ns(), "-d", "qdisc", "show", "dev", dev])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (fwd, rev) = (show("rd"), show("rs"));
    for (text, limit) in [(&fwd, "limit 30p"), (&rev, "limit 50p")] {
        assert!(
            text.contains("tbf") && text.contains("rate 4Mbit"),
            "{text}"
        );
        assert!(text.contains(limit), "{text}");
        // tbf charges IP packets, as the simulator's links count them.
        assert!(text.contains("overhead -14"), "{text}");
    }
    // A scheduled rate change touches the forward direction only, and keeps its queue limit
    // and size table.
    bed.set_rate(tfcc_core::Rate::from_mbps(2)).unwrap();
    let (fwd, rev) = (show("rd"), show("rs"));
    assert!(
        fwd.contains("rate 2Mbit") && fwd.contains("limit 30p"),
        "{fwd}"
    );
    assert!(fwd.contains("overhead -14"), "{fwd}");
    assert!(rev.contains("rate 4Mbit"), "{rev}");
}
