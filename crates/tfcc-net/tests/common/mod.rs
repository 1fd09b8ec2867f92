//! What the namespace tests (`relay.rs`, `testbed.rs`) share: their dumbbell, or a skip.

use tfcc_core::Rate;
use tfcc_net::testbed::{Bottleneck, Dumbbell, TestbedError};

/// The 10 Mb/s dumbbell with a 100-packet queue both tests run on, or `None` (after saying
/// "skipped") when the tests do not run as root; any other set-up error fails the test.
#[allow(dead_code)] // each test crate compiles this module; not every one uses both functions
pub fn ten_mbps_dumbbell() -> Option<Dumbbell> {
    dumbbell(10, 100)
}

/// A dumbbell of `mbps` with a `limit`-packet queue, or `None` when not root (as above).
#[allow(dead_code)]
pub fn dumbbell(mbps: u64, limit: u32) -> Option<Dumbbell> {
    match Dumbbell::new(Bottleneck::symmetric(Rate::from_mbps(mbps), limit)) {
        Ok(b) => Some(b),
        Err(TestbedError::NotRoot) => {
            eprintln!("skipped: not root");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// `make test` runs testbed.rs's namespace tests in the background from right after the
/// install, beside lint and the Rust build (scripts/testbed_tests.sh), and its main Rust test
/// run skips them with `TFCC_SKIP_TESTBED=1`; the relay's echo test, which measures an RTT,
/// stays in the main run, after them.
#[allow(dead_code)]
pub fn testbed_skipped() -> bool {
    let skip = std::env::var_os("TFCC_SKIP_TESTBED").is_some_and(|v| v == "1");
    if skip {
        eprintln!("skipped: TFCC_SKIP_TESTBED=1");
    }
    skip
}
