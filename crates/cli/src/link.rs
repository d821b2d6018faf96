//! `tcpnc link`: the path emulator, a UDP relay through seeded channel models in real time.
//!
//! Path-shape flags (`--delay-ms`, `--jitter-ms`, `--reorder`, `--rate-mbit`, `--burst-bytes`,
//! `--queue-packets`, `--queue-bytes`, `--loss-before-queue`) apply to BOTH directions (delay is
//! one way). Impairment flags (`--loss`, `--ge`, `--dup`, `--corrupt`) apply to the DATA
//! direction a→b only. `--ab KEY=VALUE` / `--ba KEY=VALUE` (repeatable) override any setting for
//! one direction, e.g. `--ba loss=0.05` for reverse-path (ACK) loss.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use tcpnc_gateway::relay::spec::DirectionSpec;
use tcpnc_gateway::relay::{Relay, RelayOptions};

/// Arguments of `tcpnc link`.
#[derive(Debug, Clone, clap::Args)]
pub struct LinkArgs {
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
    /// Override for a→b only (repeatable): loss, ge, delay-ms, jitter-ms, reorder, rate-mbit,
    /// burst-bytes, queue-packets, queue-bytes, dup, corrupt, loss-before-queue.
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

impl LinkArgs {
    /// The a→b and b→a specs after applying the flag rules and overrides.
    pub fn specs(&self) -> Result<(DirectionSpec, DirectionSpec)> {
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
            data.set("ge", ge).context("--ge")?;
        }
        let mut ab_over = DirectionSpec::default();
        for kv in &self.ab {
            ab_over.set_pair(kv).with_context(|| format!("--ab {kv}"))?;
        }
        let mut ba_over = DirectionSpec::default();
        for kv in &self.ba {
            ba_over.set_pair(kv).with_context(|| format!("--ba {kv}"))?;
        }
        let ab = both.overlay(&data).overlay(&ab_over);
        both = both.overlay(&ba_over);
        Ok((ab, both))
    }
}

/// Runs `tcpnc link` until SIGINT/SIGTERM, then prints the counters.
pub fn run(args: &LinkArgs) -> Result<()> {
    let (ab, ba) = args.specs()?;
    let opts = RelayOptions {
        a_listen: args.a_listen,
        a_peer: args.a_peer,
        b_listen: args.b_listen,
        b_peer: args.b_peer,
        ab: ab.to_link_config().context("a->b link")?,
        ba: ba.to_link_config().context("b->a link")?,
        seed: args.seed,
        stats_file: args.stats_file.clone(),
    };
    let stop = tcpnc_gateway::shutdown::shutdown_flag()?;
    let relay = Relay::bind(&opts)?;
    eprintln!(
        "tcpnc link: A {} <-> B {}\n  a->b {:?}\n  b->a {:?}",
        args.a_listen, args.b_listen, opts.ab, opts.ba
    );
    let stats = relay.run(stop)?;
    println!("{}", serde_json::to_string_pretty(&stats)?);
    Ok(())
}
