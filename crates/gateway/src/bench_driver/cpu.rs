//! CPU time of this process and of the calling thread (`getrusage(2)`, microseconds): the
//! driver samples both around the measured transfer, and the gateway's share is the process's
//! less the driver thread's.

use std::io;
use std::time::Duration;

/// User + system CPU time of the whole process (every thread, live or joined).
pub(super) fn process() -> io::Result<Duration> {
    usage(libc::RUSAGE_SELF)
}

/// User + system CPU time of the calling thread.
pub(super) fn thread() -> io::Result<Duration> {
    usage(libc::RUSAGE_THREAD)
}

fn usage(who: libc::c_int) -> io::Result<Duration> {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one `struct rusage` through the pointer, which points to one.
    if unsafe { libc::getrusage(who, u.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: zero-initialised (all-zero is a valid rusage) and filled by getrusage.
    let u = unsafe { u.assume_init() };
    Ok(timeval(u.ru_utime) + timeval(u.ru_stime))
}

fn timeval(t: libc::timeval) -> Duration {
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let micros = u32::try_from(t.tv_usec).unwrap_or(0);
    Duration::from_secs(secs) + Duration::from_micros(u64::from(micros))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_thread_counts_in_itself_and_in_the_process() {
        let (p0, t0) = (process().unwrap(), thread().unwrap());
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let (p1, t1) = (process().unwrap(), thread().unwrap());
        assert!(t1 - t0 >= Duration::from_millis(10), "{:?}", t1 - t0);
        // The two clocks are read a moment apart: a few milliseconds of slack.
        assert!(p1 - p0 + Duration::from_millis(5) >= t1 - t0);
    }
}
