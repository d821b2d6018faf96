//! A `perf` profile of one process over a transfer (`tcpnc lab speed --profile DIR`):
//! `perf record -g -p PID` from just before the source starts until the last byte (stopped
//! with SIGINT, as Ctrl-C), then `perf report --stdio --no-children` into a text file beside
//! the data. Whatever goes wrong (perf not installed, not permitted, too slow) becomes
//! `{"skipped": why}`: a profile never fails the run. Both perf processes are [`Child`]ren, so
//! they are registered for signal-time cleanup and stopped when dropped.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::child::{Child, Line};

/// How long `perf record` gets to enable its events.
const START: Duration = Duration::from_secs(5);
/// After SIGINT, how long `perf record` gets to write its data and exit.
const STOP: Duration = Duration::from_secs(20);
/// Bound on `perf report`.
const REPORT: Duration = Duration::from_secs(120);
/// Entries of the report kept in the JSON (`top`).
pub const TOP: usize = 10;

/// `{"skipped": why}`: what a case reports instead of a profile.
pub fn skipped(why: impl std::fmt::Display) -> Value {
    json!({ "skipped": why.to_string() })
}

/// A file-name-safe form of a case label: lower case; ASCII letters, digits and dots kept;
/// every other run of characters one `-` (`nc W12 R1.0 ca-off` gives `nc-w12-r1.0-ca-off`).
pub fn slug(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_end_matches('-');
    if trimmed.is_empty() {
        "case".into()
    } else {
        trimmed.to_string()
    }
}

/// Where one case's profile goes: `DIR/<slug>.perf.data` and `DIR/<slug>.perf.txt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileFiles {
    /// `perf record`'s output.
    pub data: PathBuf,
    /// `perf report --stdio --no-children`'s output.
    pub report: PathBuf,
}

impl ProfileFiles {
    /// The files of the case labelled `label` in `dir`.
    pub fn new(dir: &Path, label: &str) -> ProfileFiles {
        let s = slug(label);
        ProfileFiles {
            data: dir.join(format!("{s}.perf.data")),
            report: dir.join(format!("{s}.perf.txt")),
        }
    }
}

/// A running `perf record`.
pub struct Profiler {
    perf: PathBuf,
    child: Child,
    files: ProfileFiles,
    log: PathBuf,
    /// Kept open while perf runs (it polls the control FIFO; it needs no hang-up there).
    _control: Control,
}

/// A finished `perf record`, ready for `perf report`.
pub struct Recording {
    perf: PathBuf,
    files: ProfileFiles,
}

impl Profiler {
    /// Starts `perf record -g -p PID -o <data>` (`perf`: the binary, `None` when it is not
    /// installed), its stderr to `log`, and returns once it samples: the events start
    /// disabled and are enabled through perf's control FIFO (`--control`, beside `log`), which
    /// acknowledges when they are on (the data file alone appears some 0.1 s before perf
    /// samples). Earlier files of the same case are removed first (`perf record` would keep
    /// the old data as `.old`). `Err(why)` when perf cannot profile.
    pub fn start(
        perf: Option<&Path>,
        pid: u32,
        files: ProfileFiles,
        log: &Path,
    ) -> std::result::Result<Profiler, String> {
        let perf = perf.ok_or("perf is not installed")?.to_path_buf();
        for f in [&files.data, &files.report] {
            let _ = std::fs::remove_file(f);
        }
        let (ctl, ack) = (log.with_extension("ctl"), log.with_extension("ack"));
        let mut control = Control::new(&ctl, &ack)?;
        let control_arg = format!("--control=fifo:{},{}", ctl.display(), ack.display());
        let args = [
            "record",
            "-g",
            "--delay=-1",
            &control_arg,
            "-p",
            &pid.to_string(),
        ]
        .map(String::from)
        .into_iter()
        .chain(["-o".into(), files.data.display().to_string()])
        .collect::<Vec<_>>();
        let mut child = Child::spawn("perf record", None, &perf, &args, log)
            .map_err(|e| format!("perf record did not start: {e}"))?;
        control.enable(&mut child, log)?;
        Ok(Profiler {
            perf,
            child,
            files,
            log: log.to_path_buf(),
            _control: control,
        })
    }

    /// Stops `perf record` with SIGINT and waits until it has written its data.
    pub fn stop(mut self) -> std::result::Result<Recording, String> {
        let status = self.child.interrupt(STOP);
        if !ended_by_interrupt(status) {
            let how = status.map_or("no status".into(), |s| s.to_string());
            return Err(format!(
                "perf record ended with {how} after SIGINT: {}",
                last_line(&self.log)
            ));
        }
        Ok(Recording {
            perf: self.perf,
            files: self.files,
        })
    }
}

/// `perf record`'s control FIFO (written: `enable`) and acknowledgement FIFO (read: `ack`).
struct Control {
    ctl: std::fs::File,
    ack: std::fs::File,
}

impl Control {
    /// Makes both FIFOs and opens our ends without blocking: the control one read-write (so
    /// a command waits in it until perf reads), the acknowledgement one for reading.
    fn new(ctl: &Path, ack: &Path) -> std::result::Result<Control, String> {
        use std::os::unix::fs::OpenOptionsExt;
        for f in [ctl, ack] {
            let _ = std::fs::remove_file(f);
            mkfifo(f)?;
        }
        let open = |f: &Path, write: bool| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(write)
                .custom_flags(libc::O_NONBLOCK)
                .open(f)
                .map_err(|e| format!("{}: {e}", f.display()))
        };
        Ok(Control {
            ctl: open(ctl, true)?,
            ack: open(ack, false)?,
        })
    }

    /// Asks perf to enable its events and waits (at most [`START`]) for its `ack`, failing
    /// if `child` exits first.
    fn enable(&mut self, child: &mut Child, log: &Path) -> std::result::Result<(), String> {
        use std::io::Read;
        self.ctl
            .write_all(b"enable\n")
            .map_err(|e| format!("perf record's control FIFO: {e}"))?;
        let deadline = Instant::now() + START;
        let mut got = Vec::new();
        loop {
            let mut buf = [0u8; 64];
            // Nothing yet is `WouldBlock`, or 0 before perf opens its end.
            if let Ok(n) = self.ack.read(&mut buf) {
                got.extend_from_slice(&buf[..n]);
            }
            if got.starts_with(b"ack") {
                return Ok(());
            }
            if let Some(s) = child.exited() {
                return Err(format!("perf record exited ({s}): {}", last_line(log)));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "perf record did not enable its events within {} s: {}",
                    START.as_secs(),
                    last_line(log)
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// mkfifo(3) with mode 0600.
fn mkfifo(path: &Path) -> std::result::Result<(), String> {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600))
        .map_err(|e| format!("mkfifo {}: {e}", path.display()))
}

/// Whether `perf record` ended as it does after SIGINT: it re-raises the signal, or exits 0.
fn ended_by_interrupt(status: Option<ExitStatus>) -> bool {
    status.is_some_and(|s| s.success() || s.signal() == Some(libc::SIGINT))
}

impl Recording {
    /// Writes `perf report --stdio --no-children -i <data>` to the report file, its stderr to
    /// `log`: `{"data", "report", "samples", "top": [..]}` (the [`TOP`] costliest symbols), or
    /// `{"skipped": why}`.
    pub fn report(self, log: &Path) -> Value {
        match self.write_report(log) {
            Ok(text) => json!({
                "data": self.files.data,
                "report": self.files.report,
                "samples": samples(&text),
                "top": top_entries(&text, TOP),
            }),
            Err(why) => skipped(why),
        }
    }

    fn write_report(&self, log: &Path) -> std::result::Result<String, String> {
        let data = self.files.data.display().to_string();
        let args = ["report", "--stdio", "--no-children", "-i", &data].map(String::from);
        let mut child = Child::spawn("perf report", None, &self.perf, &args, log)
            .map_err(|e| format!("perf report did not start: {e}"))?;
        let deadline = Instant::now() + REPORT;
        let mut text = String::new();
        loop {
            match child.poll_line(Duration::from_millis(100)) {
                Line::Text(l) => {
                    text.push_str(&l);
                    text.push('\n');
                }
                Line::Closed => break,
                Line::Nothing => {}
            }
            if Instant::now() >= deadline {
                return Err(format!("perf report took over {} s", REPORT.as_secs()));
            }
        }
        let status = child
            .wait(deadline + Duration::from_secs(5))
            .map_err(|e| format!("perf report: {e}"))?;
        if !status.success() {
            return Err(format!("perf report {status}: {}", last_line(log)));
        }
        let file = &self.files.report;
        std::fs::File::create(file)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        Ok(text)
    }
}

/// One entry of a `perf report --stdio` listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileEntry {
    /// Share of the samples, percent.
    pub percent: f64,
    /// Thread name.
    pub command: String,
    /// Binary or library (`[kernel.kallsyms]` for the kernel).
    pub object: String,
    /// Function.
    pub symbol: String,
    /// A kernel symbol (`[k]`) rather than a user-space one (`[.]`).
    pub kernel: bool,
}

/// The first `n` entries of a `perf report --stdio` text: lines `  12.34%  comm  dso  [.] sym`
/// (call-chain lines and `#` comments are not entries).
pub fn top_entries(report: &str, n: usize) -> Vec<ProfileEntry> {
    report.lines().filter_map(entry).take(n).collect()
}

fn entry(line: &str) -> Option<ProfileEntry> {
    let line = line.trim_start();
    let (percent, rest) = line.split_once('%')?;
    let percent: f64 = percent.parse().ok()?;
    let (head, kernel, symbol) = match (rest.find(" [.] "), rest.find(" [k] ")) {
        (Some(i), _) => (&rest[..i], false, &rest[i + 5..]),
        (None, Some(i)) => (&rest[..i], true, &rest[i + 5..]),
        (None, None) => return None,
    };
    let mut words: Vec<&str> = head.split_whitespace().collect();
    let object = words.pop()?.to_string();
    Some(ProfileEntry {
        percent,
        command: words.join(" "),
        object,
        symbol: symbol.trim().to_string(),
        kernel,
    })
}

/// The text after `# Samples: ` (`4K of event 'cpu-clock:ppp'`, spaces squeezed), if any.
fn samples(report: &str) -> Option<String> {
    report
        .lines()
        .find_map(|l| l.strip_prefix("# Samples: "))
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The last non-empty line of `log` (for a one-line reason), or `no output`.
fn last_line(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no output")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_name_safe() {
        assert_eq!(slug("nc W12 R1.0"), "nc-w12-r1.0");
        assert_eq!(slug("nc W12 R1.0 ca-off"), "nc-w12-r1.0-ca-off");
        assert_eq!(slug("off"), "off");
        assert_eq!(slug("  a/b\\c  "), "a-b-c");
        assert_eq!(slug("/"), "case");
        let f = ProfileFiles::new(Path::new("/tmp/p"), "nc W8 R1.1");
        assert_eq!(f.data, Path::new("/tmp/p/nc-w8-r1.1.perf.data"));
        assert_eq!(f.report, Path::new("/tmp/p/nc-w8-r1.1.perf.txt"));
    }

    const REPORT_TEXT: &str = "\
# Samples: 4K  of event 'cpu-clock:ppp'
#
# Overhead  Command  Shared Object      Symbol
# ........  .......  .................  ......
#
    24.18%  tcpnc    [kernel.kallsyms]  [k] do_syscall_64
            |
            ---do_syscall_64
               entry_SYSCALL_64_after_hwframe

    16.65%  gw tun   tcpnc              [.] tcpnc_field::x86::mul_acc
            |
            ---tcpnc_field::x86::mul_acc

     0.01%  tcpnc    libc.so.6          [.] __memmove_avx_unaligned_erms
";

    #[test]
    fn report_entries_skip_call_chains() {
        let top = top_entries(REPORT_TEXT, 2);
        assert_eq!(top.len(), 2);
        assert_eq!(top[0].percent, 24.18);
        assert_eq!(top[0].object, "[kernel.kallsyms]");
        assert_eq!(top[0].symbol, "do_syscall_64");
        assert!(top[0].kernel);
        assert_eq!(top[1].command, "gw tun");
        assert_eq!(top[1].symbol, "tcpnc_field::x86::mul_acc");
        assert!(!top[1].kernel);
        assert_eq!(top_entries(REPORT_TEXT, 10).len(), 3);
        assert_eq!(
            samples(REPORT_TEXT).as_deref(),
            Some("4K of event 'cpu-clock:ppp'")
        );
        assert!(top_entries("# only comments\n", 10).is_empty());
    }

    /// Without perf the case says so and nothing is spawned.
    #[test]
    fn missing_perf_is_a_skip() {
        let files = ProfileFiles::new(Path::new("/nonexistent"), "nc W12 R1.0");
        let why = Profiler::start(None, 1, files, Path::new("/nonexistent/log"))
            .err()
            .unwrap_or_default();
        assert_eq!(why, "perf is not installed");
        assert_eq!(skipped(&why), json!({"skipped": "perf is not installed"}));
    }

    #[test]
    fn interrupt_endings() {
        assert!(ended_by_interrupt(Some(ExitStatus::from_raw(0))));
        assert!(ended_by_interrupt(Some(ExitStatus::from_raw(libc::SIGINT))));
        assert!(!ended_by_interrupt(Some(ExitStatus::from_raw(
            libc::SIGKILL
        ))));
        assert!(!ended_by_interrupt(Some(ExitStatus::from_raw(1 << 8))));
        assert!(!ended_by_interrupt(None));
    }
}
