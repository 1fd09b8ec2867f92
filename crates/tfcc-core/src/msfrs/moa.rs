//! MOA, the Minimum-service Order Arbiter (003 §4.3.1, Fig. 4.3): which request goes next.
//!
//! Per class `i`: a FIFO request queue `Q_i`, a weight `w_i`, a user counter `UC_i` (users with a
//! queued request or an outstanding response) and a service counter `SC_i` (response bytes
//! received, normalised by `w_i·UC_i`, Eq. 4.1). The next request is the head of the non-empty
//! queue with the smallest `SC`; ties go to the largest `w_i·UC_i`.
//!
//! MOA has no notion of time or of the window: [`crate::msfrs::Msfrs`] asks it for a request
//! only when WRC allows one more outstanding response.

use std::collections::{HashMap, VecDeque};

use crate::time::Time;

/// A request waiting in a class queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued<R> {
    /// The caller's handle for the request.
    pub request: R,
    /// The user who sent it.
    pub user: u32,
    /// When it reached the gateway (`a_k` in §4.4.2), to measure its queuing time `T_q`.
    pub arrived: Time,
}

/// One class' state (Fig. 4.2).
#[derive(Clone, Debug)]
struct Class<R> {
    weight: f64,
    queue: VecDeque<Queued<R>>,
    /// `UC_i`: users of the class with `ReqFromUser[j] > 0`.
    users: u32,
    /// `SC_i`, bytes per unit of weight per user.
    service: f64,
    /// Released requests whose response has not ended (this class' share of W).
    outstanding: u32,
    /// Response bytes credited to the class since construction (reporting only).
    bytes: u64,
}

/// A snapshot of one class for reporting and tests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClassStats {
    /// `w_i`.
    pub weight: f64,
    /// Requests waiting in `Q_i`.
    pub queued: usize,
    /// `UC_i`.
    pub users: u32,
    /// `SC_i`.
    pub service: f64,
    /// Outstanding responses of the class.
    pub outstanding: u32,
    /// Response bytes received for the class (responses and class-attributed exceptive traffic).
    pub bytes: u64,
}

/// The arbiter: class queues, counters and the per-user request counts (`ReqFromUser`).
#[derive(Clone, Debug)]
pub struct Moa<R> {
    classes: Vec<Class<R>>,
    /// `ReqFromUser[j]` split into (queued, outstanding), keyed by (class, user); their sum is
    /// the thesis' count. Keyed per class so a user who sends in two classes is counted once in
    /// each `UC` (003 assumes one class per user and does not say).
    per_user: HashMap<(usize, u32), (u32, u32)>,
    /// Eq. 4.1's division by `UC_i` (see [`crate::msfrs::MsfrsConfig::per_user`]).
    per_user_service: bool,
}

impl<R> Moa<R> {
    /// An arbiter with one class per weight; the weights are validated by the caller.
    pub fn new(weights: &[f64], per_user_service: bool) -> Self {
        Moa {
            classes: weights
                .iter()
                .map(|&weight| Class {
                    weight,
                    queue: VecDeque::new(),
                    users: 0,
                    service: 0.0,
                    outstanding: 0,
                    bytes: 0,
                })
                .collect(),
            per_user: HashMap::new(),
            per_user_service,
        }
    }

    /// Number of classes.
    pub fn classes(&self) -> usize {
        self.classes.len()
    }

    /// `Request_Receiver` (Fig. 4.3) without the release, which the caller decides.
    ///
    /// A request for an idle class (`UC_i = 0`: empty queue and nothing outstanding) first sets
    /// `SC_i` to the smallest `SC` of the active classes, so a class back from a long silence
    /// neither starves the others nor is starved (§4.3.1); if every class is idle, every `SC`
    /// returns to 0. Fig. 4.3 prints the test as `UCi ≠ 0`; the text says "if the arrival
    /// request is classified into an idle class, i.e. the class's UC is zero", which is the
    /// reading here (spec 003 §4.3 \[TYPO\]).
    ///
    /// `class` must be valid (checked by [`crate::msfrs::Msfrs::on_request`]).
    pub fn enqueue(&mut self, class: usize, queued: Queued<R>) {
        if self.classes[class].users == 0 {
            match self.min_active_service() {
                Some(min) => self.classes[class].service = min,
                None => self.classes.iter_mut().for_each(|c| c.service = 0.0),
            }
        }
        let user = queued.user;
        let c = &mut self.classes[class];
        c.queue.push_back(queued);
        let count = self.per_user.entry((class, user)).or_insert((0, 0));
        if *count == (0, 0) {
            c.users += 1;
        }
        count.0 += 1;
    }

    /// The smallest `SC` among active classes (`UC > 0`), `GetMinSC()` of Fig. 4.3.
    fn min_active_service(&self) -> Option<f64> {
        self.classes
            .iter()
            .filter(|c| c.users > 0)
            .map(|c| c.service)
            .min_by(f64::total_cmp)
    }

    /// The class `Request_Selector` would serve: the non-empty queue with the minimum `SC`,
    /// ties to the largest `w·UC`, remaining ties to the lowest class index (determinism).
    pub fn select(&self) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, c) in self.classes.iter().enumerate() {
            if c.queue.is_empty() {
                continue;
            }
            best = match best {
                None => Some(i),
                Some(b) => {
                    let o = &self.classes[b];
                    let better = c.service < o.service
                        || (c.service == o.service
                            && c.weight * c.users as f64 > o.weight * o.users as f64);
                    Some(if better { i } else { b })
                }
            };
        }
        best
    }

    /// `Request_Selector` (Fig. 4.3): removes the chosen head-of-line request and counts it as
    /// outstanding. Returns the class and the request, or `None` if every queue is empty.
    pub fn release(&mut self) -> Option<(usize, Queued<R>)> {
        let class = self.select()?;
        let c = &mut self.classes[class];
        let q = c.queue.pop_front()?;
        c.outstanding += 1;
        if let Some(count) = self.per_user.get_mut(&(class, q.user)) {
            count.0 = count.0.saturating_sub(1);
            count.1 += 1;
        }
        Some((class, q))
    }

    /// Eq. 4.1: response bytes for `class` arrived, `SC_i += L/(w_i·UC_i)`.
    ///
    /// With `UC_i = 0` (class-attributed traffic no request of ours asked for, §4.6 type 2, to
    /// an idle class) the division uses 1: the bytes still count as service, as §4.6 says, and
    /// the next idle-class reset makes them harmless.
    pub fn credit(&mut self, class: usize, bytes: u64) {
        let per_user = self.per_user_service;
        let c = &mut self.classes[class];
        let users = if per_user { c.users.max(1) as f64 } else { 1.0 };
        c.service += bytes as f64 / (c.weight * users);
        c.bytes += bytes;
    }

    /// Whether `user` of `class` has an outstanding response.
    pub fn has_outstanding(&self, class: usize, user: u32) -> bool {
        self.per_user
            .get(&(class, user))
            .is_some_and(|&(_, outstanding)| outstanding > 0)
    }

    /// The tail of a response of `user` in `class` arrived (Fig. 4.4): `ReqFromUser[j]−−`, and
    /// `UC_i−−` when it reaches 0. The caller checks [`Self::has_outstanding`] first.
    pub fn complete(&mut self, class: usize, user: u32) {
        let c = &mut self.classes[class];
        c.outstanding = c.outstanding.saturating_sub(1);
        if let Some(count) = self.per_user.get_mut(&(class, user)) {
            count.1 = count.1.saturating_sub(1);
            if *count == (0, 0) {
                self.per_user.remove(&(class, user));
                c.users = c.users.saturating_sub(1);
            }
        }
    }

    /// Requests waiting in all queues.
    pub fn queued(&self) -> usize {
        self.classes.iter().map(|c| c.queue.len()).sum()
    }

    /// A snapshot of `class`, or `None` if there is no such class.
    pub fn class_stats(&self, class: usize) -> Option<ClassStats> {
        self.classes.get(class).map(|c| ClassStats {
            weight: c.weight,
            queued: c.queue.len(),
            users: c.users,
            service: c.service,
            outstanding: c.outstanding,
            bytes: c.bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(user: u32) -> Queued<u32> {
        Queued {
            request: user,
            user,
            arrived: Time::ZERO,
        }
    }

    #[test]
    fn serves_the_minimum_service_class_first() {
        let mut m = Moa::new(&[4.0, 2.0, 1.0], true);
        for class in 0..3 {
            m.enqueue(class, q(class as u32));
            m.enqueue(class, q(class as u32));
        }
        // All SC = 0: the tie goes to the largest w·UC, class 0 (4·1).
        assert_eq!(m.release().map(|r| r.0), Some(0));
        // 4000 B to class 0 (w 4, one user) = SC 1000; 1000 B to class 1 = SC 500.
        m.credit(0, 4000);
        m.credit(1, 1000);
        // Class 2 (SC 0) is now the minimum.
        assert_eq!(m.select(), Some(2));
        m.credit(2, 600);
        // 500 (class 1) < 600 (class 2) < 1000 (class 0).
        assert_eq!(m.select(), Some(1));
    }

    #[test]
    fn ties_go_to_the_largest_weight_times_users() {
        let mut m = Moa::new(&[1.0, 2.0], true);
        // Class 0 has three users (w·UC = 3), class 1 one (2): class 0 wins the tie at SC 0.
        for u in 0..3 {
            m.enqueue(0, q(u));
        }
        m.enqueue(1, q(10));
        assert_eq!(m.select(), Some(0));
    }

    #[test]
    fn service_is_divided_by_weight_and_users() {
        let mut m = Moa::new(&[2.0], true);
        m.enqueue(0, q(1));
        m.enqueue(0, q(2));
        m.enqueue(0, q(2));
        assert_eq!(m.class_stats(0).unwrap().users, 2);
        m.credit(0, 1000);
        // Eq. 4.1: 1000/(2·2) = 250.
        assert_eq!(m.class_stats(0).unwrap().service, 250.0);
        let mut class_based = Moa::new(&[2.0], false);
        class_based.enqueue(0, q(1));
        class_based.enqueue(0, q(2));
        class_based.credit(0, 1000);
        assert_eq!(class_based.class_stats(0).unwrap().service, 500.0);
    }

    #[test]
    fn idle_class_returns_at_the_minimum_active_service() {
        let mut m = Moa::new(&[1.0, 1.0, 1.0], true);
        m.enqueue(0, q(0));
        m.enqueue(1, q(1));
        let (c0, r0) = m.release().unwrap();
        let (c1, r1) = m.release().unwrap();
        m.credit(c0, 3000);
        m.credit(c1, 5000);
        // Class 2 has been idle with SC 0; on its first request it takes min(3000, 5000).
        m.enqueue(2, q(2));
        assert_eq!(m.class_stats(2).unwrap().service, 3000.0);
        // A class that is still active keeps its SC when more requests arrive.
        m.enqueue(1, q(1));
        assert_eq!(m.class_stats(1).unwrap().service, 5000.0);
        // Everything finishes: every class idle, the next arrival resets every SC to 0.
        m.complete(c0, r0.user);
        m.complete(c1, r1.user);
        while let Some((c, r)) = m.release() {
            m.complete(c, r.user);
        }
        assert!((0..3).all(|c| m.class_stats(c).unwrap().users == 0));
        m.enqueue(1, q(1));
        assert!((0..3).all(|c| m.class_stats(c).unwrap().service == 0.0));
    }

    #[test]
    fn users_leave_when_their_last_response_ends() {
        let mut m = Moa::new(&[1.0], true);
        m.enqueue(0, q(7));
        m.enqueue(0, q(7));
        let (c, r) = m.release().unwrap();
        assert!(m.has_outstanding(c, r.user));
        m.complete(c, r.user);
        // One request of user 7 still queued: the user is still active.
        assert_eq!(m.class_stats(0).unwrap().users, 1);
        assert!(!m.has_outstanding(0, 7));
        let (c, r) = m.release().unwrap();
        m.complete(c, r.user);
        assert_eq!(m.class_stats(0).unwrap().users, 0);
    }
}
