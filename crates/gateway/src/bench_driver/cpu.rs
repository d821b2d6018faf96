//! CPU time of this process and of the calling thread (`getrusage(2)` through nix,
//! microseconds): the driver samples both around the measured transfer, and the gateway's
//! share is the process's less the driver thread's.

use std::io;
use std::time::Duration;

use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeVal;

/// User + system CPU time of the whole process (every thread, live or joined).
pub(super) fn process() -> io::Result<Duration> {
    usage(UsageWho::RUSAGE_SELF)
}

/// User + system CPU time of the calling thread.
pub(super) fn thread() -> io::Result<Duration> {
    usage(UsageWho::RUSAGE_THREAD)
}

fn usage(who: UsageWho) -> io::Result<Duration> {
    let u = getrusage(who).map_err(io::Error::from)?;
    Ok(timeval(u.user_time()) + timeval(u.system_time()))
}

fn timeval(t: TimeVal) -> Duration {
    let secs = u64::try_from(t.tv_sec()).unwrap_or(0);
    let micros = u32::try_from(t.tv_usec()).unwrap_or(0);
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
