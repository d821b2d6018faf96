//! Network-namespace plumbing: the `ip` command, running code inside a namespace (a thread
//! that `setns`es), offload switches (the SIOCETHTOOL ioctl), interface and socket checks.

use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::error::{LabError, Result};

/// Runs `ip ARGS`; returns stdout, or the command and its stderr as an error.
pub fn ip(args: &[&str]) -> Result<String> {
    run_cmd("ip", args)
}

/// Runs a program to completion; returns stdout, or an error with stderr.
pub fn run_cmd(prog: &str, args: &[&str]) -> Result<String> {
    let cmd = format!("{prog} {}", args.join(" "));
    let out = Command::new(prog)
        .args(args)
        .output()
        .map_err(|e| LabError::Command {
            cmd: cmd.clone(),
            detail: e.to_string(),
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(LabError::Command {
            cmd,
            detail: format!(
                "{}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        })
    }
}

/// Runs `f` on a thread that has entered network namespace `ns` (`/run/netns/NS`).
pub fn in_netns<T: Send>(ns: &str, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    let path = format!("/run/netns/{ns}");
    let file = std::fs::File::open(&path).map_err(|e| LabError::file(&path, e))?;
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: a valid namespace fd; setns only affects this (short-lived) thread.
            if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(LabError::last_os(format!("setns into {ns}")));
            }
            f()
        })
        .join()
        .unwrap_or_else(|_| Err(LabError::Invalid(format!("thread in {ns} panicked"))))
    })
}

/// `struct ifreq` with the `ifr_data` / `ifr_flags` member (40 bytes on 64-bit Linux).
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    data: usize,
    _pad: [u8; 16],
}

impl IfReq {
    fn new(dev: &str) -> Result<Self> {
        let mut name = [0u8; libc::IFNAMSIZ];
        if dev.len() >= name.len() || dev.contains('\0') {
            return Err(LabError::Invalid(format!("interface name '{dev}'")));
        }
        name[..dev.len()].copy_from_slice(dev.as_bytes());
        Ok(IfReq {
            name,
            data: 0,
            _pad: [0; 16],
        })
    }
}

/// `struct ethtool_value`.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// (name, get command, set command) of the offloads the lab turns off.
const OFFLOADS: [(&str, u32, u32); 3] = [
    ("tso", 0x1e, 0x1f), // ETHTOOL_GTSO / ETHTOOL_STSO
    ("gso", 0x23, 0x24), // ETHTOOL_GGSO / ETHTOOL_SGSO
    ("gro", 0x2b, 0x2c), // ETHTOOL_GGRO / ETHTOOL_SGRO
];

fn dgram_socket() -> Result<std::os::fd::OwnedFd> {
    // SAFETY: plain socket(2); the fd is owned below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(LabError::last_os("socket for ioctl"));
    }
    // SAFETY: fd is a fresh, valid descriptor we own.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
}

fn ethtool(fd: i32, dev: &str, cmd: u32, data: u32) -> std::io::Result<u32> {
    let mut val = EthtoolValue { cmd, data };
    let mut req = IfReq::new(dev).map_err(|e| std::io::Error::other(e.to_string()))?;
    req.data = &mut val as *mut EthtoolValue as usize;
    // SAFETY: req points at a valid ifreq whose data points at a live ethtool_value.
    let rc = unsafe { libc::ioctl(fd, libc::SIOCETHTOOL as _, &mut req as *mut IfReq) };
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(val.data)
    }
}

/// Turns TSO, GSO and GRO off on `dev` (in the calling thread's namespace) and checks that
/// they read back off. A device that does not support a switch (EOPNOTSUPP) is accepted when
/// the feature reads back off.
pub fn offloads_off(dev: &str) -> Result<()> {
    let sock = dgram_socket()?;
    let fd = sock.as_raw_fd();
    for (name, get, set) in OFFLOADS {
        let set_err = ethtool(fd, dev, set, 0).err();
        match ethtool(fd, dev, get, 0) {
            Ok(0) => {}
            Ok(_) => {
                return Err(LabError::Os {
                    what: format!("turning {name} off on {dev}"),
                    source: set_err.unwrap_or_else(|| std::io::Error::other("still on")),
                });
            }
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {}
            Err(e) => {
                return Err(LabError::Os {
                    what: format!("reading {name} of {dev}"),
                    source: e,
                });
            }
        }
    }
    Ok(())
}

/// Whether interface `dev` exists and is up (in the calling thread's namespace).
pub fn iface_up(dev: &str) -> Result<bool> {
    let sock = dgram_socket()?;
    let mut req = IfReq::new(dev)?;
    // SAFETY: req is a valid ifreq; SIOCGIFFLAGS writes a short into its union.
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut req) };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::ENODEV) {
            Ok(false)
        } else {
            Err(LabError::Os {
                what: format!("flags of {dev}"),
                source: e,
            })
        };
    }
    let flags = (req.data & 0xffff) as i32;
    Ok(flags & libc::IFF_UP != 0)
}

/// Protocol table of `/proc/thread-self/net`.
#[derive(Debug, Clone, Copy)]
pub enum Proto {
    /// `udp`: any bound socket counts.
    Udp,
    /// `tcp`: only sockets in LISTEN (state 0A).
    Tcp,
}

/// Whether a socket is bound (UDP) or listening (TCP) on `port` in the calling thread's
/// namespace (any address).
pub fn port_bound(proto: Proto, port: u16) -> Result<bool> {
    let path = match proto {
        Proto::Udp => "/proc/thread-self/net/udp",
        Proto::Tcp => "/proc/thread-self/net/tcp",
    };
    let text = std::fs::read_to_string(path).map_err(|e| LabError::file(path, e))?;
    let want = format!(":{port:04X}");
    Ok(text.lines().skip(1).any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() > 3 && f[1].ends_with(&want) && (matches!(proto, Proto::Udp) || f[3] == "0A")
    }))
}

/// Writes a sysctl under `/proc/sys` (e.g. `net/ipv4/ip_forward`) in the calling thread's
/// namespace.
pub fn sysctl(key: &str, value: &str) -> Result<()> {
    let path = format!("/proc/sys/{key}");
    std::fs::write(&path, value).map_err(|e| LabError::file(path, e))
}

/// Polls `check` every `step` until it returns `Ok(true)` or `timeout` passes.
pub fn wait_until(
    what: &str,
    timeout: Duration,
    mut check: impl FnMut() -> Result<bool>,
) -> Result<()> {
    let start = Instant::now();
    let step = Duration::from_millis(20);
    loop {
        if check()? {
            return Ok(());
        }
        if start.elapsed() >= timeout {
            return Err(LabError::Timeout {
                what: what.to_string(),
                secs: timeout.as_secs_f64(),
                log: String::new(),
            });
        }
        std::thread::sleep(step);
    }
}

/// Whether the process `pid` exists.
pub fn pid_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence/permission.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Names of the namespaces in `/run/netns`.
pub fn list_netns() -> Vec<String> {
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Kills every process inside `ns` (SIGKILL) and deletes it; missing namespaces are fine.
pub fn delete_netns(ns: &str) -> Result<()> {
    if !std::path::Path::new(&format!("/run/netns/{ns}")).exists() {
        return Ok(());
    }
    if let Ok(pids) = ip(&["netns", "pids", ns]) {
        for pid in pids
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            // SAFETY: plain kill(2) of a process inside a namespace this run owns.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    ip(&["netns", "delete", ns]).map(drop)
}
