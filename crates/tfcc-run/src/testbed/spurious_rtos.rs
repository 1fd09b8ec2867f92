//! Kernel TCP's spurious timeouts. The kernel counts them per network namespace only
//! (`TcpExt: TCPLossUndo`, of which `TCPSpuriousRTOs` are F-RTO's;
//! tfcc_net::testbed::tcp_spurious_rtos), not per connection, so they are read at the
//! window's start and end in each namespace that sends kernel-TCP data (the senders' for
//! forward flows, the receivers' for reverse ones) and reported per namespace; a flow gets
//! its namespace's count only where it is the one kernel-TCP sender there.

use tfcc_net::testbed::{tcp_spurious_rtos, Dumbbell, FlowKind, FlowSpec};

use crate::summary::NamespaceRtos;

/// A namespace that sends kernel-TCP data: its label in the summary, its name, and the flows
/// sending from it.
pub(super) type RtoSpace = (&'static str, String, Vec<u32>);

/// Each namespace's (loss undos, F-RTO's spurious timeouts) at one instant, `None` where a
/// counter could not be read.
pub(super) type Rtos = Vec<(Option<u64>, Option<u64>)>;

/// The namespaces that send kernel-TCP data, with the flows sending from each.
pub(super) fn namespaces(flows: &[FlowSpec], bed: &Dumbbell) -> Vec<RtoSpace> {
    let mut rto_spaces: Vec<RtoSpace> = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        if !matches!(f.kind, FlowKind::Tcp { .. }) {
            continue;
        }
        let (label, ns) = if f.reverse {
            ("receivers", bed.receiver_ns())
        } else {
            ("senders", bed.sender_ns())
        };
        match rto_spaces.iter_mut().find(|s| s.0 == label) {
            Some(s) => s.2.push(i as u32),
            None => rto_spaces.push((label, ns, vec![i as u32])),
        }
    }
    rto_spaces
}

/// The namespaces' counters now.
pub(super) fn read(spaces: &[RtoSpace]) -> Rtos {
    spaces.iter().map(|s| tcp_spurious_rtos(&s.1)).collect()
}

/// Each namespace's counts between the window's start and end (`None` where either reading
/// is missing).
pub(super) fn per_namespace(
    spaces: &[RtoSpace],
    at_window: &Option<Rtos>,
    at_end: &Option<Rtos>,
) -> Vec<NamespaceRtos> {
    spaces
        .iter()
        .enumerate()
        .map(|(k, (label, _, ids))| {
            let at = |r: &Option<Rtos>| r.as_ref().map_or((None, None), |v| v[k]);
            let ((undo0, frto0), (undo1, frto1)) = (at(at_window), at(at_end));
            let diff = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
            NamespaceRtos {
                namespace: label.to_string(),
                flows: ids.clone(),
                loss_undos: diff(undo0, undo1),
                spurious_rtos: diff(frto0, frto1),
            }
        })
        .collect()
}

/// A kernel-TCP flow's own count where it is the one kernel-TCP sender of its namespace;
/// `None` where several share it (their total is in `namespaces`). 0 for tfcc's UDP flows,
/// which have no TCP retransmission timer.
pub(super) fn of_flow(namespaces: &[NamespaceRtos], i: usize) -> Option<u64> {
    match namespaces.iter().find(|n| n.flows.contains(&(i as u32))) {
        Some(n) if n.flows.len() == 1 => n.loss_undos,
        Some(_) => None,
        None => Some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A namespace's counts are the differences between the window's edges, unknown where a
    /// reading is missing; a flow has its namespace's count only as its one kernel-TCP
    /// sender, and tfcc's UDP flows (in no namespace's list) have none to have.
    #[test]
    fn a_flow_has_its_namespaces_count_only_as_its_one_kernel_tcp_sender() {
        let spaces: Vec<RtoSpace> = vec![
            ("senders", "s".into(), vec![0, 2]),
            ("receivers", "d".into(), vec![3]),
        ];
        let end = Some(vec![(Some(6), Some(2)), (Some(5), Some(1))]);
        let ns = per_namespace(
            &spaces,
            &Some(vec![(Some(1), Some(0)), (Some(4), None)]),
            &end,
        );
        assert_eq!(ns[0].namespace, "senders");
        assert_eq!((ns[0].loss_undos, ns[0].spurious_rtos), (Some(5), Some(2)));
        assert_eq!((ns[1].loss_undos, ns[1].spurious_rtos), (Some(1), None));
        assert_eq!(
            [0, 1, 2, 3].map(|i| of_flow(&ns, i)),
            [None, Some(0), None, Some(1)]
        );
        assert_eq!(per_namespace(&spaces, &None, &end)[1].loss_undos, None);
    }
}
