//! Cleanup guarantees: a process-wide registry of what the lab created (child processes,
//! namespaces, scratch directories), emptied by RAII guards on the normal path and by a
//! SIGINT/SIGTERM/SIGHUP handler on interruption; plus the root check and `lab clean`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use crate::error::{LabError, Result};
use crate::netns;

/// Prefix of every namespace the lab creates: `tcpnc-<pid>-<n>-<role>`.
pub const NS_PREFIX: &str = "tcpnc-";

#[derive(Default)]
struct Registry {
    pids: Vec<i32>,
    namespaces: Vec<String>,
    dirs: Vec<PathBuf>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    pids: Vec::new(),
    namespaces: Vec::new(),
    dirs: Vec::new(),
});
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The signal that interrupted the lab (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// The handler's cleanup is done.
static CLEANED: AtomicBool = AtomicBool::new(false);
/// How long [`exit_if_interrupted`] waits for the handler's cleanup at most.
const CLEANUP_GRACE: Duration = Duration::from_secs(60);
static HANDLER: Once = Once::new();

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Fails with [`LabError::NotRoot`] unless the effective user is root.
pub fn require_root() -> Result<()> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(LabError::NotRoot);
    }
    Ok(())
}

/// Whether a signal asked the lab to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Installs (once) the handler thread: on SIGINT, SIGTERM or SIGHUP it kills the registered
/// children, deletes the registered namespaces and directories, and exits with 128+signal.
pub fn install_signal_handler() -> Result<()> {
    let mut result = Ok(());
    HANDLER.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        match signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
            Ok(mut signals) => {
                std::thread::spawn(move || {
                    if let Some(sig) = signals.forever().next() {
                        SIGNAL.store(sig, Ordering::SeqCst);
                        INTERRUPTED.store(true, Ordering::SeqCst);
                        // Clean up first, and say so without `eprintln!`, which panics (and
                        // would leave everything behind) when stderr is a closed pipe.
                        cleanup_all();
                        CLEANED.store(true, Ordering::SeqCst);
                        use std::io::Write;
                        let _ = writeln!(std::io::stderr(), "tcpnc lab: signal {sig}, cleaned up");
                        std::process::exit(128 + sig);
                    }
                });
            }
            Err(e) => {
                result = Err(LabError::Os {
                    what: "installing the signal handler".into(),
                    source: e,
                })
            }
        }
    });
    result
}

/// When a signal interrupted the lab, waits for the handler's cleanup and exits with
/// 128+signal; otherwise returns. The handler kills the lab's children first, so the main
/// thread's work may fail and reach its own exit while the namespaces are still being
/// deleted: it must neither exit first nor with its own code. Bounded by [`CLEANUP_GRACE`].
pub fn exit_if_interrupted() {
    let sig = SIGNAL.load(Ordering::SeqCst);
    if sig == 0 {
        return;
    }
    let start = Instant::now();
    while !CLEANED.load(Ordering::SeqCst) && start.elapsed() < CLEANUP_GRACE {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::process::exit(128 + sig);
}

/// Kills every registered child, deletes every registered namespace and directory.
pub fn cleanup_all() {
    let reg = std::mem::take(&mut *registry());
    for pid in &reg.pids {
        kill_pid(*pid, libc::SIGKILL);
    }
    for ns in &reg.namespaces {
        if let Err(e) = netns::delete_netns(ns) {
            eprintln!("tcpnc lab: cleanup of {ns}: {e}");
        }
    }
    for dir in &reg.dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn kill_pid(pid: i32, sig: i32) {
    // SAFETY: kill(2) of a child this process spawned.
    unsafe { libc::kill(pid, sig) };
}

/// Registers a child pid for signal-time cleanup.
pub fn register_pid(pid: i32) {
    registry().pids.push(pid);
}

/// Forgets a child pid (it was reaped).
pub fn unregister_pid(pid: i32) {
    registry().pids.retain(|p| *p != pid);
}

/// Registers a namespace (before creating it).
pub fn register_netns(ns: &str) {
    registry().namespaces.push(ns.to_string());
}

/// Forgets a namespace (after deleting it).
pub fn unregister_netns(ns: &str) {
    registry().namespaces.retain(|n| n != ns);
}

/// A scratch directory removed on drop (and on a signal).
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// Creates `$TMPDIR/tcpnc-lab-<id>`, fresh.
    pub fn new(id: &str) -> Result<Self> {
        let path = std::env::temp_dir().join(format!("tcpnc-lab-{id}"));
        registry().dirs.push(path.clone());
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|e| LabError::file(&path, e))?;
        Ok(ScratchDir { path })
    }

    /// The directory.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
        registry().dirs.retain(|d| d != &self.path);
    }
}

/// What `lab clean` did.
#[derive(Debug, Default, serde::Serialize)]
pub struct CleanReport {
    /// Namespaces deleted.
    pub deleted: Vec<String>,
    /// Namespaces kept because their owning lab process still runs.
    pub kept_live: Vec<String>,
    /// Scratch directories removed.
    pub deleted_dirs: Vec<PathBuf>,
}

/// The pid in `<pid>-<n>...`, if it names a live process other than this one.
fn owner_alive(rest: &str) -> bool {
    let me = std::process::id() as i32;
    let owner = rest.split('-').next().and_then(|p| p.parse::<i32>().ok());
    owner.is_some_and(|p| p != me && netns::pid_alive(p))
}

/// Deletes leftover `tcpnc-<pid>-…` namespaces (killing the processes inside first) and
/// `tcpnc-lab-<pid>-…` scratch directories whose owning process is gone (all with `force`).
pub fn clean(force: bool) -> Result<CleanReport> {
    require_root()?;
    let mut report = CleanReport::default();
    for ns in netns::list_netns() {
        let Some(rest) = ns.strip_prefix(NS_PREFIX) else {
            continue;
        };
        if owner_alive(rest) && !force {
            report.kept_live.push(ns);
            continue;
        }
        netns::delete_netns(&ns)?;
        report.deleted.push(ns);
    }
    let tmp = std::env::temp_dir();
    for entry in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(rest) = name.strip_prefix("tcpnc-lab-")
            && (force || !owner_alive(rest))
            && std::fs::remove_dir_all(entry.path()).is_ok()
        {
            report.deleted_dirs.push(entry.path());
        }
    }
    Ok(report)
}
