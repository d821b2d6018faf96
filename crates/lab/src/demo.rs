//! `tcpnc lab demo`: the embedded default plan — plain reno, cubic and bbr and TCP/NC (with
//! cubic) at a few loss rates on one path — run back to back, shown as a table with a short
//! explanation and drawn as a plot ([`crate::plot`]).

use std::path::PathBuf;

use indicatif::ProgressBar;
use serde_json::{Value, json};

use crate::error::Result;
use crate::measure::{Measurement, measure};
use crate::session::Lab;
use crate::settings::{
    CongestionControl, PathMode, PathSettings, PolicyOverrides, TransferSettings,
};

/// What the demo measures.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Bottleneck rate, Mbit/s.
    pub rate_mbit: f64,
    /// One-way delay, ms.
    pub delay_ms: f64,
    /// Loss rates on the data direction.
    pub losses: Vec<f64>,
    /// Bytes per transfer.
    pub bytes: u64,
    /// Bound on each transfer, seconds.
    pub timeout_s: f64,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            rate_mbit: 20.0,
            delay_ms: 20.0,
            losses: vec![0.0, 0.05, 0.1],
            bytes: 2_000_000,
            timeout_s: 300.0,
        }
    }
}

/// The variants compared at every loss rate: (mode, congestion control).
pub const VARIANTS: [(PathMode, CongestionControl); 4] = [
    (PathMode::Plain, CongestionControl::Reno),
    (PathMode::Plain, CongestionControl::Cubic),
    (PathMode::Plain, CongestionControl::Bbr),
    (PathMode::Nc, CongestionControl::Cubic),
];

/// The label of a variant, e.g. `plain cubic`.
pub fn label(mode: PathMode, cc: CongestionControl) -> String {
    format!("{} {cc}", mode.name())
}

/// One measured point.
#[derive(Debug, Clone)]
pub struct Row {
    /// Plain or nc.
    pub mode: PathMode,
    /// Congestion control.
    pub cc: CongestionControl,
    /// Loss rate.
    pub loss: f64,
    /// What was measured.
    pub measurement: Measurement,
}

/// The explanation printed before the runs.
pub fn intro(plan: &Plan) -> String {
    format!(
        "tcpnc lab demo: {} bytes over an emulated path of {} Mbit/s and {} ms one way,\n\
         with random loss {} on the data direction. Each transfer is real Linux TCP between\n\
         two network namespaces, through two tcpnc gateways and the tcpnc link emulator:\n\
         'plain' = gateways forward packets uncoded (TCP sees every loss and backs off),\n\
         'nc'    = gateways send random linear combinations with redundancy R ~ 1/(1-p)\n\
         \x20         (learnt from the loss they measure), acknowledge every useful one and\n\
         \x20         repair what R missed (TCP sees few losses).\n\
         Every transfer is checked end to end with sha256.\n",
        plan.bytes,
        plan.rate_mbit,
        plan.delay_ms,
        plan.losses
            .iter()
            .map(|p| format!("{:.0}%", p * 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Runs every variant at every loss rate on `lab`.
pub fn run(lab: &Lab, plan: &Plan, bar: &ProgressBar) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for &loss in &plan.losses {
        let path = PathSettings {
            rate_mbit: plan.rate_mbit,
            delay_ms: plan.delay_ms,
            loss,
            queue_packets: None,
            seed: 1,
        };
        for (mode, cc) in VARIANTS {
            let t = TransferSettings {
                bytes: plan.bytes,
                cc,
                seed: 1,
                timeout_s: plan.timeout_s,
            };
            bar.set_prefix(format!("{} @ {:.0}%", label(mode, cc), loss * 100.0));
            let coding = PolicyOverrides::default();
            let measurement = measure(lab, mode, &path, &coding, &t, false, bar)?;
            rows.push(Row {
                mode,
                cc,
                loss,
                measurement,
            });
        }
    }
    Ok(rows)
}

/// The goodput of `(mode, cc)` at `loss`, if measured.
pub fn goodput(rows: &[Row], mode: PathMode, cc: CongestionControl, loss: f64) -> Option<f64> {
    rows.iter()
        .find(|r| r.mode == mode && r.cc == cc && r.loss == loss)
        .map(|r| r.measurement.transfer.goodput_mbit)
}

/// The results as a table: one line per loss rate, goodput (retransmits) per variant.
pub fn table(plan: &Plan, rows: &[Row]) -> String {
    let mut s = format!("{:>6} | {:>10}", "loss", "C(1-p)");
    for (mode, cc) in VARIANTS {
        s += &format!(" | {:>18}", label(mode, cc));
    }
    s += &format!(" | {:>9}\n", "nc/cubic");
    s += &"-".repeat(s.len() - 1);
    s.push('\n');
    for &loss in &plan.losses {
        s += &format!(
            "{:>5.1}% | {:>10.2}",
            loss * 100.0,
            plan.rate_mbit * (1.0 - loss)
        );
        for (mode, cc) in VARIANTS {
            let cell = rows
                .iter()
                .find(|r| r.mode == mode && r.cc == cc && r.loss == loss)
                .map(|r| {
                    let t = &r.measurement.transfer;
                    let ok = if t.integrity_ok { "" } else { " BAD" };
                    format!("{:.2} ({}){ok}", t.goodput_mbit, t.retransmits)
                })
                .unwrap_or_else(|| "-".into());
            s += &format!(" | {cell:>18}");
        }
        let ratio = match (
            goodput(rows, PathMode::Nc, CongestionControl::Cubic, loss),
            goodput(rows, PathMode::Plain, CongestionControl::Cubic, loss),
        ) {
            (Some(n), Some(p)) if p > 0.0 => format!("{:.2}x", n / p),
            _ => "-".into(),
        };
        s += &format!(" | {ratio:>9}\n");
    }
    s += "\ngoodput in Mbit/s (sender retransmissions from TCP_INFO); C(1-p) is the ideal\n\
          limit of the path. 'nc/cubic' = nc cubic over plain cubic.";
    s
}

/// The whole demo as JSON.
pub fn to_json(plan: &Plan, rows: &[Row], plots: &[PathBuf]) -> Value {
    json!({
        "plan": {
            "rate_mbit": plan.rate_mbit,
            "delay_ms": plan.delay_ms,
            "losses": plan.losses,
            "bytes": plan.bytes,
        },
        "runs": rows.iter().map(|r| json!({
            "label": label(r.mode, r.cc),
            "loss": r.loss,
            "result": r.measurement,
        })).collect::<Vec<_>>(),
        "plots": plots.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    })
}
