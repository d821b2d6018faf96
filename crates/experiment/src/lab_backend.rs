//! The lab backend: kernel TCP through the lab's namespaces, gateways and relay
//! (`tcpnc-lab`), one topology for the whole plan, created at the first run.

use std::time::Instant;

use tcpnc_lab::settings::{PathSettings, PolicyOverrides, TransferSettings};
use tcpnc_lab::{Lab, guard, measure, progress};

use crate::backend::{Backend, RunRecord};
use crate::error::{ExperimentError, Result};
use crate::params::Params;

/// Kernel TCP through the lab. Fixed-size transfers only.
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

impl Backend for LabBackend {
    fn name(&self) -> &'static str {
        "lab"
    }

    fn check(&self, p: &Params) -> std::result::Result<(), String> {
        if !p.cc.in_kernel() {
            return Err(format!("cc = {}: the kernel has reno, cubic and bbr", p.cc));
        }
        if p.duration_s.is_some() {
            return Err("duration_s: the lab measures fixed-size transfers; set bytes".into());
        }
        Ok(())
    }

    fn run(&mut self, p: &Params, seed: u64, _series: bool) -> Result<RunRecord> {
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
            }),
            Err(e) if guard::interrupted() => Err(unavailable(&e)),
            // A transfer that times out or whose processes fail is recorded (not counted)
            // and tried again on resume, like the paper's neglected iterations.
            Err(e) => Ok(RunRecord {
                outcome: format!("error: {e}"),
                counted: false,
                goodput_mbit: f64::NAN,
                completion_s: f64::NAN,
                bytes_delivered: 0,
                integrity_ok: false,
                retransmissions: 0,
                wall_s: start.elapsed().as_secs_f64(),
                jain_index: None,
                dup_acks: None,
                fast_retransmits: None,
                flight_mean_bytes: None,
                decoding_mean_pps: None,
                decoding_sd_pps: None,
                series_csv: None,
            }),
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
}
