//! `tcpnc sim --workload stream`: one frame trace streamed over the same simulated path by
//! plain TCP and by TCP/NC side by side — with a fixed coding window and with VBNC unless
//! `--window-policy` names one — and each scheme's per-frame latency, jitter, stalls and
//! goodput (`tcpnc_stream::metrics`).

use std::time::Duration;

use serde_json::{Value, json};
use tcpnc_proto::EngineConfig;
use tcpnc_proto::settings::{CongestionControl, Policies, WindowPolicy};
pub use tcpnc_stream::StreamSpec;
use tcpnc_stream::{FrameRecord, SIM_DURATION_S, StreamSummary, Trace, series_csv, summarize};

use crate::config::SimConfig;
use crate::nc_box::NcBox;
use crate::report::SimReport;
use crate::run_spec::{RunSpec, RunSpecError};
use crate::stream::StreamWorkload;

/// One scheme's run.
#[derive(Debug, Clone)]
pub struct SchemeResult {
    /// `plain-<cc>`, `nc-fixed` or `nc-vbnc`.
    pub scheme: String,
    /// The transfer's report (TCP and link counters, integrity of the whole stream).
    pub report: SimReport,
    /// Every frame.
    pub records: Vec<FrameRecord>,
    /// Their summary.
    pub summary: StreamSummary,
}

/// A scheme's name: `plain-<cc>` for plain TCP, `nc-<window policy>` for TCP/NC (`None`:
/// plain).
pub fn scheme_name(cc: CongestionControl, window_policy: Option<WindowPolicy>) -> String {
    match window_policy {
        None => format!("plain-{cc}"),
        Some(w) => format!("nc-{w}"),
    }
}

/// The schemes of a stream run: plain, then nc with each window policy (the one given, or
/// fixed and vbnc).
fn schemes(spec: &RunSpec) -> Vec<(String, Option<Policies>)> {
    let mut out = vec![(scheme_name(spec.cc, None), None)];
    let given = spec.policies.window_policy;
    for w in [WindowPolicy::Fixed, WindowPolicy::Vbnc] {
        if given.is_none_or(|g| g == w) {
            let p = Policies {
                window_policy: w,
                ..spec.policies()
            };
            out.push((scheme_name(spec.cc, Some(w)), Some(p)));
        }
    }
    out
}

/// Streams `trace` over `spec`'s path with every scheme (same seeds: same losses per scheme
/// position in the link's random stream, same frame contents), each by [`run_scheme`].
pub fn run_stream(
    spec: &RunSpec,
    trace: &Trace,
    deadline: Duration,
) -> Result<Vec<SchemeResult>, RunSpecError> {
    let cfg = spec.sim_config()?;
    schemes(spec)
        .into_iter()
        .map(|(scheme, policies)| {
            let engine = policies.map(|p| spec.engine_config_with(&p));
            run_scheme(&cfg, trace, deadline, scheme, engine)
        })
        .collect()
}

/// Streams `trace` once over `cfg`'s path (its bytes replaced by the trace's): plain TCP
/// without `engine`, TCP/NC with it. `cfg`'s seed drives the link, the frames' contents and
/// the coding; `scheme` names the result. An experiment plan's stream point is one call.
pub fn run_scheme(
    cfg: &SimConfig,
    trace: &Trace,
    deadline: Duration,
    scheme: String,
    engine: Option<EngineConfig>,
) -> Result<SchemeResult, RunSpecError> {
    let cfg = SimConfig {
        bytes: trace.bytes(),
        ..cfg.clone()
    };
    let mut app = StreamWorkload::new(trace.clone(), cfg.seed ^ 0x5EED_F4A3E5);
    let report = match engine {
        None => crate::run_workload(
            &cfg,
            &mut app,
            &mut crate::PassThrough::raw(),
            &mut crate::PassThrough::raw(),
        )?,
        Some(e) => {
            let (mut c, mut s) = NcBox::pair(e, cfg.seed)?;
            crate::run_workload(&cfg, &mut app, &mut c, &mut s)?
        }
    };
    let records = app.records();
    let summary = summarize(&records, deadline);
    Ok(SchemeResult {
        scheme,
        report,
        records,
        summary,
    })
}

/// The run as one JSON object: the trace, each scheme's summary and counters, and `config`
/// (the run spec, the whole path and policy set, the stream flags).
pub fn stream_json(
    spec: &RunSpec,
    stream: &StreamSpec,
    trace: &Trace,
    results: &[SchemeResult],
    wall_s: f64,
) -> Value {
    let schemes: Vec<Value> = results
        .iter()
        .map(|r| {
            json!({
                "scheme": r.scheme,
                "outcome": r.report.outcome.as_str(),
                "integrity_ok": r.report.integrity_ok,
                "frames_intact": r.summary.intact,
                "summary": r.summary,
                "tcp_retransmissions": r.report.tcp.retransmissions,
                "tcp_dup_acks": r.report.tcp.dup_acks,
                "forward_lost": r.report.forward.dropped_loss,
                "client_box": r.report.client_box,
            })
        })
        .collect();
    let mut config = serde_json::to_value(spec).unwrap_or(Value::Null);
    if let Some(c) = config.as_object_mut() {
        for part in [
            json!(spec.path()),
            json!(spec.policies()),
            json!(stream.resolved(SIM_DURATION_S)),
        ] {
            if let Value::Object(p) = part {
                c.extend(p);
            }
        }
        c.remove("window_policy"); // per scheme
    }
    json!({
        "workload": "stream",
        "trace": trace.summary(),
        "schemes": schemes,
        "config": config,
        "wall_s": wall_s,
    })
}

/// The per-frame series of every scheme as one CSV (`tcpnc_stream::series_csv`).
pub fn stream_series(results: &[SchemeResult]) -> String {
    results
        .iter()
        .enumerate()
        .map(|(i, r)| series_csv(&r.scheme, &r.records, i == 0))
        .collect()
}

/// One line per scheme for a terminal.
pub fn stream_summary(trace: &Trace, results: &[SchemeResult]) -> String {
    let mut s = format!(
        "{} frames, {:.3} Mbit/s mean\n{:<11} {}",
        trace.frames.len(),
        trace.mean_bit_rate() / 1e6,
        "scheme",
        StreamSummary::table_header()
    );
    for r in results {
        s += &format!("\n{:<11} {}", r.scheme, r.summary.table_row());
    }
    s
}
