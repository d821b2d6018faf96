//! One gateway against an in-process driver: the engine's own cost (`tcpnc bench gateway`,
//! issue 14).
//!
//! [`run`] starts one real [`Gateway`](crate::Gateway) (its reader threads, owner thread and,
//! with `workers` > 1 in mode nc, its engine workers) on the in-memory devices
//! ([`crate::io::fake_tun`], [`crate::io::FakeNet`]) and drives it from the calling thread,
//! which plays both ends of F TCP flows:
//!
//! * the **sending TCP** behind the gateway's TUN (`tcp.rs`): a SYN / SYN-ACK / ACK per flow,
//!   then MSS-sized segments of a known byte pattern injected into the fake TUN, at most
//!   `inflight` unacknowledged bytes per flow (and no more than the advertised window),
//!   advanced by the TCP ACKs the gateway writes to its TUN (in mode nc its engine
//!   synthesises them from the peer's NC-ACKs);
//! * the **remote peer** (`peer.rs`): a sans-IO `tcpnc_proto::Engine` with the gateway's own
//!   engine configuration ([`crate::peer_engine::engine_config`]) behind the gateway's own
//!   [`Envelope`](crate::security::Envelope), in integrity mode (`insecure = true`: CRC-32C,
//!   `tcpnc_tunnel::integrity`) or, with [`DriverOptions::cipher`], with fresh keys on both
//!   sides (a Noise handshake, then AEAD transport), fed the gateway's datagrams from the fake
//!   network, its frames (NC-ACKs, or in mode off the receiver's ACKs in BYPASS frames) sent
//!   back;
//! * the **receiving TCP** behind the peer (`tcp.rs`): checks that every byte arrives in
//!   order and equal to the pattern (integrity), ACKs as a TCP would (every second segment),
//!   its ACKs handed to the peer engine's `handle_local`.
//!
//! CPU: `getrusage(2)` of the whole process and of the driver thread around the transfer;
//! the gateway's share is the difference. The fakes' channels are part of what is measured
//! (the gateway's side of each hand-over in the gateway's share, the driver's in the
//! driver's). Nothing else should run in the process (under `cargo test` other tests do).

mod cpu;
mod peer;
mod pump;
mod rig;
mod tcp;

use std::io;
use std::time::{Duration, Instant};

use serde::Serialize;
use tcpnc_proto::settings::CodingMode;
use tcpnc_proto::tcp::TcpError;
use thiserror::Error;

use crate::config::{ConfigError, MAX_WORKERS};
use crate::error::GatewayError;
use crate::security::CipherSetting;
use crate::stats::{GatewayCounters, GatewayDrops, Snapshot};

pub use tcp::{MAX_MSS, MIN_MSS, RETRANSMIT_TIMEOUT};

/// Most flows a run takes.
pub const MAX_FLOWS: usize = 1024;
/// Largest `inflight`.
pub const MAX_INFLIGHT: u64 = 64 << 20;

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverOptions {
    /// The gateway's (and the peer's) coding mode.
    pub mode: CodingMode,
    /// Coding window W (mode nc).
    pub window: u16,
    /// Fixed redundancy R (mode nc).
    pub redundancy: f64,
    /// TCP flows, each sending `bytes`.
    pub flows: usize,
    /// Bytes per flow.
    pub bytes: u64,
    /// The gateway's `interface.workers` (mode off always runs its engine on the owner).
    pub workers: usize,
    /// The sending TCP's MSS (the SYN-ACK's, clamped by the engines, may lower it).
    pub mss: u16,
    /// Unacknowledged bytes per flow at most (the sending TCP's window).
    pub inflight: u64,
    /// Bound on the transfer.
    pub timeout: Duration,
    /// Bound on a period without any byte acknowledged or received.
    pub stall: Duration,
    /// The tunnel between the gateway and the peer: `None`, the integrity envelope
    /// (`insecure = true`, CRC-32C: the engine's own cost); `Some(cipher)`, fresh keys on both
    /// sides, a Noise IKpsk2 handshake and transport sealed with `cipher` (what a deployment
    /// runs; the gateway's share then includes its AEAD).
    pub cipher: Option<CipherSetting>,
}

impl Default for DriverOptions {
    /// nc, W 12, R 1.0, one flow of 200 MB, one worker, MSS 1360, 1 MiB in flight, 300 s
    /// bound, 10 s stall bound, the integrity envelope.
    fn default() -> Self {
        DriverOptions {
            mode: CodingMode::Nc,
            window: 12,
            redundancy: 1.0,
            flows: 1,
            bytes: 200_000_000,
            workers: 1,
            mss: 1360,
            inflight: 1 << 20,
            timeout: Duration::from_secs(300),
            stall: Duration::from_secs(10),
            cipher: None,
        }
    }
}

impl DriverOptions {
    /// `off` or `nc W12 R1.0` (the labels of `tcpnc lab speed`).
    pub fn label(&self) -> String {
        match self.mode {
            CodingMode::Off => "off".into(),
            CodingMode::Nc => format!("nc W{} R{:.1}", self.window, self.redundancy),
        }
    }

    /// Checks the options and the gateway configuration they make (W, R), without running.
    pub fn validate(&self) -> Result<(), DriverError> {
        self.check()?;
        let keys = rig::Keys::for_options(self)?;
        rig::gateway_config(self, keys.as_ref()).map(drop)
    }

    /// `insecure (integrity envelope, CRC-32C)` or `secure (Noise IKpsk2, aes-256-gcm)`: the
    /// tunnel this case runs, with the cipher this CPU resolves `auto` to.
    pub fn tunnel(&self) -> String {
        match self.cipher {
            None => "insecure (integrity envelope, CRC-32C)".into(),
            Some(c) => format!("secure (Noise IKpsk2, {})", c.resolve()),
        }
    }

    fn check(&self) -> Result<(), DriverError> {
        let bad = |name, reason: String| Err(DriverError::Invalid { name, reason });
        if !(1..=MAX_FLOWS).contains(&self.flows) {
            return bad(
                "flows",
                format!("{} is outside 1..={MAX_FLOWS}", self.flows),
            );
        }
        if self.bytes == 0 {
            return bad("bytes", "must be at least 1".into());
        }
        if !(1..=MAX_WORKERS).contains(&self.workers) {
            let w = self.workers;
            return bad("workers", format!("{w} is outside 1..={MAX_WORKERS}"));
        }
        if !(MIN_MSS..=MAX_MSS).contains(&self.mss) {
            let m = self.mss;
            return bad("mss", format!("{m} is outside {MIN_MSS}..={MAX_MSS}"));
        }
        if !(u64::from(self.mss)..=MAX_INFLIGHT).contains(&self.inflight) {
            let (i, m) = (self.inflight, self.mss);
            return bad(
                "inflight",
                format!("{i} is outside {m} (the MSS)..={MAX_INFLIGHT}"),
            );
        }
        if self.timeout.is_zero() || self.stall.is_zero() {
            return bad(
                "timeout",
                "the run's and the stall's bounds must be above 0".into(),
            );
        }
        Ok(())
    }
}

/// Why a run failed.
#[derive(Debug, Error)]
pub enum DriverError {
    /// An option out of range.
    #[error("option {name}: {reason}")]
    Invalid {
        /// The option.
        name: &'static str,
        /// Why.
        reason: String,
    },
    /// The gateway's configuration (W, R) was refused.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The gateway could not be assembled or failed.
    #[error(transparent)]
    Gateway(#[from] GatewayError),
    /// The peer's engine refused its configuration.
    #[error("the peer's engine: {0}")]
    Engine(String),
    /// The peer's envelope could not be set up.
    #[error("the peer's envelope: {0}")]
    Envelope(String),
    /// A fake device or a clock failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The error.
        source: io::Error,
    },
    /// A segment could not be built.
    #[error("building a TCP segment: {0}")]
    Segment(#[from] TcpError),
    /// The gateway's side of the fake TUN closed during the run.
    #[error("the gateway stopped during the run (its fake TUN closed)")]
    GatewayStopped,
    /// Not every flow got its SYN-ACK in time.
    #[error("handshake: {established} of {flows} flow(s) got their SYN-ACK within {waited:?}")]
    Handshake {
        /// Flows established.
        established: usize,
        /// Flows.
        flows: usize,
        /// How long the driver waited.
        waited: Duration,
    },
    /// Nothing moved for the stall bound, or the run took longer than its bound.
    #[error(
        "{what} after {waited:?}: {acked} of {total} bytes acknowledged to the senders, \
         {received} received in order"
    )]
    Stuck {
        /// `stalled` (no progress) or `timed out` (the run's bound).
        what: &'static str,
        /// The bound that expired.
        waited: Duration,
        /// Bytes acknowledged, all flows.
        acked: u64,
        /// Bytes received in order, all flows.
        received: u64,
        /// Bytes to send, all flows.
        total: u64,
    },
}

/// CPU seconds over the transfer.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct CpuReport {
    /// The whole process.
    pub process_s: f64,
    /// The driver thread (both TCPs and the peer).
    pub driver_s: f64,
    /// The process less the driver: the gateway's threads.
    pub gateway_s: f64,
    /// The gateway's CPU seconds per GB (10^9 bytes) delivered.
    pub gateway_s_per_gb: f64,
    /// The driver's CPU seconds per GB delivered.
    pub driver_s_per_gb: f64,
}

/// What the driver's TCPs and peer saw.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct TransferCounts {
    /// Bytes received in order, all flows.
    pub delivered_bytes: u64,
    /// Bytes that differed from what was sent (or came beyond the stream's end).
    pub mismatched_bytes: u64,
    /// Packets with a bad TCP checksum, either side (dropped).
    pub checksum_errors: u64,
    /// Segments the receivers got ahead of the next byte (dropped).
    pub out_of_order: u64,
    /// Segments the receivers already had.
    pub duplicates: u64,
    /// Segments the senders sent again.
    pub retransmitted: u64,
    /// The senders' retransmission timeouts.
    pub timeouts: u64,
    /// Datagrams the peer's envelope refused.
    pub refused: u64,
    /// Packets neither TCP could place (unparsable, unknown port).
    pub stray: u64,
}

/// Packets or datagrams per call of the gateway's devices (its `*_calls` counters). On the
/// fakes a read takes what is queued (TUN up to 64, UDP up to 32) and a batched send is one
/// call for the whole flush.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct PerCall {
    /// Packets per TUN read.
    pub tun_rx: f64,
    /// Datagrams per UDP receive.
    pub udp_rx: f64,
    /// Packets per TUN write.
    pub tun_tx: f64,
    /// Datagrams per UDP send.
    pub udp_tx: f64,
}

impl PerCall {
    fn of(g: &GatewayCounters) -> PerCall {
        let ratio = |n: u64, calls: u64| n as f64 / calls.max(1) as f64;
        PerCall {
            tun_rx: ratio(g.tun_rx_packets, g.tun_rx_calls),
            udp_rx: ratio(g.udp_rx_datagrams, g.udp_rx_calls),
            tun_tx: ratio(g.tun_tx_packets, g.tun_tx_calls),
            udp_tx: ratio(g.udp_tx_datagrams, g.udp_tx_calls),
        }
    }
}

/// The figures of one run.
#[derive(Debug, Clone, Serialize)]
pub struct DriverReport {
    /// `off` or `nc W12 R1.0`.
    pub case: String,
    /// `off` or `nc`.
    pub mode: String,
    /// The tunnel ([`DriverOptions::tunnel`]).
    pub tunnel: String,
    /// W (mode nc).
    pub window: Option<u16>,
    /// R (mode nc).
    pub redundancy: Option<f64>,
    /// Flows.
    pub flows: usize,
    /// Bytes per flow.
    pub bytes_per_flow: u64,
    /// `workers` asked for.
    pub workers_asked: usize,
    /// Engine workers the gateway ran (its snapshot's `workers`: 1 in mode off).
    pub workers: usize,
    /// MSS the senders used.
    pub mss: u16,
    /// Unacknowledged bytes per flow at most.
    pub inflight: u64,
    /// Seconds from the first data segment to the last byte received and acknowledged.
    pub seconds: f64,
    /// Bytes delivered × 8 / seconds, Mbit/s.
    pub goodput_mbit: f64,
    /// Data segments delivered per second.
    pub segments_per_s: f64,
    /// Packets and datagrams the gateway read and wrote (TUN and UDP, whole run) per second.
    pub gateway_packets_per_s: f64,
    /// The gateway's packets per device call (whole run): its CPU per GB falls as these rise.
    pub per_call: PerCall,
    /// CPU.
    pub cpu: CpuReport,
    /// Every byte arrived, in order, equal to what was sent; no bad checksum either way.
    pub integrity_ok: bool,
    /// The driver's counts.
    pub transfer: TransferCounts,
    /// DATA frames the gateway's engines sent (`data_sent`; 0 in mode off).
    pub nc_data_sent: u64,
    /// BYPASS frames the gateway's engines sent.
    pub bypass_sent: u64,
    /// The gateway's own drops.
    pub drops: GatewayDrops,
    /// Items handed to each engine worker (empty with one).
    pub worker_items: Vec<u64>,
    /// The gateway's final counters (whole run, handshakes included).
    pub gateway: GatewayCounters,
    /// The gateway's tunnel counters (its snapshot's `tunnel`): drops by reason and, with a
    /// secure tunnel, handshakes, sessions by cipher, datagrams sealed and opened.
    pub gateway_tunnel: serde_json::Value,
}

/// Runs one case; see the module documentation.
pub fn run(opts: &DriverOptions) -> Result<DriverReport, DriverError> {
    opts.check()?;
    let rig = rig::Rig::start(opts)?;
    let mut driver = pump::Driver::new(opts, rig);
    let outcome = measured(&mut driver);
    // The gateway stops whatever happened; its error comes second to the driver's.
    let snapshot = driver.stop();
    let (elapsed, cpu) = outcome?;
    Ok(report(opts, &driver, elapsed, cpu, &snapshot?))
}

/// Handshakes, then the transfer between two CPU samples: (seconds, (process, driver)).
fn measured(driver: &mut pump::Driver) -> Result<(Duration, (Duration, Duration)), DriverError> {
    driver.handshake()?;
    let clock = |what| move |source| DriverError::Io { what, source };
    let p0 = cpu::process().map_err(clock("getrusage(RUSAGE_SELF)"))?;
    let d0 = cpu::thread().map_err(clock("getrusage(RUSAGE_THREAD)"))?;
    let t0 = Instant::now();
    driver.transfer()?;
    let elapsed = t0.elapsed();
    let p1 = cpu::process().map_err(clock("getrusage(RUSAGE_SELF)"))?;
    let d1 = cpu::thread().map_err(clock("getrusage(RUSAGE_THREAD)"))?;
    Ok((elapsed, (p1.saturating_sub(p0), d1.saturating_sub(d0))))
}

fn report(
    opts: &DriverOptions,
    driver: &pump::Driver,
    elapsed: Duration,
    (process, thread): (Duration, Duration),
    snap: &Snapshot,
) -> DriverReport {
    let t = driver.counts();
    let secs = elapsed.as_secs_f64().max(1e-9);
    let gb = t.delivered_bytes as f64 / 1e9;
    let per_gb = |s: f64| if gb > 0.0 { s / gb } else { 0.0 };
    let gateway_s = process.saturating_sub(thread).as_secs_f64();
    let g = &snap.gateway;
    let total = |k| snap.engine_total(k);
    let nc = opts.mode == CodingMode::Nc;
    DriverReport {
        case: opts.label(),
        mode: opts.mode.name().into(),
        tunnel: opts.tunnel(),
        window: nc.then_some(opts.window),
        redundancy: nc.then_some(opts.redundancy),
        flows: opts.flows,
        bytes_per_flow: opts.bytes,
        workers_asked: opts.workers,
        workers: snap.workers,
        mss: driver.mss(),
        inflight: opts.inflight,
        seconds: secs,
        goodput_mbit: t.delivered_bytes as f64 * 8.0 / secs / 1e6,
        segments_per_s: driver.segments_delivered() as f64 / secs,
        gateway_packets_per_s: (g.tun_rx_packets
            + g.tun_tx_packets
            + g.udp_rx_datagrams
            + g.udp_tx_datagrams) as f64
            / secs,
        per_call: PerCall::of(g),
        cpu: CpuReport {
            process_s: process.as_secs_f64(),
            driver_s: thread.as_secs_f64(),
            gateway_s,
            gateway_s_per_gb: per_gb(gateway_s),
            driver_s_per_gb: per_gb(thread.as_secs_f64()),
        },
        integrity_ok: t.delivered_bytes == opts.bytes * opts.flows as u64
            && t.mismatched_bytes == 0
            && t.checksum_errors == 0,
        transfer: t,
        nc_data_sent: total("data_sent"),
        bypass_sent: total("bypass_sent"),
        drops: GatewayDrops::of(snap),
        worker_items: snap.worker_items.clone(),
        gateway: snap.gateway,
        gateway_tunnel: snap.tunnel.clone(),
    }
}
