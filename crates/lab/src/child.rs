//! Child processes started inside a namespace (`ip netns exec NS PROGRAM ...`): stdout read
//! line by line on a thread, stderr kept in a log file, stopped (SIGTERM, then SIGKILL) and
//! reaped on drop, registered for signal-time cleanup while alive.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::error::{LabError, Result};
use crate::guard;

/// How long a stopped child gets to exit after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// What [`Child::poll_line`] saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// One line of stdout.
    Text(String),
    /// Stdout is closed (the child exited or closed it).
    Closed,
    /// Nothing within the wait.
    Nothing,
}

/// A running child process.
pub struct Child {
    name: String,
    child: std::process::Child,
    lines: Receiver<String>,
    log: PathBuf,
    status: Option<ExitStatus>,
}

impl Child {
    /// Starts `program args` inside namespace `ns` (or in the current one with `None`);
    /// stderr goes to `log`.
    pub fn spawn(
        name: &str,
        ns: Option<&str>,
        program: &Path,
        args: &[String],
        log: &Path,
    ) -> Result<Child> {
        let mut cmd = match ns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(program);
                c
            }
            None => Command::new(program),
        };
        cmd.args(args);
        let err_file = std::fs::File::create(log).map_err(|e| LabError::file(log, e))?;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(err_file));
        let printable = format!("{} {}", program.display(), args.join(" "));
        let mut child = cmd.spawn().map_err(|e| LabError::Command {
            cmd: printable,
            detail: e.to_string(),
        })?;
        guard::register_pid(child.id() as i32);
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Child {
            name: name.to_string(),
            child,
            lines,
            log: log.to_path_buf(),
            status: None,
        })
    }

    /// The child's display name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The next stdout line, waiting at most `wait`.
    pub fn poll_line(&mut self, wait: Duration) -> Line {
        match self.lines.recv_timeout(wait) {
            Ok(l) => Line::Text(l),
            Err(RecvTimeoutError::Disconnected) => Line::Closed,
            Err(RecvTimeoutError::Timeout) => Line::Nothing,
        }
    }

    /// Whether the child has exited (reaps it).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.status.is_none()
            && let Ok(Some(s)) = self.child.try_wait()
        {
            guard::unregister_pid(self.child.id() as i32);
            self.status = Some(s);
        }
        self.status
    }

    /// Fails with the log tail if the child has exited.
    pub fn check_running(&mut self) -> Result<()> {
        match self.exited() {
            None => Ok(()),
            Some(s) => Err(LabError::Child {
                what: format!("{} exited early ({s})", self.name),
                log: self.log_tail(),
            }),
        }
    }

    /// Waits for the child to exit on its own, at most until `deadline` (then kills it).
    pub fn wait(&mut self, deadline: Instant) -> Result<ExitStatus> {
        let secs = deadline
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
        while Instant::now() < deadline {
            if let Some(s) = self.exited() {
                return Ok(s);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill();
        Err(LabError::Timeout {
            what: format!("{} to exit", self.name),
            secs,
            log: self.log_tail(),
        })
    }

    /// Sends `sig` to the child (our own, unreaped: its pid is still ours).
    fn signal(&self, sig: Signal) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = kill(Pid::from_raw(pid), sig);
        }
    }

    /// SIGTERM, then SIGKILL after a grace period; reaps. Idempotent.
    pub fn stop(&mut self) -> Option<ExitStatus> {
        if self.exited().is_none() {
            self.signal(Signal::SIGTERM);
            let deadline = Instant::now() + STOP_GRACE;
            while self.exited().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        if self.exited().is_none() {
            self.kill();
        }
        self.status
    }

    /// SIGINT (as Ctrl-C: `perf record` writes its data and exits), then waits up to `grace`
    /// for the child to exit; [`Child::stop`] after that. Reaps. Idempotent.
    pub fn interrupt(&mut self, grace: Duration) -> Option<ExitStatus> {
        if self.exited().is_none() {
            self.signal(Signal::SIGINT);
            let deadline = Instant::now() + grace;
            while self.exited().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        self.stop()
    }

    /// SIGKILL (no chance to clean up, as `kill -9`), then reaps.
    pub fn kill9(&mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        if let Ok(s) = self.child.wait() {
            self.status = Some(s);
        }
        guard::unregister_pid(self.child.id() as i32);
    }

    /// The process id (`ip netns exec` execs the program, so it is the program's).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last lines of the child's stderr log, prefixed by a newline (empty if none).
    pub fn log_tail(&self) -> String {
        log_tail(&self.log, &self.name)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The first file named `name` in a directory of `PATH` (an installed program), if any.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The last 15 lines of `log`, formatted for an error message.
pub fn log_tail(log: &Path, name: &str) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return String::new();
    }
    let tail = &lines[lines.len().saturating_sub(15)..];
    format!(
        "\n--- last lines of {name}'s stderr ---\n{}",
        tail.join("\n")
    )
}
