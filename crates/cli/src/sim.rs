//! `tcpnc sim`: one deterministic virtual-time bulk transfer, printed as a summary or JSON.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tcpnc_proto::{EngineConfig, Policies};
use tcpnc_settings::{CongestionControl, PathMode, PolicyOverrides, Profile};
use tcpnc_sim::nc_box::NcBox;
use tcpnc_sim::tcpnc_link::{LinkStats, LossModel, LossPosition, QueueLimit};
use tcpnc_sim::{SimConfig, SimReport};

/// Arguments of `tcpnc sim`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// Path mode (plain or nc; direct is a lab mode).
    #[arg(long, value_enum, default_value_t = PathMode::Plain)]
    pub mode: PathMode,
    /// Congestion control of both endpoints (smoltcp: reno, cubic or none).
    #[arg(long, value_enum, default_value_t = CongestionControl::Reno)]
    pub cc: CongestionControl,
    /// Bottleneck rate of both directions, Mbit/s.
    #[arg(long, default_value_t = 10.0)]
    pub rate_mbit: f64,
    /// One-way propagation delay of both directions, ms.
    #[arg(long, default_value_t = 20.0)]
    pub delay_ms: f64,
    /// Mean loss probability on the data (forward) direction.
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Mean loss burst length in packets: > 1 uses a Gilbert-Elliott model with mean
    /// loss `--loss`; 1 (default) uses Bernoulli loss.
    #[arg(long, default_value_t = 1.0)]
    pub burst: f64,
    /// Bernoulli loss probability on the ACK (reverse) direction.
    #[arg(long, default_value_t = 0.0)]
    pub reverse_loss: f64,
    /// Apply loss before the queue instead of after it.
    #[arg(long)]
    pub loss_before_queue: bool,
    /// Drop-tail queue limit in packets (both directions).
    #[arg(long, default_value_t = 1000)]
    pub queue_packets: usize,
    /// Uniform jitter bound, ms (both directions).
    #[arg(long, default_value_t = 0.0)]
    pub jitter_ms: f64,
    /// Let jitter reorder packets.
    #[arg(long)]
    pub reorder: bool,
    /// Bytes to transfer.
    #[arg(long, default_value_t = 10_000_000)]
    pub bytes: u64,
    /// Master seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// IP MTU of the TCP endpoints.
    #[arg(long, default_value_t = 1500)]
    pub mtu: usize,
    /// Socket send and receive buffer size, KiB.
    #[arg(long, default_value_t = 1024)]
    pub buffer_kib: usize,
    /// Delayed-ACK timeout, ms (0 = ACK immediately).
    #[arg(long, default_value_t = 10)]
    pub ack_delay_ms: u64,
    /// Virtual time limit, s.
    #[arg(long, default_value_t = 600.0)]
    pub max_sim_s: f64,
    /// Base policy set (nc mode): simulator = W 16, R = 1/(1 − loss) + 0.03 + 0.3·loss (1
    /// without loss), dense, seeded, deficit repair, Mitsuzumi's ACK rule; default = the
    /// product's (tcpnc up: W 12, R auto); experiment = the paper's W 3 with the simulator's R.
    #[arg(long, value_enum, default_value_t = Profile::Simulator)]
    pub profile: Profile,
    /// Coding policies (nc mode); each replaces the profile's value.
    #[command(flatten)]
    pub policies: PolicyOverrides,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    pub json: bool,
}

/// The policy set of `tcpnc sim --mode nc`: the profile's set for the path's loss with the
/// given keys replaced.
pub fn policies(args: &SimArgs) -> Policies {
    args.profile.policies(args.loss).with(&args.policies)
}

/// The TCP/NC engine configuration of `tcpnc sim --mode nc`.
pub fn engine_config(args: &SimArgs) -> EngineConfig {
    EngineConfig::new(
        &policies(args),
        args.mtu.saturating_sub(tcpnc_sim::nc_box::OUTER_HEADER_LEN),
    )
}

/// Builds the simulator configuration from the arguments.
pub fn config(args: &SimArgs) -> Result<SimConfig> {
    if !(args.rate_mbit > 0.0 && args.rate_mbit.is_finite()) {
        bail!("--rate-mbit must be > 0");
    }
    let loss = LossModel::from_mean(args.loss, args.burst).context("--loss, --burst")?;
    let mut cfg = SimConfig::new()
        .with_bytes(args.bytes)
        .with_seed(args.seed)
        .with_cc(args.cc)
        .with_rate_bps((args.rate_mbit * 1e6).round() as u64)
        .with_delay(secs(args.delay_ms / 1e3, "--delay-ms")?)
        .with_forward_loss(loss)
        .with_reverse_loss(LossModel::bernoulli(args.reverse_loss))
        .with_loss_position(if args.loss_before_queue {
            LossPosition::BeforeQueue
        } else {
            LossPosition::AfterQueue
        })
        .with_queue(QueueLimit::Packets(args.queue_packets))
        .with_max_sim_time(secs(args.max_sim_s, "--max-sim-s")?);
    let jitter = secs(args.jitter_ms / 1e3, "--jitter-ms")?;
    cfg.forward = cfg.forward.with_jitter(jitter, args.reorder);
    cfg.reverse = cfg.reverse.with_jitter(jitter, args.reorder);
    cfg.mtu = args.mtu;
    cfg.rx_buffer = args.buffer_kib.saturating_mul(1024);
    cfg.tx_buffer = cfg.rx_buffer;
    cfg.ack_delay = (args.ack_delay_ms > 0).then(|| Duration::from_millis(args.ack_delay_ms));
    cfg.validate()?;
    Ok(cfg)
}

fn secs(s: f64, name: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(s).with_context(|| format!("{name} must be a non-negative number"))
}

/// Runs `tcpnc sim`.
pub fn run(args: &SimArgs) -> Result<()> {
    let cfg = config(args)?;
    let start = Instant::now();
    let report = match args.mode {
        PathMode::Plain => tcpnc_sim::run(&cfg)?,
        PathMode::Direct => {
            bail!("--mode direct is a lab mode (tcpnc lab); the simulator runs plain or nc")
        }
        PathMode::Nc => {
            let engine = engine_config(args);
            let mut client = NcBox::new(engine.clone(), args.seed ^ 0x6e63_2d63_6c69_656e)
                .context("invalid engine configuration")?;
            let mut server = NcBox::new(engine, args.seed ^ 0x6e63_2d73_6572_7665)
                .context("invalid engine configuration")?;
            tcpnc_sim::run_with_boxes(&cfg, &mut client, &mut server)?
        }
    };
    let wall_s = start.elapsed().as_secs_f64();
    if args.json {
        let mut v = report_json(&report);
        v["mode"] = json!(args.mode);
        // Flat counters named by the issue: coded sent, redundant sent, innovative received,
        // NC-ACKs, TCP retransmissions.
        let c = &report.client_box;
        let s = &report.server_box;
        let get = |m: &std::collections::BTreeMap<String, u64>, k: &str| m.get(k).copied();
        v["coded_sent"] = json!(get(c, "data_sent"));
        v["redundant_sent"] = json!(get(c, "redundant_sent"));
        v["innovative_received"] = json!(get(s, "innovative_received"));
        v["nc_acks"] = json!(get(s, "acks_sent"));
        v["tcp_retransmissions"] = json!(report.tcp.retransmissions);
        v["wall_s"] = json!(wall_s);
        let mut config = json!({
            "profile": args.profile,
            "cc": args.cc,
            "rate_mbit": args.rate_mbit,
            "delay_ms": args.delay_ms,
            "loss": args.loss,
            "burst": args.burst,
            "reverse_loss": args.reverse_loss,
            "loss_before_queue": args.loss_before_queue,
            "queue_packets": args.queue_packets,
            "jitter_ms": args.jitter_ms,
            "reorder": args.reorder,
            "bytes": args.bytes,
            "seed": args.seed,
            "mtu": args.mtu,
            "buffer_kib": args.buffer_kib,
            "ack_delay_ms": args.ack_delay_ms,
            "max_sim_s": args.max_sim_s,
        });
        // The whole policy set the engines ran with (window, redundancy, scheme, coefficients,
        // repair, ack_rule), recorded beside the path.
        if let (Some(c), Value::Object(p)) = (config.as_object_mut(), json!(policies(args))) {
            c.extend(p);
        }
        v["config"] = config;
        println!("{v}");
    } else {
        print_summary(&report, wall_s);
    }
    Ok(())
}

/// The report as a JSON object (everything but the run's configuration and wall time).
pub fn report_json(r: &SimReport) -> Value {
    json!({
        "outcome": r.outcome.as_str(),
        "goodput_mbit": r.goodput_mbit,
        "completion_s": r.completion_s,
        "integrity_ok": r.integrity_ok,
        "bytes_requested": r.bytes_requested,
        "bytes_written": r.bytes_written,
        "bytes_delivered": r.bytes_delivered,
        "sha256_sent": hex(&r.sha256_sent),
        "sha256_received": hex(&r.sha256_received),
        "tcp": {
            "data_segments": r.tcp.data_segments,
            "retransmissions": r.tcp.retransmissions,
            "retransmitted_bytes": r.tcp.retransmitted_bytes,
            "acks": r.tcp.acks,
            "dup_acks": r.tcp.dup_acks,
        },
        "forward": link_json(&r.forward),
        "reverse": link_json(&r.reverse),
        "client_box": r.client_box,
        "server_box": r.server_box,
        "steps": r.steps,
    })
}

fn link_json(s: &LinkStats) -> Value {
    json!({
        "sent": s.sent,
        "sent_bytes": s.sent_bytes,
        "delivered": s.delivered,
        "delivered_bytes": s.delivered_bytes,
        "dropped_loss": s.dropped_loss,
        "dropped_queue": s.dropped_queue,
        "duplicated": s.duplicated,
        "corrupted": s.corrupted,
        "max_queue_packets": s.max_queue_packets,
        "max_queue_bytes": s.max_queue_bytes,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn print_summary(r: &SimReport, wall_s: f64) {
    println!(
        "outcome {}  integrity {}",
        r.outcome.as_str(),
        if r.integrity_ok { "ok" } else { "FAILED" }
    );
    println!(
        "goodput {:.3} Mbit/s  completion {:.3} s (virtual)  wall {:.3} s",
        r.goodput_mbit, r.completion_s, wall_s
    );
    println!(
        "bytes {}/{} delivered  tcp: {} data segments, {} retransmissions, {} dup ACKs",
        r.bytes_delivered,
        r.bytes_requested,
        r.tcp.data_segments,
        r.tcp.retransmissions,
        r.tcp.dup_acks
    );
    for (name, s) in [("forward", &r.forward), ("reverse", &r.reverse)] {
        println!(
            "{name}: sent {} delivered {} lost {} queue-dropped {} max-queue {} pkts",
            s.sent, s.delivered, s.dropped_loss, s.dropped_queue, s.max_queue_packets
        );
    }
}
