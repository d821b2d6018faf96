//! The sender namespace's kernel TCP counters (`/proc/net/netstat`, `TcpExt`), read before and
//! after a transfer: they tell retransmission timeouts from fast retransmits and tail-loss
//! probes, which `TCP_INFO`'s totals do not.

use std::collections::BTreeMap;

use crate::error::{LabError, Result};
use crate::netns::in_netns;

/// The `TcpExt` counters reported (names as the kernel prints them).
pub const COUNTERS: &[&str] = &[
    "TCPTimeouts",
    "TCPLossProbes",
    "TCPFastRetrans",
    "TCPSlowStartRetrans",
    "TCPRenoRecovery",
    "TCPRenoReorder",
    "TCPSpuriousRTOs",
    "TCPLostRetransmit",
    "TCPRenoFailures",
    "TCPLossUndo",
    "TCPFullUndo",
    "TCPPartialUndo",
];

/// Parses the `TcpExt:` header and value lines of a `/proc/net/netstat` text.
pub fn parse_tcp_ext(text: &str) -> BTreeMap<String, u64> {
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let (Some(names), Some(values)) = (lines.next(), lines.next()) else {
        return BTreeMap::new();
    };
    names
        .split_whitespace()
        .skip(1)
        .zip(values.split_whitespace().skip(1))
        .filter_map(|(n, v)| Some((n.to_string(), v.parse().ok()?)))
        .collect()
}

/// The `TcpExt` counters of namespace `ns` now.
pub fn snapshot(ns: &str) -> Result<BTreeMap<String, u64>> {
    in_netns(ns, || {
        // /proc/thread-self/net follows this thread's network namespace.
        let path = "/proc/thread-self/net/netstat";
        let text = std::fs::read_to_string(path).map_err(|e| LabError::file(path, e))?;
        Ok(parse_tcp_ext(&text))
    })
}

/// `after − before` for the reported [`COUNTERS`].
pub fn delta(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    COUNTERS
        .iter()
        .filter_map(|name| {
            let a = *after.get(*name)?;
            let b = before.get(*name).copied().unwrap_or(0);
            Some((name.to_string(), a.saturating_sub(b)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_tcp_ext_pair() {
        let text = "TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes\n\
                    TcpExt: 0 7 3\n\
                    IpExt: InNoRoutes\nIpExt: 1\n";
        let m = parse_tcp_ext(text);
        assert_eq!(m["TCPTimeouts"], 7);
        assert_eq!(m["TCPLossProbes"], 3);
        let mut after = m.clone();
        after.insert("TCPTimeouts".into(), 9);
        let d = delta(&m, &after);
        assert_eq!(d["TCPTimeouts"], 2);
        assert_eq!(d["TCPLossProbes"], 0);
        assert!(!d.contains_key("TCPFastRetrans"));
    }

    #[test]
    fn garbage_gives_nothing() {
        assert!(parse_tcp_ext("").is_empty());
        assert!(parse_tcp_ext("TcpExt: A B\n").is_empty());
    }
}
