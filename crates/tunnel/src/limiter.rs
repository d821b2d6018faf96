//! Handshake rate limits: a global token bucket and one per source IP address (a bounded
//! table), so that a flood of handshake initiations — even well-formed ones from a sender that
//! knows our public key, or replays of a real one — costs at most `global_rate` Diffie-Hellman
//! rounds per second and a fixed amount of memory. (WireGuard answers load with cookies
//! (§5.4.7); a rate limit is the simpler bound, at the price that a flood from many source
//! addresses can delay a legitimate handshake, which then succeeds on a retry.)

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

/// Limits of the handshake rate limiter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Handshake messages per second processed in total.
    pub global_rate: f64,
    /// Burst of the global bucket.
    pub global_burst: f64,
    /// Handshake messages per second from one source address.
    pub source_rate: f64,
    /// Burst of a source's bucket.
    pub source_burst: f64,
    /// Most sources tracked; when full, the table is emptied (every source then starts
    /// with a full bucket, still under the global bucket).
    pub max_sources: usize,
}

impl Default for Limits {
    /// 100 handshakes/s in all (a responder's handshake costs about 0.7 ms of CPU with snow's
    /// Curve25519, so at most ~7 % of one core), burst 20; 5/s per source address with a burst
    /// of 5; 4096 sources.
    fn default() -> Self {
        Limits {
            global_rate: 100.0,
            global_burst: 20.0,
            source_rate: 5.0,
            source_burst: 5.0,
            max_sources: 4096,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Duration,
}

impl Bucket {
    fn full(burst: f64, now: Duration) -> Self {
        Bucket {
            tokens: burst,
            at: now,
        }
    }

    fn refill(&mut self, now: Duration, rate: f64, burst: f64) {
        let dt = now.saturating_sub(self.at).as_secs_f64();
        self.tokens = (self.tokens + dt * rate).min(burst);
        self.at = now.max(self.at);
    }
}

/// The limiter (time passed in).
#[derive(Debug, Clone)]
pub struct Limiter {
    limits: Limits,
    global: Bucket,
    sources: HashMap<IpAddr, Bucket>,
}

impl Limiter {
    /// A limiter with full buckets at `now`.
    pub fn new(limits: Limits, now: Duration) -> Self {
        Limiter {
            limits,
            global: Bucket::full(limits.global_burst, now),
            sources: HashMap::new(),
        }
    }

    /// Takes one token for a handshake message from `source`; `false` = over the limit.
    pub fn allow(&mut self, now: Duration, source: IpAddr) -> bool {
        let l = self.limits;
        self.global.refill(now, l.global_rate, l.global_burst);
        if self.sources.len() >= l.max_sources && !self.sources.contains_key(&source) {
            self.sources.clear();
        }
        let b = self
            .sources
            .entry(source)
            .or_insert_with(|| Bucket::full(l.source_burst, now));
        b.refill(now, l.source_rate, l.source_burst);
        if b.tokens < 1.0 || self.global.tokens < 1.0 {
            return false;
        }
        b.tokens -= 1.0;
        self.global.tokens -= 1.0;
        true
    }

    /// Sources tracked (bounded by `max_sources`).
    pub fn sources(&self) -> usize {
        self.sources.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_source_and_global_buckets_bound_the_rate() {
        let limits = Limits {
            global_rate: 10.0,
            global_burst: 10.0,
            source_rate: 2.0,
            source_burst: 2.0,
            max_sources: 8,
        };
        let t0 = Duration::from_secs(1);
        let mut l = Limiter::new(limits, t0);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        assert!(l.allow(t0, a) && l.allow(t0, a));
        assert!(!l.allow(t0, a), "source burst spent");
        assert!(
            l.allow(t0 + Duration::from_millis(500), a),
            "refilled at 2/s"
        );
        // Many sources: the global bucket stops them.
        let mut allowed = 0;
        for i in 0..100u32 {
            let s = IpAddr::from(std::net::Ipv4Addr::from(0x0b00_0000 + i));
            allowed += usize::from(l.allow(t0 + Duration::from_millis(500), s));
        }
        assert!(allowed <= 10, "{allowed}");
        assert!(l.sources() <= 8);
        // One second later, 10 more at most.
        let mut later = 0;
        for i in 0..100u32 {
            let s = IpAddr::from(std::net::Ipv4Addr::from(0x0c00_0000 + i));
            later += usize::from(l.allow(t0 + Duration::from_millis(1500), s));
        }
        assert!((9..=10).contains(&later), "{later}");
    }
}
