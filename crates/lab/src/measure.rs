//! A measurement (one session + one transfer, optionally iperf3 in a second session) and
//! `lab compare`: plain then nc on the same path.

use indicatif::ProgressBar;
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{LabError, Result};
use crate::iperf;
use crate::session::{Lab, Session};
use crate::settings::{PathMode, PathSettings, PathSpec, PolicyOverrides, TransferSettings};
use crate::transfer::{TransferResult, run_transfer};

/// Everything one measurement reports.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    /// The transfer's figures (goodput, completion, integrity, retransmits, ...).
    #[serde(flatten)]
    pub transfer: TransferResult,
    /// `{"client": ..., "server": ...}` gateway stats snapshots (null in direct mode).
    pub gateways: Option<crate::session::GatewayStats>,
    /// The relay's counters (null in direct mode).
    pub link: Value,
    /// iperf3's figures, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iperf3: Option<Value>,
    /// The settings used.
    pub settings: Value,
    /// The spoofing attacker's report (`tcpnc lab run --spoof`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spoof: Option<Value>,
}

/// The settings of a measurement as reported.
pub fn settings_json(
    mode: PathMode,
    path: &PathSettings,
    coding: &PolicyOverrides,
    t: &TransferSettings,
) -> Value {
    let mut v = json!(path.spec);
    let mut fields = json!({
        "mode": mode,
        // The queue actually used (the path may leave it to one BDP).
        "queue_packets": path.spec.queue(),
        "path_seed": path.seed,
        "bytes": t.bytes,
        "flows": t.flows,
        "cc": t.cc,
        "data_seed": t.seed,
    });
    if t.warmup_bytes > 0 {
        fields["warmup_bytes"] = json!(t.warmup_bytes);
    }
    if let (Some(o), Value::Object(f)) = (v.as_object_mut(), fields) {
        o.extend(f);
    }
    if mode == PathMode::Direct {
        // Direct routing bypasses the relay: no rate, delay or loss is applied.
        for k in PathSpec::KEYS.into_iter().chain(["path_seed"]) {
            v[k] = Value::Null;
        }
    }
    if mode == PathMode::Nc {
        // The whole policy set the gateways ran with: the product's, with the keys given.
        if let (Some(o), Value::Object(p)) = (
            v.as_object_mut(),
            json!(tcpnc_settings::Policies::product().with(coding)),
        ) {
            o.extend(p);
        }
    }
    v
}

/// The unmeasured transfer of `t.warmup_bytes` (one flow) before the measured one, if any;
/// an error if it does not arrive intact.
fn warm_up(session: &mut Session<'_>, t: &TransferSettings, bar: &ProgressBar) -> Result<()> {
    if t.warmup_bytes == 0 {
        return Ok(());
    }
    let warm = TransferSettings {
        bytes: t.warmup_bytes,
        flows: 1,
        series: false,
        warmup_bytes: 0,
        ..t.clone()
    };
    let r = run_transfer(session, &warm, bar)?;
    if !r.integrity_ok {
        return Err(LabError::Transfer(format!(
            "the warm-up transfer of {} bytes arrived with {} bytes or a different sha256",
            warm.bytes, r.bytes_received
        )));
    }
    Ok(())
}

/// Runs one measurement on `lab` (after the warm-up transfer, if `t` asks for one: the link's
/// and the gateways' counters then cover both).
pub fn measure(
    lab: &Lab,
    mode: PathMode,
    path: &PathSettings,
    coding: &PolicyOverrides,
    t: &TransferSettings,
    with_iperf3: bool,
    bar: &ProgressBar,
) -> Result<Measurement> {
    path.validate()?;
    t.validate()?;
    let mut session = Session::start(lab, mode, path, coding)?;
    warm_up(&mut session, t, bar)?;
    let transfer = run_transfer(&mut session, t, bar)?;
    let stats = session.finish()?;
    let iperf3 = if with_iperf3 {
        let mut session = Session::start(lab, mode, path, coding)?;
        let r = iperf::run_iperf3(&mut session, t)?;
        session.finish()?;
        Some(r)
    } else {
        None
    };
    Ok(Measurement {
        transfer,
        gateways: stats.gateways,
        link: stats.link.unwrap_or(Value::Null),
        spoof: stats.spoof,
        iperf3,
        settings: {
            let mut v = settings_json(mode, path, coding, t);
            if mode != PathMode::Direct {
                v["tunnel"] = json!(lab.tunnel);
            }
            v
        },
    })
}

/// The result of `lab compare`: exactly `{"plain": ..., "nc": ...}` in JSON.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Gateways with coding off.
    pub plain: Measurement,
    /// Gateways with TCP/NC.
    pub nc: Measurement,
}

impl Comparison {
    /// nc goodput / plain goodput.
    pub fn speedup(&self) -> f64 {
        self.nc.transfer.goodput_mbit / self.plain.transfer.goodput_mbit.max(1e-9)
    }
}

/// Runs plain then nc back to back on one topology.
pub fn compare(
    lab: &Lab,
    path: &PathSettings,
    coding: &PolicyOverrides,
    t: &TransferSettings,
    with_iperf3: bool,
    bar: &ProgressBar,
) -> Result<Comparison> {
    bar.set_prefix(format!("plain {}", t.cc));
    let plain = measure(lab, PathMode::Plain, path, coding, t, with_iperf3, bar)?;
    bar.set_prefix(format!("nc {}", t.cc));
    let nc = measure(lab, PathMode::Nc, path, coding, t, with_iperf3, bar)?;
    Ok(Comparison { plain, nc })
}

/// Human-readable lines for one measurement.
pub fn describe(name: &str, m: &Measurement) -> String {
    let t = &m.transfer;
    let mut s = format!(
        "{name:>12}: {:7.2} Mbit/s  {:7.2} s  retransmits {:5}  integrity {}",
        t.goodput_mbit,
        t.completion_s,
        t.retransmits,
        if t.integrity_ok { "ok" } else { "FAILED" }
    );
    if let Some(ip) = &m.iperf3 {
        match ip.get("goodput_mbit").and_then(Value::as_f64) {
            Some(g) => s += &format!("  (iperf3 {g:.2} Mbit/s)"),
            None => s += &format!("  (iperf3: {})", ip["skipped"].as_str().unwrap_or("-")),
        }
    }
    s
}
