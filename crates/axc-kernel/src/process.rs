//! Child-process plumbing the kernel's hooks and the conformance runner share: a pipe read on
//! its own thread with a cap, and the end of a whole process group.

use std::io::Read;

/// Reads all of `r`, keeping the first `cap` bytes, and whether there was more.
pub fn read_capped(mut r: impl Read, cap: usize) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut more = false;
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                // Keep reading past the cap (so the child never blocks on a full pipe), keep
                // only the first `cap` bytes.
                let room = cap.saturating_sub(out.len());
                more |= n > room;
                out.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (out, more)
}

/// Reads a pipe on its own thread; the answer arrives on the channel when the pipe closes.
pub fn reader(
    pipe: Option<impl Read + Send + 'static>,
    cap: usize,
) -> std::sync::mpsc::Receiver<(Vec<u8>, bool)> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let got = pipe.map_or((Vec::new(), false), |p| read_capped(p, cap));
        let _ = tx.send(got);
    });
    rx
}

/// Ends every process of the group `pid` leads (a child spawned with `process_group(0)`: it
/// and whatever it started).
pub fn kill_group(pid: u32) {
    // SAFETY: signalling a process group; no memory is touched.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

/// Blocks SIGPIPE for the calling thread: a write to a child's stdin after the child exited
/// fails with EPIPE instead of raising SIGPIPE, whose default action (which the binaries keep
/// for their own stdout) would end the whole command. SIGPIPE from a write goes to the writing
/// thread, so a thread that only feeds a child calls this first; it dies with the thread.
pub fn block_sigpipe() {
    // SAFETY: a signal set built with the libc calls and applied to this thread only.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}
