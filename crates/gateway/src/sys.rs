//! Real OS devices: the TUN device (tun-rs), routes, and privilege checks; the real UDP socket
//! is `tcpnc_io::SysUdp` (re-exported).

use std::io;
use std::net::IpAddr;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::Duration;

pub use tcpnc_io::{SysUdp, wait_readable};

use crate::cidr::Cidr;
use crate::error::GatewayError;
use crate::io::Tun;

/// Whether the process runs with effective uid 0.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A kernel TUN device created by the gateway; removed when dropped.
pub struct SysTun {
    dev: tun_rs::SyncDevice,
    name: String,
}

impl SysTun {
    /// Creates TUN `name` with `address` (its prefix gives the netmask), sets `mtu` and
    /// brings it up. Fails with [`GatewayError::NotRoot`] / [`GatewayError::NoTunDevice`]
    /// for the usual causes.
    pub fn create(name: &str, address: Cidr, mtu: u16) -> Result<SysTun, GatewayError> {
        if !std::path::Path::new("/dev/net/tun").exists() {
            return Err(GatewayError::NoTunDevice);
        }
        let mut builder = tun_rs::DeviceBuilder::new().name(name).mtu(mtu);
        builder = match address.addr {
            IpAddr::V4(a) => builder.ipv4(a, address.prefix, None),
            IpAddr::V6(a) => builder.ipv6(a, address.prefix),
        };
        let dev = builder.build_sync().map_err(|e| match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => GatewayError::NotRoot,
            Some(libc::ENOENT) | Some(libc::ENODEV) => GatewayError::NoTunDevice,
            _ => GatewayError::Tun {
                name: name.to_string(),
                source: e,
            },
        })?;
        let name = dev.name().unwrap_or_else(|_| name.to_string());
        Ok(SysTun { dev, name })
    }

    /// The kernel's name for the device.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Tun for SysTun {
    fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        if !wait_readable(self.dev.as_raw_fd(), timeout)? {
            return Ok(None);
        }
        match self.dev.recv(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn send(&self, packet: &[u8]) -> io::Result<()> {
        self.dev.send(packet).map(|_| ())
    }
}

/// Routes added through `ip route`, deleted again on drop.
#[derive(Debug, Default)]
pub struct Routes {
    dev: String,
    added: Vec<Cidr>,
}

impl Routes {
    /// No routes yet, for device `dev`.
    pub fn new(dev: &str) -> Self {
        Routes {
            dev: dev.to_string(),
            added: Vec::new(),
        }
    }

    /// Adds a route for `prefix` via the device.
    pub fn add(&mut self, prefix: Cidr) -> Result<(), GatewayError> {
        let net = format!("{}/{}", prefix.network(), prefix.prefix);
        let out = Command::new("ip")
            .args(["route", "add", &net, "dev", &self.dev])
            .output()
            .map_err(|e| GatewayError::Route {
                prefix: net.clone(),
                reason: format!("cannot run `ip` (iproute2): {e}"),
            })?;
        if !out.status.success() {
            return Err(GatewayError::Route {
                prefix: net,
                reason: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        self.added.push(prefix);
        Ok(())
    }

    /// The routes added so far.
    pub fn added(&self) -> &[Cidr] {
        &self.added
    }
}

impl Drop for Routes {
    fn drop(&mut self) {
        for p in self.added.drain(..).rev() {
            let net = format!("{}/{}", p.network(), p.prefix);
            // Removing the device removes its routes anyway; ignore failures here.
            let _ = Command::new("ip")
                .args(["route", "del", &net, "dev", &self.dev])
                .output();
        }
    }
}
