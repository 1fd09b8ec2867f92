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
