//! `tcpnc lab demo`: the embedded plan `experiments/demo-lab.toml` run by the experiment
//! runner on the lab backend, printed as a table (goodput and retransmissions per variant and
//! loss rate, with nc's ratio to plain cubic and plain bbr).

use std::path::Path;

use serde_json::{Value, json};
use tcpnc_proto::settings::PathSpec;

use crate::error::{ExperimentError, Result};
use crate::lab_backend::LabBackend;
use crate::params::{CongestionControl, PathMode};
use crate::plan::Plan;
use crate::runner::{Outcome, RunOptions, interrupt_flag, run_plan};
use crate::summary::{PointSummary, Summary, summary_json};

/// The demo plan (`experiments/demo-lab.toml`), embedded.
pub const DEMO_PLAN: &str = include_str!("../../../experiments/demo-lab.toml");

/// What `tcpnc lab demo` may change in the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoOptions {
    /// Bottleneck rate, Mbit/s.
    pub rate_mbit: f64,
    /// One-way delay, ms.
    pub delay_ms: f64,
    /// Loss rates measured.
    pub losses: Vec<f64>,
    /// Bytes per transfer.
    pub bytes: u64,
    /// Bound on each transfer, seconds.
    pub timeout_s: f64,
}

/// The demo plan with `o` applied (the queue follows the path: one bandwidth-delay product).
pub fn plan(o: &DemoOptions) -> Result<Plan> {
    let source = Path::new("experiments/demo-lab.toml");
    let bad = |detail: String| ExperimentError::Plan {
        path: source.to_path_buf(),
        detail,
    };
    let mut t: toml::Table = DEMO_PLAN.parse().map_err(|e| bad(format!("{e}")))?;
    let queue = PathSpec::clean(o.rate_mbit, o.delay_ms).queue();
    let fixed = table(&mut t, "fixed");
    fixed.insert("rate_mbit".into(), o.rate_mbit.into());
    fixed.insert("delay_ms".into(), o.delay_ms.into());
    fixed.insert("queue_packets".into(), (queue as i64).into());
    fixed.insert("bytes".into(), (o.bytes as i64).into());
    fixed.insert("timeout_s".into(), o.timeout_s.into());
    let losses = o.losses.iter().map(|&p| toml::Value::from(p)).collect();
    table(&mut t, "sweep").insert("loss".into(), toml::Value::Array(losses));
    let text = toml::to_string(&t).map_err(|e| bad(e.to_string()))?;
    Plan::parse(&text, source)
}

fn table<'a>(t: &'a mut toml::Table, key: &str) -> &'a mut toml::Table {
    let v = t
        .entry(key)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if !v.is_table() {
        *v = toml::Value::Table(toml::Table::new());
    }
    v.as_table_mut().expect("just made a table")
}

/// Runs the demo afresh in `out` (records, summary and plots) on the lab.
pub fn run(plan: &Plan, out: &Path, progress: bool) -> Result<Outcome> {
    let mut backend = LabBackend::default();
    let opts = RunOptions {
        out_dir: out.to_path_buf(),
        fresh: true,
        progress,
        stop: Some(interrupt_flag()?),
    };
    run_plan(plan, &mut backend, &opts)
}

/// The explanation printed before the runs.
pub fn intro(o: &DemoOptions) -> String {
    format!(
        "tcpnc lab demo: {} bytes over an emulated path of {} Mbit/s and {} ms one way,\n\
         with random loss {} on the data direction. Each transfer is real Linux TCP between\n\
         two network namespaces, through two tcpnc gateways and the tcpnc link emulator:\n\
         'plain' = gateways forward packets uncoded (TCP sees every loss and backs off),\n\
         'nc'    = gateways send random linear combinations with redundancy R ~ 1/(1-p)\n\
         \x20         (learnt from the loss they measure; each packet alone while they see\n\
         \x20         none), acknowledge every useful one and repair what R missed (TCP\n\
         \x20         sees few losses).\n\
         Every transfer is checked end to end with sha256.\n",
        o.bytes,
        o.rate_mbit,
        o.delay_ms,
        o.losses
            .iter()
            .map(|p| format!("{:.0}%", p * 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The variants of the summary in plan order: (mode, congestion control).
fn variants(s: &Summary) -> Vec<(PathMode, CongestionControl)> {
    let mut v: Vec<(PathMode, CongestionControl)> = Vec::new();
    for p in &s.points {
        let key = (p.params.mode, p.params.cc);
        if !v.contains(&key) {
            v.push(key);
        }
    }
    v
}

fn point(s: &Summary, mode: PathMode, cc: CongestionControl, loss: f64) -> Option<&PointSummary> {
    s.points
        .iter()
        .find(|p| p.params.mode == mode && p.params.cc == cc && p.params.path().loss == loss)
}

fn ratio(s: &Summary, loss: f64, over: CongestionControl) -> String {
    let g = |mode, cc| point(s, mode, cc, loss).map(|p| p.goodput.mean);
    match (
        g(PathMode::Nc, CongestionControl::Cubic),
        g(PathMode::Plain, over),
    ) {
        (Some(n), Some(p)) if p > 0.0 && n.is_finite() => format!("{:.2}x", n / p),
        _ => "-".into(),
    }
}

/// The results as a table: one line per loss rate, goodput (retransmissions) per variant.
pub fn table_text(o: &DemoOptions, s: &Summary) -> String {
    let variants = variants(s);
    let mut out = format!("{:>6} | {:>10}", "loss", "C(1-p)");
    for (mode, cc) in &variants {
        out += &format!(" | {:>18}", format!("{mode} {cc}"));
    }
    out += &format!(" | {:>9} | {:>9}\n", "nc/cubic", "nc/bbr");
    out += &"-".repeat(out.len() - 1);
    out.push('\n');
    for &loss in &o.losses {
        out += &format!(
            "{:>5.1}% | {:>10.2}",
            loss * 100.0,
            o.rate_mbit * (1.0 - loss)
        );
        for &(mode, cc) in &variants {
            let cell = point(s, mode, cc, loss)
                .map(|p| {
                    let bad = if p.not_counted > 0 { " BAD" } else { "" };
                    format!("{:.2} ({:.0}){bad}", p.goodput.mean, p.retransmissions)
                })
                .unwrap_or_else(|| "-".into());
            out += &format!(" | {cell:>18}");
        }
        let (c, b) = (
            ratio(s, loss, CongestionControl::Cubic),
            ratio(s, loss, CongestionControl::Bbr),
        );
        out += &format!(" | {c:>9} | {b:>9}\n");
    }
    out += "\ngoodput in Mbit/s (sender retransmissions from TCP_INFO); C(1-p) is the ideal\n\
            limit of the path. 'nc/cubic', 'nc/bbr' = nc cubic over plain cubic, plain bbr.\n\
            BAD = a run that failed or whose integrity check failed.";
    out
}

/// The whole demo as JSON: the options, the experiment summary and the plots.
pub fn to_json(o: &DemoOptions, plan: &Plan, outcome: &Outcome) -> Value {
    json!({
        "plan": {
            "rate_mbit": o.rate_mbit,
            "delay_ms": o.delay_ms,
            "losses": o.losses,
            "bytes": o.bytes,
        },
        "summary": summary_json(plan, &outcome.summary),
        "plots": outcome.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    })
}

/// Whether every run of the demo completed with integrity.
pub fn all_counted(s: &Summary) -> bool {
    s.points.iter().all(|p| p.not_counted == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend;

    fn options() -> DemoOptions {
        DemoOptions {
            rate_mbit: 10.0,
            delay_ms: 5.0,
            losses: vec![0.0, 0.02],
            bytes: 1_000_000,
            timeout_s: 60.0,
        }
    }

    #[test]
    fn demo_plan_follows_the_options() {
        let plan = plan(&options()).unwrap();
        // Two losses x (three plain variants + nc cubic).
        assert_eq!(plan.points.len(), 8);
        let nc: Vec<_> = plan
            .points
            .iter()
            .filter(|p| p.params.mode == PathMode::Nc)
            .collect();
        assert_eq!(nc.len(), 2);
        for p in nc {
            assert_eq!(p.params.policies(), tcpnc_proto::Policies::product());
            assert_eq!(p.params.cc, CongestionControl::Cubic);
        }
        for p in &plan.points {
            assert_eq!(p.params.path().rate_mbit, 10.0);
            assert_eq!(p.params.bytes, 1_000_000);
            assert_eq!(p.params.path().queue_packets, Some(32));
            assert!(LabBackend::default().check(&p.params).is_ok());
        }
    }
}
