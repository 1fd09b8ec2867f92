//! Real UDP transport and the emulated-bottleneck harness for the tfcc protocols.
//!
//! Empty until the real-network issue lands: the crate exists so that the workspace layout of
//! `DESIGN.md` builds from the first commit.
