//! Real OS devices: the TUN device (tun-rs), routes, and privilege checks; the real UDP socket
//! is `tcpnc_io::SysUdp` (re-exported).

use std::io;
use std::net::IpAddr;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

pub use tcpnc_io::{SysUdp, wait_readable};

use tcpnc_proto::shard::local_shard;

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
///
/// With more than one queue (`IFF_MULTI_QUEUE`, `interface.tun_queues`) each queue is its own
/// file descriptor, read by its own reader thread. The kernel's automatic steering (Linux
/// `drivers/net/tun.c`, `tun_automq_select_queue`) sends a flow's packets to the queue that
/// last wrote a packet of that flow, so writes pick each packet's queue by its connection's
/// hash ([`tcpnc_proto::shard::local_shard`], the engine workers' hash): a connection is read
/// on one queue, in order, and with `tun_queues = workers` queue k carries worker k's flows.
pub struct SysTun {
    /// The queues; writes of non-TCP packets and the single-queue case use the first.
    queues: Vec<tun_rs::SyncDevice>,
    name: String,
    mtu: u16,
    /// The GRO state of batched writes (only the owner thread writes; never contended).
    gro: Option<Mutex<TunGro>>,
}

impl SysTun {
    /// Creates TUN `name` with `address` (its prefix gives the netmask) and `queues` queues
    /// (at least one; more than one asks for `IFF_MULTI_QUEUE`), sets `mtu` and brings it up;
    /// with `offload`, asks for `IFF_VNET_HDR` offloads and, when the kernel refuses them,
    /// falls back to a plain TUN (logged with the reason). Fails with
    /// [`GatewayError::NotRoot`] / [`GatewayError::NoTunDevice`] for the usual causes.
    pub fn create(
        name: &str,
        address: Cidr,
        mtu: u16,
        offload: bool,
        queues: usize,
    ) -> Result<SysTun, GatewayError> {
        if !std::path::Path::new("/dev/net/tun").exists() {
            return Err(GatewayError::NoTunDevice);
        }
        let multi = queues > 1;
        let dev = match offload.then(|| build(name, address, mtu, true, multi)) {
            Some(Ok(dev)) => dev,
            Some(Err(e @ (GatewayError::NotRoot | GatewayError::NoTunDevice))) => return Err(e),
            Some(Err(e)) => {
                tracing::warn!("TUN offloads (IFF_VNET_HDR) refused, using a plain TUN: {e}");
                build(name, address, mtu, false, multi)?
            }
            None => build(name, address, mtu, false, multi)?,
        };
        let offloaded = dev.tcp_gso();
        tracing::debug!(
            offload = offloaded,
            udp_gso = dev.udp_gso(),
            queues,
            "TUN device"
        );
        let name = dev.name().unwrap_or_else(|_| name.to_string());
        let mut all = Vec::with_capacity(queues.max(1));
        for _ in 1..queues {
            all.push(dev.try_clone().map_err(|source| GatewayError::Tun {
                name: name.clone(),
                source,
            })?);
        }
        all.insert(0, dev);
        Ok(SysTun {
            queues: all,
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
    multi_queue: bool,
) -> Result<tun_rs::SyncDevice, GatewayError> {
    let mut builder = tun_rs::DeviceBuilder::new()
        .name(name)
        .mtu(mtu)
        .offload(offload)
        .multi_queue(multi_queue);
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

impl SysTun {
    /// The queue a packet is written on: its connection's shard among the queues.
    fn queue_for(&self, packet: &[u8]) -> &tun_rs::SyncDevice {
        &self.queues[local_shard(packet, self.queues.len())]
    }

    /// One packet from queue `queue` of a plain TUN.
    fn recv_on(
        &self,
        queue: usize,
        buf: &mut [u8],
        timeout: Duration,
    ) -> io::Result<Option<usize>> {
        let dev = &self.queues[queue];
        if !wait_readable(dev.as_raw_fd(), timeout)? {
            return Ok(None);
        }
        match dev.recv(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Tun for SysTun {
    /// One packet from the first queue of a plain TUN. An offloading TUN's reads start with
    /// a virtio header and may hold many packets: only [`Tun::recv_batch`] reads it (this is
    /// an error there).
    fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        if self.gro.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "an offloading TUN is read with recv_batch",
            ));
        }
        self.recv_on(0, buf, timeout)
    }

    /// One packet, on its connection's queue; on an offloading TUN behind a zeroed virtio
    /// header (no offload asked).
    fn send(&self, packet: &[u8]) -> io::Result<()> {
        let dev = self.queue_for(packet);
        if self.gro.is_none() {
            return dev.send(packet).map(|_| ());
        }
        let mut buf = vec![0u8; TUN_HEADROOM + packet.len()];
        buf[TUN_HEADROOM..].copy_from_slice(packet);
        dev.send(&buf).map(|_| ())
    }

    fn rx_slots(&self) -> TunRx {
        if self.gro.is_some() {
            TunRx::for_offload(usize::from(self.mtu))
        } else {
            TunRx::new(1, crate::readers::MAX_PACKET, false)
        }
    }

    fn queues(&self) -> usize {
        self.queues.len()
    }

    /// One read of queue `queue`. On an offloading TUN: a virtio header and a packet of up to
    /// 64 KiB, cut into IP packets (checksums completed). Errors of the cutting (not of the
    /// read) are [`TunRead::Malformed`].
    fn recv_batch(&self, queue: usize, rx: &mut TunRx, timeout: Duration) -> io::Result<TunRead> {
        if self.gro.is_none() {
            return recv_one(rx, |buf| self.recv_on(queue, buf, timeout));
        }
        rx.len = 0;
        let dev = &self.queues[queue];
        if !wait_readable(dev.as_raw_fd(), timeout)? {
            return Ok(TunRead::Timeout);
        }
        match dev.recv_multiple(&mut rx.raw, &mut rx.slots, &mut rx.sizes, 0) {
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
    /// flow become one GSO super-packet), then one `write(2)` per resulting packet, on the
    /// packet's queue. A failed write counts the packets it carried as failed; the other
    /// writes are still made.
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
            let packet = &bufs[w.index];
            let dev = self.queue_for(packet.get(TUN_HEADROOM..).unwrap_or_default());
            match dev.send(packet) {
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
