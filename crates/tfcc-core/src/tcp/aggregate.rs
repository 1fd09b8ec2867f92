//! PTCP's multi-connection mechanism (001 Sec. 2.3, Fig. 4): a proxy controls the *sum* of the
//! throughput of `N_pm` connections towards one required throughput `bw`.
//!
//! What the thesis states, and how it is read here:
//!
//! - "The multiple TCP connections use the same values for the length of the evaluation and
//!   control slots, which are set based on the minimum sRTT": one [`Ptcp`] controller holds
//!   the slots, the target `g_i`, `s` and the Eq. 3/4 regime of the aggregate; it is fed the
//!   ACKs and new segments of every member and the smallest sRTT among the active members.
//! - The multi-connection Eq. 2, `k_bw = 2·{(g_i·srtt_i·s − a_j^sum)/N_pm − (s−n_j−1)·cwnd}
//!   / ((s−n_j−1)(s−n_j))`: [`Ptcp::eq2_shared`] with this member's own window (and the
//!   `eq2_reserve` reading of the single-connection Eq. 2).
//! - "Sharing `k_max`" (Sec. 3.2, Fig. 9's explanation) has no formula in the thesis. Reading
//!   chosen (spec 001 §2.7): Eq. 3/4 are evaluated for the aggregate, with the sum of the
//!   active members' windows in place of `cwnd`, and the headroom is split evenly:
//!   `k_max = (A·srtt_i − Σcwnd)/N_pm` (Eq. 4 likewise). Each connection running Eq. 3/4 on its
//!   own would let every one of them claim the whole available bandwidth at once, the
//!   synchronized bursts the thesis blames for "For one" failing.
//! - `N_pm` counts *active* connections (001 Sec. 2.3: the proxy "can identify the number of
//!   active TCP connections"): a member that has neither sent nor been acknowledged for
//!   [`PtcpConfig::group_idle`] is left out until it does again; members may join at any time.
//!   A short-lived member (a SURGE transfer of 001 Sec. 3.3.2, [`Aggregate::close`]) leaves at
//!   once when its transfer is done, as a proxy sees a connection close, and is back with the
//!   first segment of its next transfer.
//! - A member in loss recovery or slow start does not apply `k` (Eq. 1 is congestion avoidance
//!   only, 001 Sec. 2.2) but stays "active": its ACKs count in the aggregate's slots, its window
//!   in `Σcwnd`, and by default it keeps its share of the need and of `k_max`
//!   ([`GroupShare::Active`], the text's word). The thesis does not say more;
//!   [`GroupShare::CongAvoid`] splits both over the members in congestion avoidance only.
//! - `k_min = 1` (001 Sec. 2.2.2, "to preserve the basic characteristics of TCP Reno") holds
//!   per member by default ([`GroupKMin::PerMember`]): every connection stays at least a Reno
//!   connection. Sec. 2.3 does not say; [`GroupKMin::Shared`] floors the sum instead.
//!
//! The aggregate lives behind an `Arc<Mutex<_>>` shared by its members' senders, the one place
//! where sans-IO endpoints share state: the proxy of Fig. 4 is one host. The lock is taken once
//! per ACK and per new segment, and never allocates.

use std::sync::{Arc, Mutex, MutexGuard};

use super::ptcp::{GroupKMin, GroupShare, PathEstimate, Ptcp, PtcpConfig};
use crate::time::{Dur, Time};

/// One member's view as the aggregate last saw it.
#[derive(Clone, Copy, Debug, Default)]
struct Member {
    cwnd: f64,
    srtt: Option<Dur>,
    /// Last segment sent or ACK received.
    last: Option<Time>,
    /// Its last ACK was in congestion avoidance (the TCP asked for `k`), and no window cut
    /// since ([`GroupShare::CongAvoid`]).
    in_ca: bool,
    /// Its transfer is over ([`Aggregate::close`]): not active until it sends again.
    closed: bool,
}

/// The shared controller of one aggregate.
#[derive(Debug)]
pub struct Aggregate {
    ctl: Ptcp,
    members: Vec<Member>,
    idle: Dur,
    share: GroupShare,
    k_min: GroupKMin,
}

/// The handle a member's sender keeps.
pub type AggregateHandle = Arc<Mutex<Aggregate>>;

/// The members active at `now` (never fewer than the asking member), the sum of their
/// windows, and their smallest sRTT.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Active {
    pub n: u32,
    /// Of those, the members in congestion avoidance (`me` always counted).
    pub n_ca: u32,
    pub cwnd_sum: f64,
    pub min_srtt: Option<Dur>,
}

impl Aggregate {
    /// A controller for the aggregate; `cfg.bw` is the aggregate's requirement.
    pub fn new(cfg: PtcpConfig, segment_size: u32) -> Aggregate {
        let idle = cfg.group_idle;
        let share = cfg.group_share;
        let k_min = cfg.group_k_min;
        Aggregate {
            ctl: Ptcp::new(cfg, segment_size),
            members: Vec::new(),
            idle,
            share,
            k_min,
        }
    }

    /// A shared handle.
    pub fn shared(cfg: PtcpConfig, segment_size: u32) -> AggregateHandle {
        Arc::new(Mutex::new(Aggregate::new(cfg, segment_size)))
    }

    /// Register a member; returns its index.
    pub fn join(&mut self) -> usize {
        self.members.push(Member::default());
        self.members.len() - 1
    }

    /// The aggregate's controller (slots, `s`, targets).
    pub fn ctl(&self) -> &Ptcp {
        &self.ctl
    }

    /// Number of registered members, active or not.
    pub fn members(&self) -> usize {
        self.members.len()
    }

    /// The active members at `now`, `me` always among them.
    pub fn active(&self, now: Time, me: usize) -> Active {
        let mut a = Active {
            n: 0,
            n_ca: 0,
            cwnd_sum: 0.0,
            min_srtt: None,
        };
        for (i, m) in self.members.iter().enumerate() {
            let live = i == me
                || !m.closed
                    && m.last
                        .is_some_and(|t| now.saturating_since(t) < self.idle || t > now);
            if !live {
                continue;
            }
            a.n += 1;
            if i == me || m.in_ca {
                a.n_ca += 1;
            }
            a.cwnd_sum += m.cwnd;
            if let Some(s) = m.srtt.filter(|s| !s.is_zero()) {
                a.min_srtt = Some(a.min_srtt.map_or(s, |x: Dur| x.min(s)));
            }
        }
        a
    }

    /// Member `me` sent a new data segment (`a_j^sum`).
    pub fn on_data_sent(&mut self, now: Time, me: usize) {
        if let Some(m) = self.members.get_mut(me) {
            m.last = Some(now);
            m.closed = false;
        }
        self.ctl.on_data_sent();
    }

    /// Member `me` finished its transfer (a short-lived connection closed, 001 Sec. 3.3.2):
    /// it leaves `N_pm`, `Σcwnd` and the smallest sRTT now, not [`PtcpConfig::group_idle`]
    /// later, and joins again with the next new segment it sends. ACKs that still reach it
    /// count in the aggregate's slots but do not make it active.
    pub fn close(&mut self, me: usize) {
        if let Some(m) = self.members.get_mut(me) {
            m.closed = true;
            m.in_ca = false;
        }
    }

    /// Member `me` got an ACK moving its cumulative point by `acked` segments.
    pub fn on_acked(&mut self, now: Time, me: usize, acked: u64, srtt: Option<Dur>, cwnd: f64) {
        let Some(m) = self.members.get_mut(me) else {
            return;
        };
        m.last = Some(now);
        m.cwnd = cwnd;
        // Set again by `increase` if the TCP applies `k` on this ACK.
        m.in_ca = false;
        if let Some(s) = srtt.filter(|s| !s.is_zero()) {
            m.srtt = Some(s);
        }
        let a = self.active(now, me);
        self.ctl.on_acked(now, acked, a.min_srtt, a.cwnd_sum);
    }

    /// Member `me` cut its window (a fast retransmit, or a timeout when `timeout`): counted in
    /// the aggregate's slots; the member is in loss recovery until an ACK finds it back in
    /// congestion avoidance.
    pub fn on_cut(&mut self, me: usize, timeout: bool) {
        if let Some(m) = self.members.get_mut(me) {
            m.in_ca = false;
        }
        self.ctl.on_cut(timeout);
    }

    /// The `k` of Eq. 1 for member `me` with window `cwnd`: the multi-connection Eq. 2, the
    /// shared Eq. 3/4 and the bounds.
    pub fn increase(&mut self, now: Time, me: usize, cwnd: f64, est: Option<PathEstimate>) -> f64 {
        if let Some(m) = self.members.get_mut(me) {
            m.cwnd = cwnd;
            m.in_ca = true;
        }
        let k_min = self.ctl.config().k_min_value;
        if !self.ctl.started() {
            return k_min;
        }
        let a = self.active(now, me);
        let n_pm = match self.share {
            GroupShare::Active => a.n,
            GroupShare::CongAvoid => a.n_ca,
        };
        let k_bw = self.ctl.eq2_shared(now, cwnd, n_pm);
        let k_max = self
            .ctl
            .eq34(a.cwnd_sum, est)
            .map_or(k_min, |h| h / f64::from(n_pm.max(1)));
        let floor = match self.k_min {
            GroupKMin::PerMember => k_min,
            GroupKMin::Shared => k_min / f64::from(n_pm.max(1)),
        };
        self.ctl.apply_bounds_with(k_bw, k_max, floor)
    }
}

/// Lock an aggregate; a member that panicked while holding it (it cannot: nothing in here
/// panics) would leave the state as it was, so a poisoned lock is used as is.
pub fn lock(h: &AggregateHandle) -> MutexGuard<'_, Aggregate> {
    h.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Rate;

    const MS: u64 = 1_000_000;

    fn agg(n: usize) -> (Aggregate, Vec<usize>) {
        let mut a = Aggregate::new(
            PtcpConfig {
                bw: Rate::from_mbps(20),
                eq2_reserve: 1,
                group: Some("g".into()),
                ..PtcpConfig::default()
            },
            1000,
        );
        let ids = (0..n).map(|_| a.join()).collect();
        (a, ids)
    }

    #[test]
    fn eq2_splits_the_aggregate_need_over_the_active_members() {
        // 001 Sec. 2.3: bw = 2500 pkt/s, s = 16, srtt = 25 ms: the slot needs 1000 packets;
        // 10 members, none sent yet, each with cwnd 4 at n = 0:
        // k = 2·(1000/10 − 15·4)/(15·16) = 80/240.
        let (mut a, ids) = agg(10);
        for &i in &ids {
            a.on_acked(Time::ZERO, i, 0, Some(Dur::from_millis(25)), 4.0);
        }
        assert_eq!(a.active(Time::ZERO, 0).n, 10);
        let roomy = PathEstimate {
            available: 12_000.0,
            capacity: 12_000.0,
        };
        let k = a.ctl().eq2_shared(Time(10 * MS), 4.0, 10);
        assert!((k - 80.0 / 240.0).abs() < 1e-9);
        // With k_min = 1 the increase is Reno's here.
        assert_eq!(a.increase(Time(10 * MS), 0, 4.0, Some(roomy)), 1.0);
        // 200 packets already sent by member 3: (800/10 − 15·2)·2/240 for a window of 2.
        for _ in 0..200 {
            a.on_data_sent(Time(5 * MS), 3);
        }
        let k = a.ctl().eq2_shared(Time(10 * MS), 2.0, 10);
        assert!((k - 2.0 * (80.0 - 30.0) / 240.0).abs() < 1e-9);
    }

    #[test]
    fn k_max_is_the_aggregate_headroom_split_evenly() {
        // Eq. 3 for the aggregate: A = 4000 pkt/s, srtt = 25 ms → 100 packets of room; windows
        // 10 × 2 = 20 in use; each of the 10 members may add (100 − 20)/10 = 8 per RTT.
        let (mut a, ids) = agg(10);
        for &i in &ids {
            a.on_acked(Time::ZERO, i, 0, Some(Dur::from_millis(25)), 2.0);
        }
        let est = PathEstimate {
            available: 4000.0,
            capacity: 12_000.0,
        };
        // Far behind (n = 14 of 16, nothing sent: m = 1, k_bw = 1000/10 − 2 = 98): k_max binds.
        let k = a.increase(Time(360 * MS), 0, 2.0, Some(est));
        assert!((k - 8.0).abs() < 1e-9, "{k}");
        // A single connection with the same room would take all of it: 100 − 2 = 98.
        let mut one = Ptcp::new(
            PtcpConfig {
                eq2_reserve: 1,
                ..PtcpConfig::default()
            },
            1000,
        );
        one.on_acked(Time::ZERO, 0, Some(Dur::from_millis(25)), 2.0);
        assert!((one.increase(Time(360 * MS), 2.0, Some(est)) - 98.0).abs() < 1e-9);
    }

    #[test]
    fn idle_members_leave_n_pm_and_rejoin_when_they_send() {
        let (mut a, ids) = agg(3);
        for &i in &ids {
            a.on_acked(Time::ZERO, i, 0, Some(Dur::from_millis(25)), 10.0);
        }
        assert_eq!(a.active(Time(100 * MS), 0).n, 3);
        // Members 1 and 2 fall silent; after group_idle (500 ms) only member 0 counts.
        a.on_acked(Time(600 * MS), 0, 1, Some(Dur::from_millis(25)), 10.0);
        let act = a.active(Time(600 * MS), 0);
        assert_eq!((act.n, act.cwnd_sum), (1, 10.0));
        // Member 2 sends again: back in.
        a.on_data_sent(Time(610 * MS), 2);
        assert_eq!(a.active(Time(620 * MS), 0).n, 2);
        // A member joining later counts once it is active.
        let late = a.join();
        a.on_acked(Time(630 * MS), late, 0, Some(Dur::from_millis(30)), 3.0);
        assert_eq!(a.active(Time(640 * MS), 0).n, 3);
    }

    #[test]
    fn a_closed_member_leaves_at_once_and_rejoins_with_new_data() {
        // 001 Sec. 3.3.2's short-lived connections: a transfer that is done leaves N_pm (and
        // Σcwnd) now, not group_idle later; a late ACK does not bring it back, its next
        // transfer's first segment does.
        let (mut a, ids) = agg(2);
        for &i in &ids {
            a.on_acked(Time::ZERO, i, 0, Some(Dur::from_millis(25)), 10.0);
        }
        a.close(ids[1]);
        let act = a.active(Time(MS), ids[0]);
        assert_eq!((act.n, act.cwnd_sum), (1, 10.0));
        a.on_acked(Time(2 * MS), ids[1], 1, Some(Dur::from_millis(25)), 10.0);
        assert_eq!(a.active(Time(2 * MS), ids[0]).n, 1);
        a.on_data_sent(Time(3 * MS), ids[1]);
        assert_eq!(a.active(Time(3 * MS), ids[0]).n, 2);
    }

    #[test]
    fn members_in_loss_recovery_leave_the_share_only_when_configured() {
        // 10 members, windows of 2, A = 4000 pkt/s, srtt = 25 ms: 100 − 20 = 80 packets of
        // headroom. Members 1-4 cut their windows (loss recovery) and are not back in
        // congestion avoidance.
        for (share, n) in [(GroupShare::Active, 10.0), (GroupShare::CongAvoid, 6.0)] {
            let mut a = Aggregate::new(
                PtcpConfig {
                    eq2_reserve: 1,
                    group: Some("g".into()),
                    group_share: share,
                    ..PtcpConfig::default()
                },
                1000,
            );
            let ids: Vec<usize> = (0..10).map(|_| a.join()).collect();
            let est = PathEstimate {
                available: 4000.0,
                capacity: 12_000.0,
            };
            for &i in &ids {
                a.on_acked(Time::ZERO, i, 0, Some(Dur::from_millis(25)), 2.0);
                a.increase(Time::ZERO, i, 2.0, Some(est));
            }
            for &i in &ids[1..5] {
                a.on_cut(i, false);
            }
            assert_eq!(a.active(Time(360 * MS), 0).n_ca, 6);
            // Far behind (m = 1): k_max binds, the headroom split over n members.
            let k = a.increase(Time(360 * MS), 0, 2.0, Some(est));
            assert!((k - 80.0 / n).abs() < 1e-9, "{share:?}: {k}");
            // A recovery ACK (no `increase` after it) keeps a member out; a CA ACK brings it in.
            a.on_acked(Time(361 * MS), ids[1], 1, Some(Dur::from_millis(25)), 2.0);
            assert_eq!(a.active(Time(361 * MS), 0).n_ca, 6);
            a.increase(Time(361 * MS), ids[1], 2.0, Some(est));
            assert_eq!(a.active(Time(361 * MS), 0).n_ca, 7);
        }
    }

    #[test]
    fn k_min_holds_per_member_or_for_the_sum_as_configured() {
        // 10 members well ahead (a window of 100 against 1000/10 packets needed: k_bw < 0),
        // plenty of room: k is the floor, 1 per member or 1/10 each for the sum.
        for (mode, floor) in [(GroupKMin::PerMember, 1.0), (GroupKMin::Shared, 0.1)] {
            let mut a = Aggregate::new(
                PtcpConfig {
                    group: Some("g".into()),
                    group_k_min: mode,
                    ..PtcpConfig::default()
                },
                1000,
            );
            let ids: Vec<usize> = (0..10).map(|_| a.join()).collect();
            for &i in &ids {
                a.on_acked(Time::ZERO, i, 0, Some(Dur::from_millis(25)), 100.0);
            }
            let roomy = PathEstimate {
                available: 120_000.0,
                capacity: 120_000.0,
            };
            let k = a.increase(Time(10 * MS), 0, 100.0, Some(roomy));
            assert!((k - floor).abs() < 1e-12, "{mode:?}: {k}");
        }
    }

    #[test]
    fn slots_follow_the_smallest_srtt_and_the_aggregate_throughput() {
        // Two members, sRTTs 25 and 50 ms: slots of s·25 ms. Each acks 500 packets in the
        // first 400 ms: 2500 pkt/s together = bw, met although each alone is at half.
        let (mut a, ids) = agg(2);
        a.on_acked(Time::ZERO, ids[0], 0, Some(Dur::from_millis(25)), 10.0);
        a.on_acked(Time::ZERO, ids[1], 0, Some(Dur::from_millis(50)), 10.0);
        for j in 0..500u64 {
            let t = Time(j * 400 * MS / 500);
            a.on_acked(t, ids[0], 1, Some(Dur::from_millis(25)), 10.0);
            a.on_acked(t, ids[1], 1, Some(Dur::from_millis(50)), 10.0);
        }
        a.on_acked(Time(400 * MS), ids[0], 0, Some(Dur::from_millis(25)), 10.0);
        let c = a.ctl().ctrl_slots()[0];
        assert_eq!(c.end, Time(400 * MS));
        assert!((c.tput - 2500.0).abs() < 1e-6 && c.tput >= c.target);
    }
}
