//! A bounded worker pool that grows on demand: an idle worker takes the next job, and a new
//! worker is started (up to the bound) whenever every worker is busy, so one slow handler never
//! holds up the next request.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;

type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    workers: usize,
    idle: usize,
    /// Jobs submitted and not yet finished.
    pending: usize,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
    max_workers: usize,
    stack_size: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub(crate) struct Pool {
    shared: Arc<Shared>,
}

impl Pool {
    pub(crate) fn new(max_workers: usize, stack_size: usize) -> Pool {
        Pool {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                work: Condvar::new(),
                done: Condvar::new(),
                max_workers: max_workers.max(1),
                stack_size,
            }),
        }
    }

    pub(crate) fn submit(&self, job: Job) {
        let mut st = self.shared.lock();
        st.queue.push_back(job);
        st.pending += 1;
        if st.queue.len() > st.idle && st.workers < self.shared.max_workers {
            let shared = Arc::clone(&self.shared);
            let spawned = thread::Builder::new()
                .name("mcp-worker".into())
                .stack_size(self.shared.stack_size)
                .spawn(move || worker(shared));
            if spawned.is_ok() {
                st.workers += 1;
            }
        }
        if st.workers == 0 {
            // No thread could be started at all: run the job here rather than lose it.
            let job = st.queue.pop_back().expect("just pushed");
            drop(st);
            run(job);
            finish(&self.shared);
            return;
        }
        self.shared.work.notify_one();
    }

    /// Waits until every submitted job has finished, then lets the workers exit.
    pub(crate) fn drain(&self) {
        let mut st = self.shared.lock();
        while st.pending > 0 {
            st = self.shared.done.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        st.shutdown = true;
        drop(st);
        self.shared.work.notify_all();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.work.notify_all();
    }
}

fn worker(shared: Arc<Shared>) {
    loop {
        let mut st = shared.lock();
        let job = loop {
            if let Some(job) = st.queue.pop_front() {
                break job;
            }
            if st.shutdown {
                st.workers -= 1;
                return;
            }
            st.idle += 1;
            st = shared.work.wait(st).unwrap_or_else(|p| p.into_inner());
            st.idle -= 1;
        };
        drop(st);
        run(job);
        finish(&shared);
    }
}

fn run(job: Job) {
    // Jobs catch their own handler panics; this is the last line of defence for the pool.
    let _ = catch_unwind(AssertUnwindSafe(job));
}

fn finish(shared: &Shared) {
    let mut st = shared.lock();
    st.pending -= 1;
    if st.pending == 0 {
        shared.done.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    #[test]
    fn slow_job_does_not_block_the_next() {
        let pool = Pool::new(8, 256 * 1024);
        let (tx, rx) = std::sync::mpsc::channel();
        let tx2 = tx.clone();
        pool.submit(Box::new(move || {
            thread::sleep(Duration::from_millis(300));
            tx.send("slow").unwrap();
        }));
        pool.submit(Box::new(move || tx2.send("fast").unwrap()));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), "fast");
        pool.drain();
    }

    #[test]
    fn drain_waits_for_every_job() {
        let pool = Pool::new(2, 256 * 1024);
        let n = Arc::new(AtomicUsize::new(0));
        for _ in 0..20 {
            let n = Arc::clone(&n);
            pool.submit(Box::new(move || {
                thread::sleep(Duration::from_millis(5));
                n.fetch_add(1, Ordering::SeqCst);
            }));
        }
        let t = Instant::now();
        pool.drain();
        assert_eq!(n.load(Ordering::SeqCst), 20);
        assert!(
            t.elapsed() >= Duration::from_millis(45),
            "two workers ran 20 jobs of 5 ms"
        );
    }

    #[test]
    fn a_panicking_job_does_not_kill_the_pool() {
        let pool = Pool::new(1, 256 * 1024);
        pool.submit(Box::new(|| panic!("boom")));
        let (tx, rx) = std::sync::mpsc::channel();
        pool.submit(Box::new(move || tx.send(1).unwrap()));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), 1);
        pool.drain();
    }
}
