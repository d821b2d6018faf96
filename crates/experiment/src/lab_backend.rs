//! The lab backend: kernel TCP through the lab's namespaces, gateways and relay
//! (`tcpnc-lab`), one topology for the whole plan, created at the first run. A stream point is
//! one case of `tcpnc lab stream` (`tcpnc_lab::stream::run_case`).

use std::time::Instant;

use tcpnc_lab::settings::{PathSettings, PolicyOverrides, TransferSettings};
use tcpnc_lab::stream::{StreamCase, StreamSettings, run_case};
use tcpnc_lab::{Lab, guard, measure, progress};
use tcpnc_stream::LAB_DURATION_S;

use crate::backend::{Backend, RunRecord};
use crate::error::{ExperimentError, Result};
use crate::params::{CongestionControl as Cc, Params, PathMode, WindowPolicy};

/// Kernel TCP through the lab: fixed-size transfers and streams.
#[derive(Default)]
pub struct LabBackend {
    lab: Option<Lab>,
}

fn unavailable(e: &dyn std::fmt::Display) -> ExperimentError {
    ExperimentError::Backend {
        backend: "lab".into(),
        detail: format!("lab backend unavailable: {e}"),
    }
}

impl LabBackend {
    /// The lab, created (and root checked) at the first run.
    fn lab(&mut self) -> Result<&Lab> {
        if self.lab.is_none() {
            guard::require_root().map_err(|e| unavailable(&e))?;
            let exe = tcpnc_lab::tcpnc_exe().map_err(|e| unavailable(&e))?;
            self.lab = Some(Lab::new(exe).map_err(|e| unavailable(&e))?);
        }
        self.lab.as_ref().ok_or_else(|| unavailable(&"no lab"))
    }
}

/// The settings of one lab run of `p` with `seed`: the path, the gateways' policies (the
/// point's whole set, so the gateways run exactly what the plan records) and the transfer.
pub fn lab_settings(p: &Params, seed: u64) -> (PathSettings, PolicyOverrides, TransferSettings) {
    let path = PathSettings::new(p.path(), seed);
    let transfer = TransferSettings {
        bytes: p.bytes,
        cc: p.cc,
        seed,
        flows: p.flows,
        timeout_s: p.timeout_s,
        series: false,
        warmup_bytes: p.warmup_bytes,
    };
    (path, PolicyOverrides::from(p.policies()), transfer)
}

/// The `tcpnc lab stream` case of a stream point: plain with its cc, or nc with its window
/// policy (and its cc as `--nc-cc`).
pub fn stream_case(p: &Params) -> std::result::Result<StreamCase, String> {
    match (p.mode, p.cc, p.policies().window_policy) {
        (PathMode::Nc, _, WindowPolicy::Fixed) => Ok(StreamCase::NcFixed),
        (PathMode::Nc, _, WindowPolicy::Vbnc) => Ok(StreamCase::NcVbnc),
        (_, Cc::Reno, _) => Ok(StreamCase::PlainReno),
        (_, Cc::Cubic, _) => Ok(StreamCase::PlainCubic),
        (_, Cc::Bbr, _) => Ok(StreamCase::PlainBbr),
        (_, cc, _) => Err(format!("cc = {cc}: the kernel has reno, cubic and bbr")),
    }
}

impl Backend for LabBackend {
    fn name(&self) -> &'static str {
        "lab"
    }

    fn check(&self, p: &Params) -> std::result::Result<(), String> {
        if !p.cc.in_kernel() {
            return Err(format!("cc = {}: the kernel has reno, cubic and bbr", p.cc));
        }
        if p.is_stream() {
            return stream_case(p).map(|_| ());
        }
        if p.duration_s.is_some() {
            return Err("duration_s: the lab measures fixed-size transfers; set bytes".into());
        }
        Ok(())
    }

    fn run(&mut self, p: &Params, seed: u64, keep: bool) -> Result<RunRecord> {
        if p.is_stream() {
            return self.run_stream(p, seed, keep);
        }
        let lab = self.lab()?;
        let (path, coding, t) = lab_settings(p, seed);
        let start = Instant::now();
        let bar = progress::bar(false);
        match measure::measure(lab, p.mode, &path, &coding, &t, false, &bar) {
            Ok(m) => Ok(RunRecord {
                outcome: "completed".into(),
                counted: m.transfer.integrity_ok,
                goodput_mbit: m.transfer.goodput_mbit,
                completion_s: m.transfer.completion_s,
                bytes_delivered: m.transfer.bytes_received,
                integrity_ok: m.transfer.integrity_ok,
                retransmissions: u64::from(m.transfer.retransmits),
                wall_s: start.elapsed().as_secs_f64(),
                jain_index: m.transfer.jain_index,
                dup_acks: None,
                fast_retransmits: m.transfer.kernel.get("TCPFastRetrans").copied(),
                flight_mean_bytes: None,
                decoding_mean_pps: None,
                decoding_sd_pps: None,
                series_csv: None,
                stream: None,
                frames: None,
            }),
            Err(e) if guard::interrupted() => Err(unavailable(&e)),
            // A transfer that times out or whose processes fail is recorded (not counted)
            // and tried again on resume, like the paper's neglected iterations.
            Err(e) => Ok(RunRecord::failed(
                format!("error: {e}"),
                start.elapsed().as_secs_f64(),
            )),
        }
    }
}

impl LabBackend {
    /// A stream point: its case of `tcpnc lab stream` on a fresh session, the trace for
    /// `trace_seed` or `seed` (also the frames' contents, as `tcpnc lab stream --seed`), the
    /// path seeded by `seed`, `tcpnc lab stream`'s 60 s unless `duration_s`.
    fn run_stream(&mut self, p: &Params, seed: u64, keep: bool) -> Result<RunRecord> {
        let bad = |detail: String| ExperimentError::Backend {
            backend: "lab".into(),
            detail,
        };
        let case = stream_case(p).map_err(bad)?;
        let trace = p
            .trace(seed, LAB_DURATION_S)
            .map_err(|e| bad(e.to_string()))?;
        let settings = StreamSettings {
            nc_cc: p.cc,
            data_seed: p.trace_seed.unwrap_or(seed),
            deadline: p
                .stream_spec()
                .deadline()
                .ok_or_else(|| bad("deadline_ms must be >= 0".into()))?,
            timeout_s: p.timeout_s,
        };
        let lab = self.lab()?;
        let file = lab.file("trace", "csv");
        std::fs::write(&file, trace.to_text()).map_err(ExperimentError::file(&file))?;
        let path = PathSettings::new(p.path(), seed);
        let coding = PolicyOverrides::from(p.policies());
        let start = Instant::now();
        match run_case(lab, case, &path, &coding, (&trace, &file), &settings) {
            Ok(r) => {
                let delivered = r.records.iter().filter(|f| f.arrived_s.is_some());
                Ok(RunRecord {
                    integrity_ok: r.integrity_ok,
                    completion_s: delivered
                        .clone()
                        .filter_map(|f| f.arrived_s)
                        .fold(0.0, f64::max),
                    bytes_delivered: delivered.map(|f| u64::from(f.size)).sum(),
                    retransmissions: u64::from(r.tcp_info.total_retrans),
                    wall_s: start.elapsed().as_secs_f64(),
                    ..RunRecord::stream("completed", true, r.summary, &r.records, keep)
                })
            }
            Err(e) if guard::interrupted() => Err(unavailable(&e)),
            Err(e) => Ok(RunRecord::failed(
                format!("error: {e}"),
                start.elapsed().as_secs_f64(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{CongestionControl, PathOverrides};

    #[test]
    fn lab_runs_record_the_whole_policy_set() {
        let p = Params {
            path: PathOverrides {
                loss: Some(0.1),
                ..PathOverrides::default()
            },
            cc: CongestionControl::Bbr,
            ..Params::default()
        };
        let (path, coding, t) = lab_settings(&p, 9);
        assert_eq!(path.seed, 9);
        assert_eq!(
            path.spec,
            p.path(),
            "the plan's path, loss position included"
        );
        assert_eq!(t.cc, CongestionControl::Bbr);
        assert_eq!(tcpnc_proto::Policies::product().with(&coding), p.policies());
        assert!(LabBackend::default().check(&p).is_ok());
        let none = Params {
            cc: CongestionControl::None,
            ..p
        };
        assert!(LabBackend::default().check(&none).is_err());
    }

    /// A stream point is the `tcpnc lab stream` case of its scheme, with a length.
    #[test]
    fn stream_points_are_lab_stream_cases() {
        let stream = |mode, cc, window_policy| Params {
            mode,
            cc,
            workload: crate::params::Workload::Stream,
            duration_s: Some(6.0),
            coding: crate::params::PolicyOverrides {
                window_policy,
                ..Default::default()
            },
            ..Params::default()
        };
        let case = |p: &Params| stream_case(p).map(StreamCase::name);
        let bbr = stream(PathMode::Plain, Cc::Bbr, None);
        assert_eq!(case(&bbr), Ok("plain-bbr"));
        assert!(
            LabBackend::default().check(&bbr).is_ok(),
            "duration_s sets a stream's length"
        );
        let vbnc = stream(PathMode::Nc, Cc::Cubic, Some(WindowPolicy::Vbnc));
        assert_eq!(case(&vbnc), Ok("nc-vbnc"));
        assert_eq!(case(&stream(PathMode::Nc, Cc::Reno, None)), Ok("nc-fixed"));
        let none = stream(PathMode::Plain, Cc::None, None);
        assert!(LabBackend::default().check(&none).is_err());
        let bulk = Params {
            workload: crate::params::Workload::Bulk,
            ..bbr
        };
        assert!(
            LabBackend::default().check(&bulk).is_err(),
            "a bulk transfer has no length"
        );
    }
}
