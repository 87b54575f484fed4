//! The process between the suite and a benchmark's launcher: it waits for
//! the launcher, ends with its exit status, and when the suite dies,
//! however it dies, sends the launcher SIGTERM exactly once.
//!
//! Why not PR_SET_PDEATHSIG on the launcher straight from the suite: the
//! kernel sends that signal each time the child is handed from a dying
//! thread of its parent to another, so a suite with two threads killed by
//! SIGKILL sent the launcher SIGTERM twice, half a millisecond apart. Open
//! MPI's mpirun takes a second signal as "stop at once": it exited without
//! ending its ranks, which then lost their daemon and exited without ending
//! their run record (`running` for good, in about half the tries here).
//!
//! The keeper is made in the suite's `pre_exec` hook: the child the suite
//! forks forks once more; the grandchild goes on to exec the launcher and
//! the child stays, as the keeper, running only system calls
//! (async-signal-safe, no allocation: it is a copy of a threaded process).
//! It has one thread, so the launcher's death signal, set against it,
//! comes once; its own, set against the suite, may come several times and
//! only wakes it: it passes SIGTERM on once, when it finds itself handed
//! to another parent (the suite gone), which it also checks five times a
//! second.
//!
//! The suite sees the keeper as its child: same process group (the
//! launcher's, which the suite signals), same exit status (the launcher's
//! code, or its death by the same signal). Signals the suite sends that
//! group reach the launcher directly; the keeper leaves them be.

use std::io;

/// The suite's handled signals and SIGCHLD.
fn waited() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a local set.
    unsafe {
        let mut s: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut s);
        for sig in crate::job::signals::HANDLED.iter().copied().chain([libc::SIGCHLD]) {
            libc::sigaddset(&mut s, sig);
        }
        s
    }
}

/// For a `pre_exec` hook of a command the suite (process `suite`) spawns:
/// in the child the suite forked, makes the keeper and returns `Ok` in
/// the grandchild, which then execs the command; the keeper never
/// returns. `Err` where the suite is already gone or the fork fails.
///
/// # Safety
/// Only in a `pre_exec` hook (a just-forked child, one thread).
pub unsafe fn split(suite: u32) -> io::Result<()> {
    let set = waited();
    // SAFETY (all below): system calls on local values and this process's
    // own children; async-signal-safe.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong) != 0 {
            return Err(io::Error::last_os_error());
        }
        // The suite died before the request took: nothing would send the
        // signal any more.
        if libc::getppid() as u32 != suite {
            return Err(io::Error::other("the suite ended while its launcher was starting"));
        }
        // Blocked before the fork, so that neither the launcher's end nor
        // the suite's death is missed between the two.
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        let keeper = libc::getpid();
        match libc::fork() {
            -1 => Err(io::Error::last_os_error()),
            0 => {
                // The launcher: a clean mask (it forwards these signals to
                // its ranks) and SIGTERM when the keeper dies (once).
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::getppid() != keeper {
                    return Err(io::Error::other("the suite's keeper ended while the launcher was starting"));
                }
                Ok(())
            }
            launcher => keep(launcher, suite, &set),
        }
    }
}

/// The keeper's life: see the module's comment.
unsafe fn keep(launcher: libc::pid_t, suite: u32, set: &libc::sigset_t) -> ! {
    // SAFETY (all below): system calls on this process, its child and
    // local values.
    unsafe {
        // Nothing of the suite's stays open here but the launcher's
        // stdin, stdout and stderr: in particular not the pipe on which
        // the suite's spawn waits for the exec (it would wait for the
        // keeper's end), nor the suite's other files.
        close_from(3);
        let mut passed_on = false;
        let tick = libc::timespec { tv_sec: 0, tv_nsec: 200_000_000 };
        loop {
            let mut status = 0;
            match libc::waitpid(launcher, &mut status, libc::WNOHANG) {
                r if r == launcher => mirror(status),
                -1 if *libc::__errno_location() != libc::EINTR => libc::_exit(127),
                _ => {}
            }
            // A signal only wakes the keeper early.
            libc::sigtimedwait(set, std::ptr::null_mut(), &tick);
            if libc::getppid() as u32 != suite && !passed_on {
                libc::kill(launcher, libc::SIGTERM);
                passed_on = true;
            }
        }
    }
}

/// Closes every descriptor from `first` up.
unsafe fn close_from(first: u32) {
    // SAFETY: closes this process's descriptors; no memory is touched.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, u32::MAX, 0) == 0 {
            return;
        }
        // Kernels before 5.9.
        let max = libc::sysconf(libc::_SC_OPEN_MAX).clamp(first as libc::c_long + 1, 1 << 16);
        for fd in first as libc::c_long..max {
            libc::close(fd as libc::c_int);
        }
    }
}

/// Ends the keeper as the launcher ended: its code, or death by the same
/// signal (the suite then sees what it would have seen without it).
unsafe fn mirror(status: libc::c_int) -> ! {
    // SAFETY: signal disposition, mask and raise in this one-thread
    // process, then _exit.
    unsafe {
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        let sig = libc::WTERMSIG(status);
        libc::signal(sig, libc::SIG_DFL);
        let mut one: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut one);
        libc::sigaddset(&mut one, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        // A signal whose default is not to end a process.
        libc::_exit(128 + sig)
    }
}
