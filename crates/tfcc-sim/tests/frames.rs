//! Per-frame records of a video flow (`RunResult::frames`, written as `frames.parquet`):
//! counts that must hold whatever the protocol, on 002 R2's Vic set-up
//! (`scenarios/002-r2-vic-cwnd.toml`: TFWC, 10 Mb/s, RTT 80 ms, 1 % loss, Algorithm 4).

use std::path::Path;
use tfcc_sim::frames::FrameRecord;
use tfcc_sim::RunResult;

fn run(scenario: &str, overrides: &[&str]) -> RunResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(scenario);
    let sets: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let built = tfcc_sim::scenario::load(&path, &sets, Some(1)).expect("the scenario loads");
    built.into_simulation().expect("it builds").run()
}

const LOSSLESS: &[&str] = &[
    "duration = \"12s\"",
    "measure_from = \"2s\"",
    "topology.bottleneck.loss.p = 0.0",
];

fn check_counts(frames: &[FrameRecord]) {
    assert!(!frames.is_empty());
    for (k, f) in frames.iter().enumerate() {
        assert!(f.delivered <= f.packets, "frame {k}: {f:?}");
        if !f.grabbed {
            assert_eq!((f.bytes, f.packets, f.q), (0, 0, None), "frame {k}");
            assert!(f.complete_at.is_none());
        }
        if let Some(t) = f.complete_at {
            assert!(t > f.t, "frame {k} complete before it was due");
            assert_eq!(f.delivered, f.packets, "frame {k}");
        }
        // A 1000-byte packet carries bytes of at most two frames of this size: a frame needs
        // at least ceil(bytes/1000) packets and at most one more.
        if f.grabbed && f.packets > 0 && f.complete_at.is_some() {
            let min = f.bytes.div_ceil(1000);
            assert!((min..=min + 1).contains(&f.packets), "frame {k}: {f:?}");
        }
    }
    // Slots are on the grid in order: index rises by one (no pauses in these scenarios).
    for w in frames.windows(2) {
        assert_eq!(w[1].index, w[0].index + 1);
        assert!(w[1].t > w[0].t);
    }
}

#[test]
fn a_lossless_run_delivers_every_grabbed_frame_whole() {
    // cbr: Vic without congestion control, the frames paced out by a 100 Mb/s sender.
    for proto in ["tfwc", "tfrc", "cbr"] {
        let protocol = format!("flows.0.protocol = \"{proto}\"");
        let mut sets = [LOSSLESS, &[protocol.as_str()]].concat();
        if proto != "tfwc" {
            // The scenario's params are TFWC's (`preset = "vic"`).
            sets.push("flows.0.params = {}");
        }
        if proto == "cbr" {
            sets.push("flows.0.rate = \"100Mbps\"");
        }
        let r = run("002-r2-vic-cwnd.toml", &sets);
        let frames = &r.frames;
        check_counts(frames);
        // 12 s at 30 fps from t = 0: 360 slots.
        assert_eq!(frames.len(), 360, "{proto}");
        // Frames due in the last second may still be on their way at the end.
        let settled: Vec<&FrameRecord> = frames
            .iter()
            .filter(|f| f.grabbed && f.t.as_secs_f64() < 11.0)
            .collect();
        assert!(settled.len() > 300, "{proto}: {} grabbed", settled.len());
        for f in settled {
            assert!(f.complete_at.is_some(), "{proto}: {f:?}");
            assert_eq!(f.delivered, f.packets);
        }
        // Every slot says what the send buffer held when the frame came due. Vic without
        // congestion control (002 Fig. 6.6) has sent the frame before the next one comes.
        assert!(frames.iter().all(|f| f.sbuf_bytes.is_some()), "{proto}");
        if proto == "cbr" {
            assert!(frames.iter().all(|f| f.sbuf_bytes == Some(0)), "{proto}");
        }
    }
}

#[test]
fn a_lossy_run_loses_frames_and_the_counts_hold() {
    let r = run(
        "002-r2-vic-cwnd.toml",
        &["duration = \"20s\"", "measure_from = \"2s\""],
    );
    check_counts(&r.frames);
    let grabbed: Vec<&FrameRecord> = r.frames.iter().filter(|f| f.grabbed).collect();
    let whole = grabbed.iter().filter(|f| f.complete_at.is_some()).count();
    let broken = grabbed
        .iter()
        .filter(|f| f.t.as_secs_f64() < 19.0 && f.complete_at.is_none())
        .count();
    eprintln!(
        "slots {}, grabbed {}, whole {whole}, broken {broken}",
        r.frames.len(),
        grabbed.len()
    );
    // 1 % packet loss, frames of about 7 packets: some frames lose one, most arrive whole;
    // Algorithm 4 suspends some slots (Fig. 6.7: about 20 fps of 30).
    assert!(
        broken > 0 && whole > 4 * broken,
        "whole {whole}, broken {broken}"
    );
    assert!(grabbed.len() < r.frames.len());
    // `sbuf_bytes` is what Algorithm 4 read: every suspended slot found more than 5 frames of
    // about 6.25 packets (numAvg rounds each frame up: 7) waiting, and the window of about 10
    // packets per RTT keeps the buffer from emptying between frames most of the time.
    for f in r.frames.iter().filter(|f| !f.grabbed) {
        let sbuf = f.sbuf_bytes.expect("TFWC reports its send buffer");
        assert!(sbuf > 5 * 6_000, "{f:?}");
    }
    let waiting = r
        .frames
        .iter()
        .filter(|f| f.sbuf_bytes.is_some_and(|b| b > 0))
        .count();
    assert!(
        2 * waiting > r.frames.len(),
        "{waiting} of {}",
        r.frames.len()
    );
    // A frame that misses a packet is one whose packets were not all delivered.
    for f in grabbed
        .iter()
        .filter(|f| f.complete_at.is_none() && f.t.as_secs_f64() < 19.0)
    {
        assert!(f.delivered < f.packets, "{f:?}");
    }
}

#[test]
fn frame_records_are_deterministic_and_absent_without_video() {
    let short = ["duration = \"5s\"", "measure_from = \"1s\""];
    let a = run("002-r2-vic-cwnd.toml", &short);
    let b = run("002-r2-vic-cwnd.toml", &short);
    assert_eq!(a.frames, b.frames);
    let plain = run(
        "000-dumbbell.toml",
        &["duration = \"3s\"", "measure_from = \"1s\""],
    );
    assert!(plain.frames.is_empty());
}
