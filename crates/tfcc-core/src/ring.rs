//! Queues that go back to the start of their buffer when they empty.
//!
//! A `VecDeque` that is filled and drained one element at a time walks its whole buffer: the
//! head only moves forward, so a TCP sender's 64-packet output queue (4 KiB) touches a new
//! cache line for every packet even when it never holds more than one. With thousands of flows
//! taking turns those lines are all cold, and the walk multiplies each flow's footprint in the
//! caches. Going back to the start when the queue empties keeps a queue that is usually empty
//! or short on its first line.

use std::collections::VecDeque;

/// `q.pop_front()`, rewinding `q` to the start of its buffer when that emptied it.
#[inline]
pub fn pop_front_rewind<T>(q: &mut VecDeque<T>) -> Option<T> {
    let x = q.pop_front();
    if q.is_empty() {
        // `clear` on an empty queue only resets its head (no element to drop).
        q.clear();
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emptied_queue_reuses_the_start_of_its_buffer() {
        let mut q: VecDeque<u32> = VecDeque::with_capacity(8);
        let first = {
            q.push_back(1);
            let p = q.as_slices().0.as_ptr();
            assert_eq!(pop_front_rewind(&mut q), Some(1));
            p
        };
        for i in 0..100 {
            q.push_back(i);
            q.push_back(i + 1);
            assert_eq!(q.as_slices().0.as_ptr(), first, "round {i}");
            assert_eq!(pop_front_rewind(&mut q), Some(i));
            assert_eq!(pop_front_rewind(&mut q), Some(i + 1));
        }
        assert_eq!(pop_front_rewind(&mut q), None);
        // FIFO order across wrap-arounds is unchanged.
        let mut q: VecDeque<u32> = VecDeque::with_capacity(4);
        let mut next = 0;
        for i in 0..50u32 {
            q.push_back(i);
            if i % 3 == 2 {
                while let Some(x) = pop_front_rewind(&mut q) {
                    assert_eq!(x, next);
                    next += 1;
                }
            }
        }
    }
}
