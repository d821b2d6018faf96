//! [`RelayArgs`]: the `tcpnc link` command line as a type. The cli parses it (feature `clap`);
//! the lab builds it and turns it into argv with [`RelayArgs::to_args`], so the relay's flags
//! are one contract checked at compile time (a round-trip test holds `to_args` to the parser).
//!
//! Path-shape flags (`--delay-ms`, `--jitter-ms`, `--reorder`, `--rate-mbit`, `--burst-bytes`,
//! `--queue-packets`, `--queue-bytes`, `--loss-before-queue`) apply to BOTH directions (delay is
//! one way). Impairment flags (`--loss`, `--ge`, `--dup`, `--corrupt`) apply to the DATA
//! direction a→b only. `--ab KEY=VALUE` / `--ba KEY=VALUE` (repeatable) override any setting for
//! one direction, e.g. `--ba loss=0.05` for reverse-path (ACK) loss.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::RelayOptions;
use super::spec::{DirectionSpec, SpecError};

/// A flag whose value the relay refuses.
#[derive(Debug, thiserror::Error)]
#[error("{flag}: {source}")]
pub struct ArgsError {
    /// The flag (`--ge`, `--ab loss=2`, `a->b link`).
    pub flag: String,
    /// Why.
    #[source]
    pub source: SpecError,
}

fn at(flag: impl Into<String>) -> impl FnOnce(SpecError) -> ArgsError {
    let flag = flag.into();
    move |source| ArgsError { flag, source }
}

/// Arguments of `tcpnc link`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct RelayArgs {
    /// A-side socket (faces the data sender).
    #[cfg_attr(feature = "clap", arg(long, value_name = "ADDR:PORT"))]
    pub a_listen: SocketAddr,
    /// Where b→a traffic goes (default: learned from datagrams arriving on the A socket).
    #[cfg_attr(feature = "clap", arg(long, value_name = "ADDR:PORT"))]
    pub a_peer: Option<SocketAddr>,
    /// B-side socket.
    #[cfg_attr(feature = "clap", arg(long, value_name = "ADDR:PORT"))]
    pub b_listen: SocketAddr,
    /// Where a→b traffic goes (default: learned from datagrams arriving on the B socket).
    #[cfg_attr(feature = "clap", arg(long, value_name = "ADDR:PORT"))]
    pub b_peer: Option<SocketAddr>,
    /// Both directions: one-way delay in ms.
    #[cfg_attr(feature = "clap", arg(long, value_name = "MS"))]
    pub delay_ms: Option<f64>,
    /// Both directions: uniform extra delay in [0, MS].
    #[cfg_attr(feature = "clap", arg(long, value_name = "MS"))]
    pub jitter_ms: Option<f64>,
    /// Both directions: let jitter reorder packets.
    #[cfg_attr(feature = "clap", arg(long))]
    pub reorder: bool,
    /// Both directions: bottleneck rate in Mbit/s.
    #[cfg_attr(feature = "clap", arg(long, value_name = "MBIT"))]
    pub rate_mbit: Option<f64>,
    /// Both directions: token-bucket depth in bytes (0 = pure serializer).
    #[cfg_attr(feature = "clap", arg(long, value_name = "BYTES"))]
    pub burst_bytes: Option<u64>,
    /// Both directions: drop-tail queue limit in packets.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub queue_packets: Option<usize>,
    /// Both directions: drop-tail queue limit in bytes.
    #[cfg_attr(feature = "clap", arg(long, value_name = "BYTES"))]
    pub queue_bytes: Option<usize>,
    /// Both directions: drop lost packets before the queue (they take no queue space).
    #[cfg_attr(feature = "clap", arg(long))]
    pub loss_before_queue: bool,
    /// Data direction (a→b): Bernoulli loss probability.
    #[cfg_attr(feature = "clap", arg(long, value_name = "P"))]
    pub loss: Option<f64>,
    /// Data direction (a→b): Gilbert-Elliott loss `p,r[,loss_bad[,loss_good]]`.
    #[cfg_attr(feature = "clap", arg(long, value_name = "P,R[,H[,K]]"))]
    pub ge: Option<String>,
    /// Data direction (a→b): duplication probability.
    #[cfg_attr(feature = "clap", arg(long, value_name = "P"))]
    pub dup: Option<f64>,
    /// Data direction (a→b): probability of flipping one bit.
    #[cfg_attr(feature = "clap", arg(long, value_name = "P"))]
    pub corrupt: Option<f64>,
    /// Override for a→b only (repeatable): loss, ge, delay-ms, jitter-ms, reorder, rate-mbit,
    /// burst-bytes, queue-packets, queue-bytes, dup, corrupt, loss-before-queue.
    #[cfg_attr(feature = "clap", arg(long = "ab", value_name = "KEY=VALUE"))]
    pub ab: Vec<String>,
    /// Override for b→a only (repeatable), same keys as --ab.
    #[cfg_attr(feature = "clap", arg(long = "ba", value_name = "KEY=VALUE"))]
    pub ba: Vec<String>,
    /// Seed of the a→b model (b→a uses a derived seed).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1))]
    pub seed: u64,
    /// Also write the counters as JSON to this file (every second and on exit).
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub stats_file: Option<PathBuf>,
}

impl RelayArgs {
    /// A relay between `a_listen` and `b_listen` without impairment (seed 1).
    pub fn new(a_listen: SocketAddr, b_listen: SocketAddr) -> RelayArgs {
        RelayArgs {
            a_listen,
            a_peer: None,
            b_listen,
            b_peer: None,
            delay_ms: None,
            jitter_ms: None,
            reorder: false,
            rate_mbit: None,
            burst_bytes: None,
            queue_packets: None,
            queue_bytes: None,
            loss_before_queue: false,
            loss: None,
            ge: None,
            dup: None,
            corrupt: None,
            ab: Vec::new(),
            ba: Vec::new(),
            seed: 1,
            stats_file: None,
        }
    }

    /// The a→b and b→a specs after applying the flag rules and overrides.
    pub fn specs(&self) -> Result<(DirectionSpec, DirectionSpec), ArgsError> {
        let mut both = DirectionSpec {
            delay_ms: self.delay_ms,
            jitter_ms: self.jitter_ms,
            reorder: self.reorder.then_some(true),
            rate_mbit: self.rate_mbit,
            burst_bytes: self.burst_bytes,
            queue_packets: self.queue_packets,
            queue_bytes: self.queue_bytes,
            loss_before_queue: self.loss_before_queue.then_some(true),
            ..DirectionSpec::default()
        };
        let mut data = DirectionSpec {
            loss: self.loss,
            dup: self.dup,
            corrupt: self.corrupt,
            ..DirectionSpec::default()
        };
        if let Some(ge) = &self.ge {
            data.set("ge", ge).map_err(at("--ge"))?;
        }
        let mut ab_over = DirectionSpec::default();
        for kv in &self.ab {
            ab_over.set_pair(kv).map_err(at(format!("--ab {kv}")))?;
        }
        let mut ba_over = DirectionSpec::default();
        for kv in &self.ba {
            ba_over.set_pair(kv).map_err(at(format!("--ba {kv}")))?;
        }
        let ab = both.overlay(&data).overlay(&ab_over);
        both = both.overlay(&ba_over);
        Ok((ab, both))
    }

    /// The relay's options: sockets, both directions' link models, seed, stats file.
    pub fn options(&self) -> Result<RelayOptions, ArgsError> {
        let (ab, ba) = self.specs()?;
        Ok(RelayOptions {
            a_listen: self.a_listen,
            a_peer: self.a_peer,
            b_listen: self.b_listen,
            b_peer: self.b_peer,
            ab: ab.to_link_config().map_err(at("a->b link"))?,
            ba: ba.to_link_config().map_err(at("b->a link"))?,
            seed: self.seed,
            stats_file: self.stats_file.clone(),
        })
    }

    /// The flags that make the `tcpnc link` parser produce `self` (without the subcommand).
    pub fn to_args(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        let mut flag = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                v.push(format!("--{name}"));
                v.push(value);
            }
        };
        let s = |x: &dyn ToString| Some(x.to_string());
        flag("a-listen", s(&self.a_listen));
        flag("a-peer", self.a_peer.map(|a| a.to_string()));
        flag("b-listen", s(&self.b_listen));
        flag("b-peer", self.b_peer.map(|a| a.to_string()));
        flag("delay-ms", self.delay_ms.map(|x| x.to_string()));
        flag("jitter-ms", self.jitter_ms.map(|x| x.to_string()));
        flag("rate-mbit", self.rate_mbit.map(|x| x.to_string()));
        flag("burst-bytes", self.burst_bytes.map(|x| x.to_string()));
        flag("queue-packets", self.queue_packets.map(|x| x.to_string()));
        flag("queue-bytes", self.queue_bytes.map(|x| x.to_string()));
        flag("loss", self.loss.map(|x| x.to_string()));
        flag("ge", self.ge.clone());
        flag("dup", self.dup.map(|x| x.to_string()));
        flag("corrupt", self.corrupt.map(|x| x.to_string()));
        for kv in &self.ab {
            flag("ab", Some(kv.clone()));
        }
        for kv in &self.ba {
            flag("ba", Some(kv.clone()));
        }
        flag("seed", s(&self.seed));
        flag(
            "stats-file",
            self.stats_file.as_ref().map(|p| p.display().to_string()),
        );
        for (on, name) in [
            (self.reorder, "--reorder"),
            (self.loss_before_queue, "--loss-before-queue"),
        ] {
            if on {
                v.push(name.to_string());
            }
        }
        v
    }
}

// Runs in workspace builds (the cli turns the `clap` feature on) and with `--features clap`.
#[cfg(all(test, feature = "clap"))]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: RelayArgs,
    }

    /// `to_args` is what the parser reads back, flag for flag.
    #[test]
    fn to_args_round_trips_through_the_parser() {
        let mut a = RelayArgs::new(
            "10.0.0.1:4000".parse().unwrap(),
            "10.0.1.1:4001".parse().unwrap(),
        );
        let plain = Cli::try_parse_from(std::iter::once("x".to_string()).chain(a.to_args()));
        assert_eq!(plain.unwrap().args, a);
        a.a_peer = Some("10.0.0.2:5000".parse().unwrap());
        a.b_peer = Some("10.0.1.2:5000".parse().unwrap());
        a.delay_ms = Some(20.0);
        a.jitter_ms = Some(3.5);
        a.reorder = true;
        a.rate_mbit = Some(20.0);
        a.burst_bytes = Some(0);
        a.queue_packets = Some(67);
        a.queue_bytes = Some(100_000);
        a.loss_before_queue = true;
        a.loss = Some(0.1);
        a.ge = Some("0.01,0.3".into());
        a.dup = Some(0.001);
        a.corrupt = Some(0.002);
        a.ab = vec!["loss=0.2".into()];
        a.ba = vec!["loss=0.05".into(), "delay-ms=5".into()];
        a.seed = 42;
        a.stats_file = Some("/tmp/link.json".into());
        let full = Cli::try_parse_from(std::iter::once("x".to_string()).chain(a.to_args()));
        assert_eq!(full.unwrap().args, a);
        // Every flag parsed; the combination is not a valid path (both queue limits).
        let err = a.options().unwrap_err();
        assert_eq!(err.flag, "a->b link", "{err}");
        a.queue_bytes = None;
        a.ge = None;
        assert!(a.options().is_ok(), "{:?}", a.options().err());
    }

    #[test]
    fn bad_values_name_the_flag() {
        let mut a = RelayArgs::new(
            "10.0.0.1:4000".parse().unwrap(),
            "10.0.1.1:4001".parse().unwrap(),
        );
        a.ab = vec!["loss".into()];
        let e = a.options().unwrap_err();
        assert_eq!(e.flag, "--ab loss");
    }
}
