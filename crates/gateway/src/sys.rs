//! Real OS devices: the TUN device (tun-rs), routes, and privilege checks; the real UDP socket
//! is `tcpnc_io::SysUdp` (re-exported).

use std::io;
use std::net::IpAddr;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

pub use tcpnc_io::{SysUdp, wait_readable};

use crate::cidr::Cidr;
use crate::error::GatewayError;
use crate::io::{Tun, recv_one, send_each};
use crate::tun_batch::{TUN_HEADROOM, TunRead, TunRx, TunSent, TunTx};
use crate::tun_gro::TunGro;

/// Whether the process runs with effective uid 0.
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// A kernel TUN device created by the gateway; removed when dropped.
///
/// With offloads (`IFF_VNET_HDR`, `interface.tun_offload`) the kernel hands the TUN TSO/GSO
/// super-packets of up to 64 KiB, which one read cuts into MSS-sized IP packets (tun-rs
/// `recv_multiple`, wireguard-go's `handleVirtioRead`), and a batch of written TCP segments is
/// coalesced by our GRO ([`TunGro`]) into fewer, larger writes.
pub struct SysTun {
    dev: tun_rs::SyncDevice,
    name: String,
    mtu: u16,
    /// The GRO state of batched writes (only the owner thread writes; never contended).
    gro: Option<Mutex<TunGro>>,
}

impl SysTun {
    /// Creates TUN `name` with `address` (its prefix gives the netmask), sets `mtu` and
    /// brings it up; with `offload`, asks for `IFF_VNET_HDR` offloads and, when the kernel
    /// refuses them, falls back to a plain TUN (logged with the reason). Fails with
    /// [`GatewayError::NotRoot`] / [`GatewayError::NoTunDevice`] for the usual causes.
    pub fn create(
        name: &str,
        address: Cidr,
        mtu: u16,
        offload: bool,
    ) -> Result<SysTun, GatewayError> {
        if !std::path::Path::new("/dev/net/tun").exists() {
            return Err(GatewayError::NoTunDevice);
        }
        let dev = match offload.then(|| build(name, address, mtu, true)) {
            Some(Ok(dev)) => dev,
            Some(Err(e @ (GatewayError::NotRoot | GatewayError::NoTunDevice))) => return Err(e),
            Some(Err(e)) => {
                tracing::warn!("TUN offloads (IFF_VNET_HDR) refused, using a plain TUN: {e}");
                build(name, address, mtu, false)?
            }
            None => build(name, address, mtu, false)?,
        };
        let offloaded = dev.tcp_gso();
        tracing::debug!(offload = offloaded, udp_gso = dev.udp_gso(), "TUN device");
        let name = dev.name().unwrap_or_else(|_| name.to_string());
        Ok(SysTun {
            dev,
            name,
            mtu,
            gro: offloaded.then(|| Mutex::new(TunGro::default())),
        })
    }

    /// The kernel's name for the device.
    pub fn name(&self) -> &str {
        &self.name
    }
}

fn build(
    name: &str,
    address: Cidr,
    mtu: u16,
    offload: bool,
) -> Result<tun_rs::SyncDevice, GatewayError> {
    let mut builder = tun_rs::DeviceBuilder::new()
        .name(name)
        .mtu(mtu)
        .offload(offload);
    builder = match address.addr {
        IpAddr::V4(a) => builder.ipv4(a, address.prefix, None),
        IpAddr::V6(a) => builder.ipv6(a, address.prefix),
    };
    builder.build_sync().map_err(|e| match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => GatewayError::NotRoot,
        Some(libc::ENOENT) | Some(libc::ENODEV) => GatewayError::NoTunDevice,
        _ => GatewayError::Tun {
            name: name.to_string(),
            source: e,
        },
    })
}

impl Tun for SysTun {
    /// One packet from a plain TUN. An offloading TUN's reads start with a virtio header and
    /// may hold many packets: only [`Tun::recv_batch`] reads it (this is an error there).
    fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        if self.gro.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "an offloading TUN is read with recv_batch",
            ));
        }
        if !wait_readable(self.dev.as_raw_fd(), timeout)? {
            return Ok(None);
        }
        match self.dev.recv(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// One packet; on an offloading TUN behind a zeroed virtio header (no offload asked).
    fn send(&self, packet: &[u8]) -> io::Result<()> {
        if self.gro.is_none() {
            return self.dev.send(packet).map(|_| ());
        }
        let mut buf = vec![0u8; TUN_HEADROOM + packet.len()];
        buf[TUN_HEADROOM..].copy_from_slice(packet);
        self.dev.send(&buf).map(|_| ())
    }

    fn rx_slots(&self) -> TunRx {
        if self.gro.is_some() {
            TunRx::for_offload(usize::from(self.mtu))
        } else {
            TunRx::new(1, crate::readers::MAX_PACKET, false)
        }
    }

    /// On an offloading TUN: one `read(2)` of a virtio header and a packet of up to 64 KiB,
    /// cut into IP packets (checksums completed). Errors of the cutting (not of the read) are
    /// [`TunRead::Malformed`].
    fn recv_batch(&self, rx: &mut TunRx, timeout: Duration) -> io::Result<TunRead> {
        rx.len = 0;
        if self.gro.is_none() {
            return recv_one(self, rx, timeout);
        }
        if !wait_readable(self.dev.as_raw_fd(), timeout)? {
            return Ok(TunRead::Timeout);
        }
        match self
            .dev
            .recv_multiple(&mut rx.raw, &mut rx.slots, &mut rx.sizes, 0)
        {
            Ok(n) => {
                rx.len = n;
                Ok(TunRead::Packets)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(TunRead::Timeout),
            Err(e) if e.raw_os_error().is_some() => Err(e),
            Err(e) => Ok(TunRead::Malformed(e)),
        }
    }

    /// On an offloading TUN: the batch is coalesced ([`TunGro`]: consecutive TCP segments of a
    /// flow become one GSO super-packet), then one `write(2)` per resulting packet. A failed
    /// write counts the packets it carried as failed; the other writes are still made.
    fn send_batch(&self, tx: &mut TunTx) -> TunSent {
        let Some(gro) = &self.gro else {
            return send_each(self, tx);
        };
        // The coalescer starts afresh every batch: a panic in an earlier one left nothing stale.
        let mut gro = gro.lock().unwrap_or_else(PoisonError::into_inner);
        let bufs = tx.bufs_mut();
        let mut sent = TunSent::default();
        for w in gro.coalesce(bufs) {
            sent.calls += 1;
            match self.dev.send(&bufs[w.index]) {
                Ok(_) => sent.written += w.packets as u64,
                Err(e) => {
                    sent.failed += w.packets as u64;
                    sent.error = Some(e);
                }
            }
        }
        sent
    }

    fn offload(&self) -> bool {
        self.gro.is_some()
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
