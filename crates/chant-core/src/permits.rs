//! A counting semaphore for work whose cost a project decides (evaluations, and the calls that
//! build on them): at most `n` at once, the rest waiting while their caller still wants them.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

pub struct Permits {
    free: Mutex<usize>,
    freed: Condvar,
}

/// One permit, given back when dropped.
pub struct Permit(Arc<Permits>);

impl Permits {
    pub fn new(n: usize) -> Permits {
        Permits {
            free: Mutex::new(n.max(1)),
            freed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, usize> {
        self.free.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for a permit, asking `over` every 20 ms; `None` once it says the wait is over.
    pub fn take(self: &Arc<Self>, over: &dyn Fn() -> bool) -> Option<Permit> {
        let mut free = self.lock();
        loop {
            if *free > 0 {
                *free -= 1;
                return Some(Permit(Arc::clone(self)));
            }
            if over() {
                return None;
            }
            free = self
                .freed
                .wait_timeout(free, Duration::from_millis(20))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        *self.0.lock() += 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_n_at_once_and_a_waiter_can_give_up() {
        let p = Arc::new(Permits::new(1));
        let a = p.take(&|| false).unwrap();
        assert!(
            p.take(&|| true).is_none(),
            "none free, and the caller gave up"
        );
        drop(a);
        assert!(p.take(&|| true).is_some());
    }
}
