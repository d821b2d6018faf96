//! `tcpnc lab stream` (issue 12): one frame trace streamed over the same emulated path by
//! each case in turn — plain kernel TCP (gateways with coding off) with reno, cubic and bbr,
//! and TCP/NC (cubic by default) with a fixed coding window and with VBNC (Parejiya & Desai
//! §II-B) — each in its own session (fresh relay and gateways, same path seed), and each
//! case's per-frame latency, jitter, stalls and goodput (`tcpnc_stream::metrics`, the
//! simulator's). The processes are [`crate::frames`]'.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};
use tcpnc_settings::WindowPolicy;
use tcpnc_stream::{FrameRecord, StreamSummary, Trace, summarize};

use crate::child::{Child, Line};
use crate::error::{LabError, Result};
use crate::frames::{FrameSinkReport, FrameSourceReport};
use crate::measure::settings_json;
use crate::netstat;
use crate::session::{GatewayStats, Lab, Session};
use crate::settings::{
    CongestionControl, PathMode, PathSettings, PolicyOverrides, TransferSettings,
};
use crate::tcpinfo::TcpInfo;
use crate::traffic::Event;
use crate::transfer::{SINK_PORT, spawn_sink};

/// One scheme of a stream run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamCase {
    /// Plain kernel TCP, reno.
    PlainReno,
    /// Plain kernel TCP, cubic.
    PlainCubic,
    /// Plain kernel TCP, bbr.
    PlainBbr,
    /// TCP/NC, a fixed coding window W.
    NcFixed,
    /// TCP/NC, VBNC's variable window up to W.
    NcVbnc,
}

impl StreamCase {
    /// Every case, in the order they run.
    pub const ALL: [StreamCase; 5] = [
        StreamCase::PlainReno,
        StreamCase::PlainCubic,
        StreamCase::PlainBbr,
        StreamCase::NcFixed,
        StreamCase::NcVbnc,
    ];

    /// `plain-reno`, ..., `nc-fixed`, `nc-vbnc`.
    pub fn name(self) -> &'static str {
        match self {
            StreamCase::PlainReno => "plain-reno",
            StreamCase::PlainCubic => "plain-cubic",
            StreamCase::PlainBbr => "plain-bbr",
            StreamCase::NcFixed => "nc-fixed",
            StreamCase::NcVbnc => "nc-vbnc",
        }
    }

    /// Gateways' mode.
    pub fn mode(self) -> PathMode {
        match self.window_policy() {
            Some(_) => PathMode::Nc,
            None => PathMode::Plain,
        }
    }

    /// The nc cases' window policy.
    pub fn window_policy(self) -> Option<WindowPolicy> {
        match self {
            StreamCase::NcFixed => Some(WindowPolicy::Fixed),
            StreamCase::NcVbnc => Some(WindowPolicy::Vbnc),
            _ => None,
        }
    }

    /// The sender's congestion control (`nc_cc` for the nc cases).
    pub fn cc(self, nc_cc: CongestionControl) -> CongestionControl {
        match self {
            StreamCase::PlainReno => CongestionControl::Reno,
            StreamCase::PlainCubic => CongestionControl::Cubic,
            StreamCase::PlainBbr => CongestionControl::Bbr,
            _ => nc_cc,
        }
    }
}

impl FromStr for StreamCase {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        StreamCase::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = StreamCase::ALL.iter().map(|c| c.name()).collect();
                format!("unknown case '{s}' (expected one of {})", names.join(", "))
            })
    }
}

/// What every case of a run shares besides the path and the policies.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamSettings {
    /// The nc cases' congestion control.
    pub nc_cc: CongestionControl,
    /// Seed of the frames' contents.
    pub data_seed: u64,
    /// Playout deadline (a later frame is a stall).
    pub deadline: Duration,
    /// Bound on each case beyond the stream's length, seconds (and on each wait inside it).
    pub timeout_s: f64,
}

/// One case's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// `plain-cubic`, `nc-vbnc`, ...
    pub case: String,
    /// Every frame (not in the JSON; `--series` writes them).
    #[serde(skip)]
    pub records: Vec<FrameRecord>,
    /// Their summary.
    pub summary: StreamSummary,
    /// Every frame arrived with its bytes unchanged and nothing more arrived.
    pub integrity_ok: bool,
    /// Largest delay of a frame's write behind its schedule, ms (the source process was late
    /// or a write blocked on a full socket buffer).
    pub write_late_max_ms: f64,
    /// Bytes the sink read beyond the trace.
    pub extra_bytes: u64,
    /// The sender kernel's `TCP_INFO` at the end.
    pub tcp_info: TcpInfo,
    /// The client namespace's kernel TCP counters over the case (`netstat.rs`: window cuts,
    /// fast retransmits, timeouts), as `tcpnc lab run` reports them.
    pub kernel: BTreeMap<String, u64>,
    /// The whole setting set of this case (path, mode, cc, and for nc every policy).
    pub settings: Value,
    /// The gateways' final stats.
    pub gateways: Option<GatewayStats>,
    /// The relay's counters.
    pub link: Value,
}

/// Runs `case` on a fresh session: the trace in `trace_file` (the same `trace`), written by
/// the frame source in the client namespace to the frame sink in the server namespace.
pub fn run_case(
    lab: &Lab,
    case: StreamCase,
    path: &PathSettings,
    coding: &PolicyOverrides,
    (trace, trace_file): (&Trace, &Path),
    s: &StreamSettings,
) -> Result<CaseResult> {
    path.validate()?;
    let cc = case.cc(s.nc_cc);
    let t = TransferSettings {
        bytes: trace.bytes(),
        cc,
        seed: s.data_seed,
        flows: 1,
        timeout_s: s.timeout_s,
        // The stream's own per-frame series is written by the stream sink.
        series: false,
        warmup_bytes: 0,
    };
    t.validate()?;
    let coding = PolicyOverrides {
        window_policy: case.window_policy().or(coding.window_policy),
        ..*coding
    };
    let mode = case.mode();
    let mut session = Session::start(lab, mode, path, &coding)?;
    let bound = trace.duration().as_secs_f64() + s.timeout_s;
    let (src, snk, kernel) = run_processes(&mut session, trace_file, &t, bound)?;
    let stats = session.finish()?;
    let records = records(trace, &src, &snk);
    let write_late_max_ms = trace
        .frames
        .iter()
        .zip(&src.write_ns)
        .map(|(f, w)| w.saturating_sub(src.t0_ns + f.at.as_nanos() as u64) as f64 / 1e6)
        .fold(0.0, f64::max);
    let mut settings = settings_json(mode, path, &coding, &t);
    settings["tunnel"] = json!(lab.tunnel);
    settings["kernel_cc"] = json!(src.cc);
    Ok(CaseResult {
        case: case.name().to_string(),
        summary: summarize(&records, s.deadline),
        integrity_ok: records.iter().all(|r| r.intact) && snk.extra_bytes == 0,
        records,
        write_late_max_ms,
        extra_bytes: snk.extra_bytes,
        tcp_info: src.tcp_info,
        kernel,
        settings,
        gateways: stats.gateways,
        link: stats.link.unwrap_or(Value::Null),
    })
}

/// Every frame as the sink saw it, times from the stream's start.
fn records(trace: &Trace, src: &FrameSourceReport, snk: &FrameSinkReport) -> Vec<FrameRecord> {
    trace
        .frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let arrived = snk
                .arrival_ns
                .get(i)
                .map(|a| Duration::from_nanos(a.saturating_sub(src.t0_ns)));
            let mut r = FrameRecord::new(i, f.size, f.at, arrived);
            r.intact = arrived.is_some() && snk.sha256.get(i) == src.sha256.get(i);
            r
        })
        .collect()
}

/// Starts the sink and the source of one case and collects both reports within `bound_s`.
fn run_processes(
    session: &mut Session<'_>,
    trace_file: &Path,
    t: &TransferSettings,
    bound_s: f64,
) -> Result<(FrameSourceReport, FrameSinkReport, BTreeMap<String, u64>)> {
    let lab = session.lab();
    let addr = format!("{}:{SINK_PORT}", session.server_ip());
    let (trace, secs) = (trace_file.display().to_string(), t.timeout_s.to_string());
    let args = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<String>>();
    let sink_args = args(&[
        "lab",
        "stream-sink",
        "--listen",
        &addr,
        "--trace",
        &trace,
        "--timeout-s",
        &secs,
    ]);
    let mut sink = spawn_sink(lab, "stream sink", &sink_args)?;
    let (cc, seed) = (t.cc.name(), t.seed.to_string());
    let source_args = args(&[
        "lab",
        "stream-source",
        "--connect",
        &addr,
        "--trace",
        &trace,
        "--cc",
        cc,
        "--seed",
        &seed,
        "--timeout-s",
        &secs,
    ]);
    let cli = lab.topo.cli.clone();
    let kernel_before = netstat::snapshot(&cli)?;
    let mut source = lab.spawn("stream source", &cli, &source_args)?;
    let deadline = Instant::now() + Duration::from_secs_f64(bound_s);
    let Event::FrameSinkDone(snk) = wait_report(session, &mut sink, &mut source, deadline)? else {
        return Err(wrong_report("sink"));
    };
    let Event::FrameSourceDone(src) = wait_report(session, &mut source, &mut sink, deadline)?
    else {
        return Err(wrong_report("source"));
    };
    let kernel = netstat::delta(&kernel_before, &netstat::snapshot(&cli)?);
    Ok((src, snk, kernel))
}

fn wrong_report(who: &str) -> LabError {
    LabError::Report {
        who: who.into(),
        detail: "the other process's final report".into(),
    }
}

/// Waits for `child`'s final report (a `*_done` event) until `deadline`, failing early when it
/// or `other` fails or the session's relay or a gateway dies.
fn wait_report(
    session: &mut Session<'_>,
    child: &mut Child,
    other: &mut Child,
    deadline: Instant,
) -> Result<Event> {
    let who = child.name().to_string();
    loop {
        if Instant::now() >= deadline {
            return Err(LabError::Timeout {
                what: format!("the {who}'s report"),
                secs: 0.0,
                log: format!("{}{}", child.log_tail(), other.log_tail()),
            });
        }
        match child.poll_line(Duration::from_millis(100)) {
            Line::Text(l) => match serde_json::from_str::<Event>(&l) {
                Ok(ev @ (Event::FrameSinkDone(_) | Event::FrameSourceDone(_))) => return Ok(ev),
                Ok(Event::Error { message }) => {
                    return Err(LabError::Transfer(format!("{who}: {message}")));
                }
                Ok(_) => {}
                Err(e) => {
                    return Err(LabError::Report {
                        who,
                        detail: format!("{e}: {l}"),
                    });
                }
            },
            Line::Closed => {
                return Err(LabError::Child {
                    what: format!("the {who} exited without a report"),
                    log: child.log_tail(),
                });
            }
            Line::Nothing => {}
        }
        if other.exited().is_some_and(|s| !s.success()) {
            return Err(LabError::Child {
                what: format!("the {} failed", other.name()),
                log: other.log_tail(),
            });
        }
        session.check_running()?;
    }
}

/// The run as one JSON object: the trace, each case (summary, integrity, counters, its whole
/// setting set) and the stream flags.
pub fn stream_json(trace: &Trace, stream: Value, results: &[CaseResult], extra: Value) -> Value {
    let mut v = json!({
        "workload": "stream",
        "trace": trace.summary(),
        "stream": stream,
        "cases": results,
    });
    if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
        o.extend(e);
    }
    v
}

/// One line per case for a terminal.
pub fn stream_table(results: &[CaseResult]) -> String {
    let mut s = format!(
        "{:<12} {} {:>8}",
        "case",
        StreamSummary::table_header(),
        "late ms"
    );
    for r in results {
        s += &format!(
            "\n{:<12} {} {:>8.1}",
            r.case,
            r.summary.table_row(),
            r.write_late_max_ms
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_parse_and_map() {
        for c in StreamCase::ALL {
            assert_eq!(c.name().parse::<StreamCase>(), Ok(c));
        }
        assert!("nc".parse::<StreamCase>().unwrap_err().contains("nc-vbnc"));
        assert_eq!(StreamCase::NcVbnc.mode(), PathMode::Nc);
        assert_eq!(StreamCase::PlainBbr.mode(), PathMode::Plain);
        let bbr = CongestionControl::Bbr;
        assert_eq!(StreamCase::NcFixed.cc(bbr), bbr);
        assert_eq!(StreamCase::PlainReno.cc(bbr), CongestionControl::Reno);
    }

    #[test]
    fn records_pair_frames_by_index() {
        let trace = Trace::parse("0,10\n0.5,20\n1.0,30\n").unwrap();
        let src = FrameSourceReport {
            t0_ns: 1_000,
            write_ns: vec![1_000, 500_001_000, 1_000_001_000],
            sha256: vec!["a".into(), "b".into(), "c".into()],
            cc: "cubic".into(),
            closed_ns: 0,
            tcp_info: TcpInfo::default(),
        };
        let snk = FrameSinkReport {
            arrival_ns: vec![20_001_000, 600_001_000],
            sha256: vec!["a".into(), "x".into()],
            bytes: 30,
            extra_bytes: 0,
        };
        let r = records(&trace, &src, &snk);
        assert!((r[0].latency_ms().unwrap() - 20.0).abs() < 1e-9);
        assert!((r[1].latency_ms().unwrap() - 100.0).abs() < 1e-9);
        assert_eq!(
            r.iter().map(|f| f.intact).collect::<Vec<_>>(),
            [true, false, false]
        );
        assert_eq!(r[2].arrived_s, None);
    }
}
