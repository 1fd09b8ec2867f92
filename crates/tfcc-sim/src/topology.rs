//! Topologies: links plus, for each flow, a forward and a reverse route (lists of link ids).
//!
//! Packets carry their hop index and follow their flow's route, so the simulator needs no
//! routing tables and no per-node objects; nodes only exist to check that a custom route is
//! connected. Builders cover the theses' shapes:
//! - dumbbell with per-flow access links on both sides (004, 002, 000, 003 E2.2/E3.3);
//! - parking lot: a chain of bottlenecks crossed by long flows and one-hop cross flows (003's
//!   multi-bottleneck check of E2.2);
//! - custom: named nodes, links between them, and per-flow routes by link name.
//!
//! Links are unidirectional; each builder creates a reverse link for every forward link, named
//! with a `-rev` suffix, with the same rate, delay and queue and no artificial loss (loss
//! models apply to the data direction; give the reverse link a loss model explicitly if needed).

use crate::link::{LinkId, LinkSpec};
use crate::queue::{QueueLimit, QueueSpec};
use crate::SimError;
use std::collections::HashMap;
use tfcc_core::{Dur, Rate};

/// A flow's path: link ids from sender to receiver and back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub forward: Vec<LinkId>,
    pub reverse: Vec<LinkId>,
}

/// Propagation delay of per-flow access links: one value, or spread over the flows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DelaySpread {
    Fixed(Dur),
    /// Flow `i` of `n` gets `lo + (hi − lo)·i/(n − 1)`: evenly spaced, so the spread is exactly
    /// uniform over the flows and reproducible without random draws (003 E2.2 spreads RTTs
    /// "uniformly" to set CV\[RTT\]; a deterministic spread hits the intended CV exactly).
    Uniform {
        lo: Dur,
        hi: Dur,
    },
    /// Flow `i` draws its delay uniformly from `[lo, hi]` on its own stream
    /// (`access/{i}` of the run's `seed`): the thesis set-ups that randomise access delays per
    /// seed (002 Sec. 4.1: "the seeds randomise [...] the per-source access delays").
    Random {
        lo: Dur,
        hi: Dur,
        seed: u64,
    },
}

impl DelaySpread {
    pub fn for_flow(&self, i: usize, n: usize) -> Dur {
        match *self {
            DelaySpread::Fixed(d) => d,
            DelaySpread::Uniform { lo, hi } => {
                if n <= 1 {
                    // One flow: the middle of the range keeps the mean.
                    Dur((lo.0 + hi.0) / 2)
                } else {
                    let span = u128::from(hi.0.saturating_sub(lo.0));
                    Dur(lo.0 + (span * i as u128 / (n as u128 - 1)) as u64)
                }
            }
            DelaySpread::Random { lo, hi, seed } => {
                Dur(crate::rng::SimRng::named(seed, &format!("access/{i}")).uniform_u64(lo.0, hi.0))
            }
        }
    }
}

/// Per-flow access links (sender to the first router, last router to the receiver).
#[derive(Clone, Debug, PartialEq)]
pub struct AccessSpec {
    pub rate: Rate,
    pub delay: DelaySpread,
    /// ns-2's default `Queue set limit_ 50` DropTail when not set by the scenario.
    pub queue: QueueSpec,
}

impl AccessSpec {
    pub fn new(rate: Rate, delay: DelaySpread) -> AccessSpec {
        AccessSpec {
            rate,
            delay,
            queue: QueueSpec::DropTail(QueueLimit::Packets(crate::queue::NS2_DEFAULT_LIMIT)),
        }
    }
}

/// A dumbbell: `flows` senders, each on its own access link, into router R1, the bottleneck
/// R1→R2 (named by `bottleneck.name`), and per-flow access links to the receivers.
#[derive(Clone, Debug, PartialEq)]
pub struct DumbbellSpec {
    pub bottleneck: LinkSpec,
    pub access: AccessSpec,
    pub flows: usize,
}

/// A parking lot: `hops` bottlenecks in a chain; `long_flows` cross all of them, then
/// `cross_flows_per_hop` flows cross each hop alone. Routes are numbered in that order: long
/// flows first, then hop 0's cross flows, hop 1's, and so on.
#[derive(Clone, Debug, PartialEq)]
pub struct ParkingLotSpec {
    pub hops: Vec<LinkSpec>,
    pub access: AccessSpec,
    pub long_flows: usize,
    pub cross_flows_per_hop: usize,
}

/// A link of a custom topology, between two named nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomLink {
    pub spec: LinkSpec,
    pub from: String,
    pub to: String,
}

/// A custom route by link names.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomRoute {
    pub forward: Vec<String>,
    pub reverse: Vec<String>,
}

/// Links and routes, ready for a [`crate::Simulation`].
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    pub links: Vec<LinkSpec>,
    pub routes: Vec<Route>,
}

fn reverse_of(spec: &LinkSpec) -> LinkSpec {
    LinkSpec {
        name: format!("{}-rev", spec.name),
        rate: spec.rate,
        delay: spec.delay,
        queue: spec.queue.clone(),
        loss: None,
    }
}

impl Topology {
    /// The id of the link called `name`.
    pub fn link_id(&self, name: &str) -> Option<LinkId> {
        self.links
            .iter()
            .position(|l| l.name == name)
            .map(|i| i as LinkId)
    }

    /// The propagation delays of route `route`'s links as configured, summed per direction
    /// (forward, reverse), in nanoseconds: a flow's base RTT is their sum (the simulator's
    /// `FlowSummary::base_rtt_s`), and the testbed's relay holds each direction's packets for
    /// its sum, so both backends take a route's delays from here. `u128`: every link delay
    /// fits the clock's `u64` nanoseconds (584 years), but a route's sum of them need not.
    pub fn route_delays_ns(&self, route: usize) -> [u128; 2] {
        let r = &self.routes[route];
        let sum = |ids: &[LinkId]| {
            ids.iter()
                .map(|&l| u128::from(self.links[l as usize].delay.as_nanos()))
                .sum()
        };
        [sum(&r.forward), sum(&r.reverse)]
    }

    /// A flow on route `route`'s propagation RTT in seconds, its links' delays there and back
    /// as configured, without queueing or transmission time: the summary's `base_rtt_s` on
    /// both backends (the RTT a set-up assigns a flow, by which 003 E2.2 names the
    /// "shortest-RTT flow"). As `nanos_to_secs_f64`: `u128 as f64` rounds as `u64 as f64`.
    pub fn base_rtt_s(&self, route: usize) -> f64 {
        self.route_delays_ns(route).iter().sum::<u128>() as f64 / 1e9
    }

    fn push(&mut self, spec: LinkSpec) -> LinkId {
        self.links.push(spec);
        (self.links.len() - 1) as LinkId
    }

    /// Add a forward link and its reverse twin; returns both ids.
    fn push_pair(&mut self, spec: LinkSpec) -> (LinkId, LinkId) {
        let rev = reverse_of(&spec);
        (self.push(spec), self.push(rev))
    }

    /// Access links for flow `i` of `n`; returns (src fwd, src rev, dst fwd, dst rev).
    fn push_access(&mut self, a: &AccessSpec, i: usize, n: usize) -> [LinkId; 4] {
        let d = a.delay.for_flow(i, n);
        let (sf, sr) = self.push_pair(LinkSpec::new(
            format!("access-src-{i}"),
            a.rate,
            d,
            a.queue.clone(),
        ));
        let (df, dr) = self.push_pair(LinkSpec::new(
            format!("access-dst-{i}"),
            a.rate,
            d,
            a.queue.clone(),
        ));
        [sf, sr, df, dr]
    }

    /// One link each way between two nodes and one route over it (any number of flows may use
    /// route 0): the path of the single-flow experiments (004 E1, a lossy link) and of most unit
    /// tests. The reverse link is `spec` without its loss model, named `NAME-rev`.
    pub fn single_link(spec: LinkSpec) -> Result<Topology, SimError> {
        let mut t = Topology {
            links: Vec::with_capacity(2),
            routes: Vec::with_capacity(1),
        };
        let (f, r) = t.push_pair(spec);
        t.routes.push(Route {
            forward: vec![f],
            reverse: vec![r],
        });
        t.validate()?;
        Ok(t)
    }

    pub fn dumbbell(spec: &DumbbellSpec) -> Result<Topology, SimError> {
        Topology::dumbbell_directed(spec, None, &[])
    }

    /// A dumbbell whose flow `i` sends right to left when `reverse[i]` (flows past the end of
    /// `reverse` send left to right), and whose bottleneck's reverse direction has the queue
    /// `reverse_queue` (default: a copy of the bottleneck's).
    ///
    /// A reverse flow keeps its own access links but uses them the other way round: its data
    /// goes `access-dst-i-rev`, `bottleneck-rev`, `access-src-i-rev` and its ACKs
    /// `access-src-i`, `bottleneck`, `access-dst-i`, so its data queues at `bottleneck-rev`
    /// with the forward flows' ACKs and its ACKs at `bottleneck` with their data: the
    /// two-way traffic of 002 Secs. 4.2 and 4.4 ("reverse path TCP flows [...] reduce
    /// simulator phase effects and reveal any issues that might be caused by TFWC Ack
    /// compression").
    pub fn dumbbell_directed(
        spec: &DumbbellSpec,
        reverse_queue: Option<QueueSpec>,
        reverse: &[bool],
    ) -> Result<Topology, SimError> {
        let mut t = Topology {
            links: Vec::with_capacity(2 + 4 * spec.flows),
            routes: Vec::with_capacity(spec.flows),
        };
        let mut rev = reverse_of(&spec.bottleneck);
        if let Some(q) = reverse_queue {
            rev.queue = q;
        }
        let bf = t.push(spec.bottleneck.clone());
        let br = t.push(rev);
        for i in 0..spec.flows {
            let [sf, sr, df, dr] = t.push_access(&spec.access, i, spec.flows);
            let (forward, reverse) = if reverse.get(i).copied().unwrap_or(false) {
                (vec![dr, br, sr], vec![sf, bf, df])
            } else {
                (vec![sf, bf, df], vec![dr, br, sr])
            };
            t.routes.push(Route { forward, reverse });
        }
        t.validate()?;
        Ok(t)
    }

    pub fn parking_lot(spec: &ParkingLotSpec) -> Result<Topology, SimError> {
        let n = spec.long_flows + spec.cross_flows_per_hop * spec.hops.len();
        let mut t = Topology {
            links: Vec::new(),
            routes: Vec::with_capacity(n),
        };
        let hops: Vec<(LinkId, LinkId)> =
            spec.hops.iter().map(|h| t.push_pair(h.clone())).collect();
        let mut flow = 0;
        for _ in 0..spec.long_flows {
            let [sf, sr, df, dr] = t.push_access(&spec.access, flow, n);
            let mut forward = vec![sf];
            forward.extend(hops.iter().map(|h| h.0));
            forward.push(df);
            let mut reverse = vec![dr];
            reverse.extend(hops.iter().rev().map(|h| h.1));
            reverse.push(sr);
            t.routes.push(Route { forward, reverse });
            flow += 1;
        }
        for h in &hops {
            for _ in 0..spec.cross_flows_per_hop {
                let [sf, sr, df, dr] = t.push_access(&spec.access, flow, n);
                t.routes.push(Route {
                    forward: vec![sf, h.0, df],
                    reverse: vec![dr, h.1, sr],
                });
                flow += 1;
            }
        }
        t.validate()?;
        Ok(t)
    }

    /// A parking lot whose flows each cross a contiguous span of hops: flow `i` crosses hops
    /// `spans[i].0 ..= spans[i].1` (the scenario format's per-flow `hops = [first, last]`),
    /// with its own access links on both sides. [`Topology::parking_lot`] is the special case
    /// of long flows over every hop plus one-hop cross flows.
    pub fn parking_lot_spans(
        hops: &[LinkSpec],
        access: &AccessSpec,
        spans: &[(usize, usize)],
    ) -> Result<Topology, SimError> {
        let n = spans.len();
        let mut t = Topology {
            links: Vec::with_capacity(2 * hops.len() + 4 * n),
            routes: Vec::with_capacity(n),
        };
        let ids: Vec<(LinkId, LinkId)> = hops.iter().map(|h| t.push_pair(h.clone())).collect();
        for (flow, &(first, last)) in spans.iter().enumerate() {
            if first > last || last >= ids.len() {
                return Err(SimError::InvalidRoute {
                    route: flow,
                    reason: format!(
                        "hops [{first}, {last}] outside the {} hops of the parking lot",
                        ids.len()
                    ),
                });
            }
            let [sf, sr, df, dr] = t.push_access(access, flow, n);
            let mut forward = vec![sf];
            forward.extend(ids[first..=last].iter().map(|h| h.0));
            forward.push(df);
            let mut reverse = vec![dr];
            reverse.extend(ids[first..=last].iter().rev().map(|h| h.1));
            reverse.push(sr);
            t.routes.push(Route { forward, reverse });
        }
        t.validate()?;
        Ok(t)
    }

    /// A custom topology. Every route must be connected (each link ends at the node where the
    /// next begins) and the reverse route must lead from the forward route's last node back
    /// to its first.
    pub fn custom(links: Vec<CustomLink>, routes: Vec<CustomRoute>) -> Result<Topology, SimError> {
        let mut by_name: HashMap<&str, (LinkId, &str, &str)> = HashMap::new();
        for (i, l) in links.iter().enumerate() {
            let prev = by_name.insert(&l.spec.name, (i as LinkId, &l.from, &l.to));
            if prev.is_some() {
                return Err(SimError::DuplicateLink(l.spec.name.clone()));
            }
        }
        let resolve = |r: usize, names: &[String]| -> Result<(Vec<LinkId>, &str, &str), SimError> {
            let mut ids = Vec::with_capacity(names.len());
            let mut ends: Option<(&str, &str)> = None;
            for n in names {
                let &(id, from, to) = by_name
                    .get(n.as_str())
                    .ok_or_else(|| SimError::UnknownLink(n.clone()))?;
                if let Some((_, last)) = ends {
                    if last != from {
                        return Err(SimError::InvalidRoute {
                            route: r,
                            reason: format!("link `{n}` starts at `{from}`, not at `{last}`"),
                        });
                    }
                }
                ends = Some((ends.map_or(from, |e| e.0), to));
                ids.push(id);
            }
            let (a, b) = ends.ok_or(SimError::InvalidRoute {
                route: r,
                reason: "empty route".into(),
            })?;
            Ok((ids, a, b))
        };
        let mut out = Vec::with_capacity(routes.len());
        for (r, route) in routes.iter().enumerate() {
            let (forward, src, dst) = resolve(r, &route.forward)?;
            let (reverse, rsrc, rdst) = resolve(r, &route.reverse)?;
            if rsrc != dst || rdst != src {
                return Err(SimError::InvalidRoute {
                    route: r,
                    reason: format!("reverse route goes {rsrc} -> {rdst}, expected {dst} -> {src}"),
                });
            }
            out.push(Route { forward, reverse });
        }
        let t = Topology {
            links: links.into_iter().map(|l| l.spec).collect(),
            routes: out,
        };
        t.validate()?;
        Ok(t)
    }

    /// The two ends of every link as node numbers, `[from, to]` by link id: the numbers an
    /// ns-2 script building the same network would give its nodes (`tfcc ns2-trace` writes
    /// them into the trace's node columns, docs/scenarios.md `[trace]`).
    ///
    /// The topology holds no nodes, so they are recovered from the routes: consecutive links
    /// of a route meet at a node, and a reverse route crosses its forward route's nodes
    /// backwards (every builder makes it so). Nodes are then numbered in order of first
    /// appearance over the links in id order, each link's `from` before its `to`: for a
    /// dumbbell the routers 0 and 1 and flow `i`'s left and right hosts `2 + 2i` and
    /// `3 + 2i`, the order `bench/ns2/dumbbell.tcl` creates them in. A link no route uses
    /// gets two nodes of its own. (A scenario's custom topology names its nodes and is
    /// numbered in the order of its list instead, `scenario::Built::node_numbers`.)
    pub fn node_numbers(&self) -> Vec<[u32; 2]> {
        // Union-find over link ends: 2·id is a link's `from`, 2·id + 1 its `to`.
        let mut parent: Vec<usize> = (0..2 * self.links.len()).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        let mut join = |a: usize, b: usize| {
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            // The smaller root wins, so the result does not depend on the order of joins.
            parent[ra.max(rb)] = ra.min(rb);
        };
        let (from, to) = (|l: LinkId| 2 * l as usize, |l: LinkId| 2 * l as usize + 1);
        for r in &self.routes {
            for path in [&r.forward, &r.reverse] {
                for w in path.windows(2) {
                    join(to(w[0]), from(w[1]));
                }
            }
            let (f, b) = (&r.forward, &r.reverse);
            if let (Some(&f0), Some(&fl), Some(&b0), Some(&bl)) =
                (f.first(), f.last(), b.first(), b.last())
            {
                join(from(f0), to(bl));
                join(to(fl), from(b0));
            }
            if f.len() == b.len() {
                for (k, &l) in b.iter().enumerate() {
                    let twin = f[f.len() - 1 - k];
                    join(from(l), to(twin));
                    join(to(l), from(twin));
                }
            }
        }
        let mut number: HashMap<usize, u32> = HashMap::new();
        let mut out = Vec::with_capacity(self.links.len());
        for l in 0..self.links.len() as LinkId {
            let mut end = |i: usize| {
                let r = root(&mut parent, i);
                let next = number.len() as u32;
                *number.entry(r).or_insert(next)
            };
            let a = end(from(l));
            out.push([a, end(to(l))]);
        }
        out
    }

    /// Check every link and route: positive rates, unique names, valid loss and queue
    /// parameters, non-empty routes over existing links.
    pub fn validate(&self) -> Result<(), SimError> {
        let mut seen = HashMap::new();
        for l in &self.links {
            if seen.insert(l.name.as_str(), ()).is_some() {
                return Err(SimError::DuplicateLink(l.name.clone()));
            }
            validate_link(l)?;
        }
        for (r, route) in self.routes.iter().enumerate() {
            for (what, path) in [("forward", &route.forward), ("reverse", &route.reverse)] {
                if path.is_empty() {
                    return Err(SimError::InvalidRoute {
                        route: r,
                        reason: format!("empty {what} route"),
                    });
                }
                if path.len() > usize::from(u16::MAX) {
                    return Err(SimError::InvalidRoute {
                        route: r,
                        reason: format!("{what} route longer than {} hops", u16::MAX),
                    });
                }
                if let Some(bad) = path.iter().find(|&&l| l as usize >= self.links.len()) {
                    return Err(SimError::InvalidRoute {
                        route: r,
                        reason: format!("link id {bad} does not exist"),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Check one link's parameters.
pub fn validate_link(l: &LinkSpec) -> Result<(), SimError> {
    let bad = |reason: String| SimError::InvalidLink {
        link: l.name.clone(),
        reason,
    };
    if l.rate.bps() == 0 {
        return Err(bad("rate must be positive".into()));
    }
    match &l.queue {
        QueueSpec::DropTail(QueueLimit::Packets(n)) if *n < 2 => {
            return Err(bad(format!(
                "a DropTail limit of {n} packets admits nothing (ns-2 semantics: limit counts the packet on the wire)"
            )))
        }
        QueueSpec::DropTail(QueueLimit::Bytes(0)) => return Err(bad("byte limit must be positive".into())),
        QueueSpec::Red(c) => {
            if c.limit == 0 {
                return Err(bad("RED limit must be positive".into()));
            }
            if !(0.0..=1.0).contains(&c.max_p) {
                return Err(bad(format!("max_p must be in [0, 1], got {}", c.max_p)));
            }
            if let Some(w) = c.w_q {
                if !(w > 0.0 && w <= 1.0) {
                    return Err(bad(format!("w_q must be in (0, 1], got {w}")));
                }
            }
            let min = c.min_th.unwrap_or(0.0);
            if c.min_th.is_some_and(|m| !(m > 0.0 && m.is_finite())) {
                return Err(bad(format!("min_th must be positive, got {min}")));
            }
            if let Some(max) = c.max_th {
                // With min_th automatic (`None`, ns-2's `thresh_ 0`) the message must not
                // compare against the 0 that stands for it ("got 0 < 0").
                if !(max.is_finite() && max > 0.0) {
                    return Err(bad(format!(
                        "max_th must be a positive number of packets, got {max}"
                    )));
                }
                if max < min {
                    return Err(bad(format!(
                        "max_th must be >= min_th ({min}), got {max}"
                    )));
                }
            }
            if c.mean_pktsize == 0 {
                return Err(bad("mean_pktsize must be positive".into()));
            }
        }
        _ => {}
    }
    if let Some(loss) = &l.loss {
        loss.model.validate().map_err(bad)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bottleneck() -> LinkSpec {
        LinkSpec::new(
            "bottleneck",
            Rate::from_mbps(15),
            Dur::from_millis(20),
            QueueSpec::DropTail(QueueLimit::Packets(100)),
        )
    }

    #[test]
    fn dumbbell_routes_cross_the_shared_bottleneck_both_ways() {
        let t = Topology::dumbbell(&DumbbellSpec {
            bottleneck: bottleneck(),
            access: AccessSpec::new(
                Rate::from_mbps(100),
                DelaySpread::Uniform {
                    lo: Dur::from_millis(10),
                    hi: Dur::from_millis(30),
                },
            ),
            flows: 3,
        })
        .unwrap();
        assert_eq!(t.links.len(), 2 + 4 * 3);
        assert_eq!(t.routes.len(), 3);
        let b = t.link_id("bottleneck").unwrap();
        let br = t.link_id("bottleneck-rev").unwrap();
        for r in &t.routes {
            assert_eq!(r.forward[1], b);
            assert_eq!(r.reverse[1], br);
        }
        // Access delays evenly spread: 10, 20, 30 ms on both sides.
        let delays: Vec<Dur> = t
            .routes
            .iter()
            .map(|r| t.links[r.forward[0] as usize].delay)
            .collect();
        assert_eq!(
            delays,
            [
                Dur::from_millis(10),
                Dur::from_millis(20),
                Dur::from_millis(30)
            ]
        );
        assert_eq!(
            t.links[t.routes[2].forward[2] as usize].delay,
            Dur::from_millis(30)
        );
        assert!(t.links[br as usize].loss.is_none());
    }

    #[test]
    fn nodes_are_numbered_as_the_ns2_dumbbell_script_creates_them() {
        let spec = DumbbellSpec {
            bottleneck: bottleneck(),
            access: AccessSpec::new(
                Rate::from_mbps(100),
                DelaySpread::Fixed(Dur::from_millis(1)),
            ),
            flows: 2,
        };
        // Flow 1 sends right to left: its hosts keep their numbers, only the roles swap.
        let t = Topology::dumbbell_directed(&spec, None, &[false, true]).unwrap();
        let n = t.node_numbers();
        let ends = |name: &str| n[t.link_id(name).unwrap() as usize];
        assert_eq!(ends("bottleneck"), [0, 1]);
        assert_eq!(ends("bottleneck-rev"), [1, 0]);
        assert_eq!(ends("access-src-0"), [2, 0]);
        assert_eq!(ends("access-src-0-rev"), [0, 2]);
        assert_eq!(ends("access-dst-0"), [1, 3]);
        assert_eq!(ends("access-dst-0-rev"), [3, 1]);
        assert_eq!(ends("access-src-1"), [4, 0]);
        assert_eq!(ends("access-dst-1-rev"), [5, 1]);
        // Flow 1's data leaves host 5 and reaches host 4.
        let r = &t.routes[1];
        assert_eq!(n[r.forward[0] as usize][0], 5);
        assert_eq!(n[*r.forward.last().unwrap() as usize][1], 4);
    }

    #[test]
    fn parking_lot_and_custom_nodes_follow_their_links() {
        let hop = |name: &str| {
            let mut l = bottleneck();
            l.name = name.into();
            l
        };
        let access = AccessSpec::new(
            Rate::from_mbps(100),
            DelaySpread::Fixed(Dur::from_millis(1)),
        );
        // Two hops (routers 0, 1, 2), a long flow (hosts 3, 4) and a cross flow on hop 1
        // (hosts 5, 6).
        let t =
            Topology::parking_lot_spans(&[hop("hop0"), hop("hop1")], &access, &[(0, 1), (1, 1)])
                .unwrap();
        let n = t.node_numbers();
        let ends = |name: &str| n[t.link_id(name).unwrap() as usize];
        assert_eq!(ends("hop0"), [0, 1]);
        assert_eq!(ends("hop1-rev"), [2, 1]);
        assert_eq!(ends("access-src-0"), [3, 0]);
        assert_eq!(ends("access-dst-0"), [2, 4]);
        assert_eq!(ends("access-src-1"), [5, 1]);
        assert_eq!(ends("access-dst-1-rev"), [6, 2]);

        let link = |name: &str, from: &str, to: &str| CustomLink {
            spec: hop(name),
            from: from.into(),
            to: to.into(),
        };
        let route = |f: &[&str], r: &[&str]| CustomRoute {
            forward: f.iter().map(|s| s.to_string()).collect(),
            reverse: r.iter().map(|s| s.to_string()).collect(),
        };
        let t = Topology::custom(
            vec![
                link("ab", "a", "b"),
                link("bc", "b", "c"),
                link("cb", "c", "b"),
                link("ba", "b", "a"),
                link("spare", "c", "a"),
            ],
            vec![route(&["ab", "bc"], &["cb", "ba"]), route(&["bc"], &["cb"])],
        )
        .unwrap();
        assert_eq!(t.node_numbers(), [[0, 1], [1, 2], [2, 1], [1, 0], [3, 4]]);
    }

    #[test]
    fn reverse_dumbbell_flows_send_over_the_reverse_bottleneck() {
        let spec = DumbbellSpec {
            bottleneck: bottleneck(),
            access: AccessSpec::new(
                Rate::from_mbps(100),
                DelaySpread::Fixed(Dur::from_millis(1)),
            ),
            flows: 3,
        };
        let q = QueueSpec::DropTail(QueueLimit::Packets(50));
        let t = Topology::dumbbell_directed(&spec, Some(q.clone()), &[false, true]).unwrap();
        let id = |n: &str| t.link_id(n).unwrap();
        assert_eq!(t.links[id("bottleneck-rev") as usize].queue, q);
        assert_eq!(
            t.links[id("bottleneck") as usize].queue,
            QueueSpec::DropTail(QueueLimit::Packets(100))
        );
        assert_eq!(
            t.routes[0].forward,
            [id("access-src-0"), id("bottleneck"), id("access-dst-0")]
        );
        assert_eq!(
            t.routes[1].forward,
            [
                id("access-dst-1-rev"),
                id("bottleneck-rev"),
                id("access-src-1-rev")
            ]
        );
        assert_eq!(
            t.routes[1].reverse,
            [id("access-src-1"), id("bottleneck"), id("access-dst-1")]
        );
        // Past the end of `reverse`: forward.
        assert_eq!(t.routes[2].forward[1], id("bottleneck"));
        // Without the options it is the plain dumbbell.
        assert_eq!(
            Topology::dumbbell_directed(&spec, None, &[]).unwrap(),
            Topology::dumbbell(&spec).unwrap()
        );
    }

    #[test]
    fn parking_lot_long_flows_cross_every_hop() {
        let hop = |i: usize| LinkSpec {
            name: format!("hop{i}"),
            ..bottleneck()
        };
        let t = Topology::parking_lot(&ParkingLotSpec {
            hops: vec![hop(0), hop(1), hop(2)],
            access: AccessSpec::new(
                Rate::from_mbps(100),
                DelaySpread::Fixed(Dur::from_millis(1)),
            ),
            long_flows: 2,
            cross_flows_per_hop: 1,
        })
        .unwrap();
        assert_eq!(t.routes.len(), 5);
        assert_eq!(t.routes[0].forward.len(), 5);
        let h1 = t.link_id("hop1").unwrap();
        assert_eq!(t.routes[3].forward[1], h1);
        assert_eq!(t.routes[3].reverse[1], t.link_id("hop1-rev").unwrap());
        let rev: Vec<LinkId> = t.routes[0].reverse[1..4].to_vec();
        let want: Vec<LinkId> = ["hop2-rev", "hop1-rev", "hop0-rev"]
            .iter()
            .map(|n| t.link_id(n).unwrap())
            .collect();
        assert_eq!(rev, want);
    }

    #[test]
    fn custom_routes_must_be_connected_and_return_home() {
        let l = |name: &str, from: &str, to: &str| CustomLink {
            spec: LinkSpec {
                name: name.into(),
                ..bottleneck()
            },
            from: from.into(),
            to: to.into(),
        };
        let links = || {
            vec![
                l("ab", "a", "b"),
                l("bc", "b", "c"),
                l("cb", "c", "b"),
                l("ba", "b", "a"),
            ]
        };
        let route = |f: &[&str], r: &[&str]| CustomRoute {
            forward: f.iter().map(|s| s.to_string()).collect(),
            reverse: r.iter().map(|s| s.to_string()).collect(),
        };
        let t = Topology::custom(links(), vec![route(&["ab", "bc"], &["cb", "ba"])]).unwrap();
        assert_eq!(
            t.routes[0],
            Route {
                forward: vec![0, 1],
                reverse: vec![2, 3]
            }
        );
        assert!(matches!(
            Topology::custom(links(), vec![route(&["bc", "ab"], &["ba"])]),
            Err(SimError::InvalidRoute { .. })
        ));
        assert!(matches!(
            Topology::custom(links(), vec![route(&["ab"], &["cb", "ba"])]),
            Err(SimError::InvalidRoute { .. })
        ));
        assert!(matches!(
            Topology::custom(links(), vec![route(&["ab", "xx"], &["ba"])]),
            Err(SimError::UnknownLink(n)) if n == "xx"
        ));
    }

    #[test]
    fn invalid_links_are_rejected_with_their_name() {
        let mut b = bottleneck();
        b.rate = Rate::ZERO;
        let err = Topology::dumbbell(&DumbbellSpec {
            bottleneck: b,
            access: AccessSpec::new(Rate::from_mbps(100), DelaySpread::Fixed(Dur::ZERO)),
            flows: 1,
        })
        .unwrap_err();
        assert!(err.to_string().contains("bottleneck"), "{err}");
    }
}
