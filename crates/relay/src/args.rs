//! The flags of `tcpnc link` ([`RelayArgs`]), their meaning as two [`DirectionSpec`]s, the
//! [`RelayOptions`] they build, and the argv that gives them back ([`RelayArgs::to_args`]).
//!
//! Path-shape flags (`--delay-ms`, `--delay-sd-ms`, `--delay-switch-ms`, `--jitter-ms`, `--reorder`, `--rate-mbit`, `--burst-bytes`,
//! `--queue-packets`, `--queue-bytes`, `--loss-before-queue`) apply to BOTH directions (delay is
//! one way). Impairment flags (`--loss`, `--ge`, `--dup`, `--corrupt`) apply to the DATA
//! direction a→b only. `--ab KEY=VALUE` / `--ba KEY=VALUE` (repeatable) override any setting for
//! one direction, e.g. `--ba loss=0.05` for reverse-path (ACK) loss.

use std::net::SocketAddr;
use std::path::PathBuf;

use thiserror::Error;

use crate::io_loop::RelayOptions;
use crate::spec::{DirectionSpec, SpecError};

/// A flag whose value was refused.
#[derive(Debug, Error)]
#[error("{flag}: {source}")]
pub struct ArgsError {
    /// The flag (with its value for `--ab` / `--ba`), or the direction for a link model.
    pub flag: String,
    /// Why.
    #[source]
    pub source: SpecError,
}

fn at(flag: impl Into<String>) -> impl FnOnce(SpecError) -> ArgsError {
    let flag = flag.into();
    move |source| ArgsError { flag, source }
}

/// The flags of `tcpnc link`.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct RelayArgs {
    /// A-side socket (faces the data sender).
    #[arg(long, value_name = "ADDR:PORT")]
    pub a_listen: SocketAddr,
    /// Where b→a traffic goes (default: learned from datagrams arriving on the A socket).
    #[arg(long, value_name = "ADDR:PORT")]
    pub a_peer: Option<SocketAddr>,
    /// B-side socket.
    #[arg(long, value_name = "ADDR:PORT")]
    pub b_listen: SocketAddr,
    /// Where a→b traffic goes (default: learned from datagrams arriving on the B socket).
    #[arg(long, value_name = "ADDR:PORT")]
    pub b_peer: Option<SocketAddr>,
    /// Both directions: one-way delay in ms.
    #[arg(long, value_name = "MS")]
    pub delay_ms: Option<f64>,
    /// Both directions: delay switching (Ha & Tsuru §4.2), standard deviation in ms of the
    /// one-way delay, redrawn around --delay-ms every --delay-switch-ms.
    #[arg(long, value_name = "MS")]
    pub delay_sd_ms: Option<f64>,
    /// Both directions: time between delay switches in ms (δ).
    #[arg(long, value_name = "MS")]
    pub delay_switch_ms: Option<f64>,
    /// Both directions: uniform extra delay in [0, MS].
    #[arg(long, value_name = "MS")]
    pub jitter_ms: Option<f64>,
    /// Both directions: let jitter reorder packets.
    #[arg(long)]
    pub reorder: bool,
    /// Both directions: bottleneck rate in Mbit/s.
    #[arg(long, value_name = "MBIT")]
    pub rate_mbit: Option<f64>,
    /// Both directions: token-bucket depth in bytes (0 = pure serializer).
    #[arg(long, value_name = "BYTES")]
    pub burst_bytes: Option<u64>,
    /// Both directions: drop-tail queue limit in packets.
    #[arg(long, value_name = "N")]
    pub queue_packets: Option<usize>,
    /// Both directions: drop-tail queue limit in bytes.
    #[arg(long, value_name = "BYTES")]
    pub queue_bytes: Option<usize>,
    /// Both directions: drop lost packets before the queue (they take no queue space).
    #[arg(long)]
    pub loss_before_queue: bool,
    /// Data direction (a→b): Bernoulli loss probability.
    #[arg(long, value_name = "P")]
    pub loss: Option<f64>,
    /// Data direction (a→b): Gilbert-Elliott loss `p,r[,loss_bad[,loss_good]]`.
    #[arg(long, value_name = "P,R[,H[,K]]")]
    pub ge: Option<String>,
    /// Data direction (a→b): duplication probability.
    #[arg(long, value_name = "P")]
    pub dup: Option<f64>,
    /// Data direction (a→b): probability of flipping one bit.
    #[arg(long, value_name = "P")]
    pub corrupt: Option<f64>,
    /// Override for a→b only (repeatable): loss, ge, delay-ms, delay-sd-ms, delay-switch-ms,
    /// jitter-ms, reorder, rate-mbit, burst-bytes, queue-packets, queue-bytes, dup, corrupt,
    /// loss-before-queue.
    #[arg(long = "ab", value_name = "KEY=VALUE")]
    pub ab: Vec<String>,
    /// Override for b→a only (repeatable), same keys as --ab.
    #[arg(long = "ba", value_name = "KEY=VALUE")]
    pub ba: Vec<String>,
    /// Seed of the a→b model (b→a uses a derived seed).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the counters as JSON to this file (every second and on exit).
    #[arg(long, value_name = "FILE")]
    pub stats_file: Option<PathBuf>,
}

impl RelayArgs {
    /// Flags with the two listen addresses and everything else at its default (no peers, no
    /// impairment, seed 1, no stats file).
    pub fn new(a_listen: SocketAddr, b_listen: SocketAddr) -> Self {
        RelayArgs {
            a_listen,
            a_peer: None,
            b_listen,
            b_peer: None,
            delay_ms: None,
            delay_sd_ms: None,
            delay_switch_ms: None,
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
            delay_sd_ms: self.delay_sd_ms,
            delay_switch_ms: self.delay_switch_ms,
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

    /// The relay options these flags describe (validated link models).
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

    /// The argv after `tcpnc link` that parses back into `self` (unset options and false
    /// switches are left out; numbers print in Rust's shortest round-trip form).
    pub fn to_args(&self) -> Vec<String> {
        let mut v = Vec::new();
        let mut opt = |flag: &str, value: Option<String>| {
            if let Some(value) = value {
                v.push(format!("--{flag}"));
                v.push(value);
            }
        };
        let s = |x: &dyn ToString| Some(x.to_string());
        opt("a-listen", s(&self.a_listen));
        opt("a-peer", self.a_peer.map(|a| a.to_string()));
        opt("b-listen", s(&self.b_listen));
        opt("b-peer", self.b_peer.map(|a| a.to_string()));
        opt("delay-ms", self.delay_ms.map(|x| x.to_string()));
        opt("delay-sd-ms", self.delay_sd_ms.map(|x| x.to_string()));
        opt(
            "delay-switch-ms",
            self.delay_switch_ms.map(|x| x.to_string()),
        );
        opt("jitter-ms", self.jitter_ms.map(|x| x.to_string()));
        opt("rate-mbit", self.rate_mbit.map(|x| x.to_string()));
        opt("burst-bytes", self.burst_bytes.map(|x| x.to_string()));
        opt("queue-packets", self.queue_packets.map(|x| x.to_string()));
        opt("queue-bytes", self.queue_bytes.map(|x| x.to_string()));
        opt("loss", self.loss.map(|x| x.to_string()));
        opt("ge", self.ge.clone());
        opt("dup", self.dup.map(|x| x.to_string()));
        opt("corrupt", self.corrupt.map(|x| x.to_string()));
        for kv in &self.ab {
            opt("ab", Some(kv.clone()));
        }
        for kv in &self.ba {
            opt("ba", Some(kv.clone()));
        }
        opt("seed", s(&self.seed));
        opt(
            "stats-file",
            self.stats_file.as_ref().map(|p| p.display().to_string()),
        );
        for (flag, on) in [
            ("--reorder", self.reorder),
            ("--loss-before-queue", self.loss_before_queue),
        ] {
            if on {
                v.push(flag.to_string());
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// The shape of the `tcpnc` command line around `link`.
    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(clap::Subcommand)]
    enum Command {
        Link(Box<RelayArgs>),
    }

    fn parse(args: &[String]) -> RelayArgs {
        let argv = ["tcpnc", "link"]
            .into_iter()
            .map(String::from)
            .chain(args.iter().cloned());
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Link(a) => *a,
        }
    }

    fn addr(p: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], p))
    }

    #[test]
    fn minimal_args_round_trip() {
        let a = RelayArgs::new(addr(1), addr(2));
        assert_eq!(parse(&a.to_args()), a);
    }

    #[test]
    fn every_flag_round_trips() {
        let a = RelayArgs {
            a_peer: Some(addr(3)),
            b_peer: Some("[::1]:9".parse().unwrap()),
            delay_ms: Some(20.5),
            delay_sd_ms: Some(6.5),
            delay_switch_ms: Some(50.0),
            jitter_ms: Some(0.1),
            reorder: true,
            rate_mbit: Some(1.0 / 3.0),
            burst_bytes: Some(3000),
            queue_packets: Some(100),
            queue_bytes: Some(150_000),
            loss_before_queue: true,
            loss: Some(0.1),
            ge: Some("0.01,0.3".into()),
            dup: Some(0.001),
            corrupt: Some(1e-6),
            ab: vec!["loss=0.2".into(), "reorder".into()],
            ba: vec!["loss=0.05".into()],
            seed: u64::MAX,
            stats_file: Some("/tmp/relay stats.json".into()),
            ..RelayArgs::new(addr(1), addr(2))
        };
        let mut back = parse(&a.to_args());
        assert_eq!(back, a);
        back.queue_bytes = None; // the models take one queue limit, not both
        let (ab, ba) = back.specs().unwrap();
        assert_eq!((ab.loss, ba.loss), (Some(0.2), Some(0.05)));
        let o = back.options().unwrap();
        assert_eq!(o.seed, u64::MAX);
        assert_eq!(o.ab.delay_switch, o.ba.delay_switch);
        assert_eq!(o.ab.delay_switch.unwrap().every.as_millis(), 50);
    }

    #[test]
    fn bad_values_name_their_flag() {
        let mut a = RelayArgs::new(addr(1), addr(2));
        a.ab = vec!["lose=1".into()];
        assert_eq!(a.specs().unwrap_err().flag, "--ab lose=1");
        let mut b = RelayArgs::new(addr(1), addr(2));
        b.loss = Some(1.5);
        assert_eq!(b.options().unwrap_err().flag, "a->b link");
        let mut c = RelayArgs::new(addr(1), addr(2));
        c.delay_sd_ms = Some(5.0);
        let e = c.options().unwrap_err();
        assert!(e.to_string().contains("delay-switch-ms"), "{e}");
    }
}
