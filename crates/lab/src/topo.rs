//! The testbed topology: three namespaces joined by two veth pairs.
//!
//! ```text
//!  tcpnc-<pid>-<n>-cli          tcpnc-<pid>-<n>-emu             tcpnc-<pid>-<n>-srv
//!  eth0 10.201.1.1/30 ──veth── cli0 10.201.1.2/30
//!                               srv0 10.201.2.2/30 ──veth── eth0 10.201.2.1/30
//! ```
//!
//! Offloads (TSO, GSO, GRO) are off on all four veth ends. The emulator namespace forwards
//! IPv4 between its two sides, so the hosts can also reach each other directly (unimpaired;
//! used to check the plumbing); impaired traffic goes through the gateways' tunnel and the
//! relay instead (see [`crate::session`]).
//!
//! Dropping a [`Topology`] deletes its namespaces, which removes every veth and TUN in them.

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::error::Result;
use crate::guard;
use crate::netns::{self, in_netns, ip};

/// Client host's veth address.
pub const CLI_ADDR: Ipv4Addr = Ipv4Addr::new(10, 201, 1, 1);
/// Emulator's address facing the client.
pub const EMU_CLI_ADDR: Ipv4Addr = Ipv4Addr::new(10, 201, 1, 2);
/// Server host's veth address.
pub const SRV_ADDR: Ipv4Addr = Ipv4Addr::new(10, 201, 2, 1);
/// Emulator's address facing the server.
pub const EMU_SRV_ADDR: Ipv4Addr = Ipv4Addr::new(10, 201, 2, 2);
/// Name of the host-side veth in the client and server namespaces.
pub const HOST_DEV: &str = "eth0";

/// The default congestion control the lab sets in both host namespaces
/// (`net.ipv4.tcp_congestion_control`), for programs that do not choose their own. Reno,
/// because a namespace other than the initial one may only default to a congestion control
/// listed in the host's `net.ipv4.tcp_allowed_congestion_control`, and reno always is
/// (the built-in source sets its own per socket, which root may always do).
pub const DEFAULT_CC: &str = "reno";

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Three namespaces and two veth pairs, deleted on drop.
#[derive(Debug)]
pub struct Topology {
    /// `<pid>-<n>`: unique per process and topology.
    pub id: String,
    /// Client namespace (data sender, client gateway).
    pub cli: String,
    /// Server namespace (data receiver, server gateway).
    pub srv: String,
    /// Emulator namespace (the relay).
    pub emu: String,
}

impl Topology {
    /// Creates the namespaces, veths, addresses and routes; turns offloads off.
    pub fn create() -> Result<Topology> {
        guard::require_root()?;
        guard::install_signal_handler()?;
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let id = format!("{}-{n}", std::process::id());
        let base = format!("{}{id}", guard::NS_PREFIX);
        let topo = Topology {
            id,
            cli: format!("{base}-cli"),
            srv: format!("{base}-srv"),
            emu: format!("{base}-emu"),
        };
        for ns in [&topo.cli, &topo.srv, &topo.emu] {
            guard::register_netns(ns);
        }
        // From here on, an error drops `topo`, which deletes whatever was created.
        for ns in [&topo.cli, &topo.srv, &topo.emu] {
            ip(&["netns", "add", ns])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        topo.pair(&topo.cli, CLI_ADDR, "cli0", EMU_CLI_ADDR)?;
        topo.pair(&topo.srv, SRV_ADDR, "srv0", EMU_SRV_ADDR)?;
        ip(&[
            "-n",
            &topo.cli,
            "route",
            "add",
            "10.201.2.0/30",
            "via",
            "10.201.1.2",
        ])?;
        ip(&[
            "-n",
            &topo.srv,
            "route",
            "add",
            "10.201.1.0/30",
            "via",
            "10.201.2.2",
        ])?;
        in_netns(&topo.emu, || netns::sysctl("net/ipv4/ip_forward", "1"))?;
        for ns in [&topo.cli, &topo.srv] {
            in_netns(ns, || {
                netns::sysctl("net/ipv4/tcp_congestion_control", DEFAULT_CC)
            })?;
        }
        for (ns, dev) in [
            (&topo.cli, HOST_DEV),
            (&topo.srv, HOST_DEV),
            (&topo.emu, "cli0"),
            (&topo.emu, "srv0"),
        ] {
            netns::wait_until(
                &format!("{dev} in {ns} to come up"),
                Duration::from_secs(5),
                || in_netns(ns, || netns::iface_up(dev)),
            )?;
        }
        Ok(topo)
    }

    /// One veth pair: `eth0` in `host` with `host_addr`, `emu_dev` in the emulator.
    fn pair(
        &self,
        host: &str,
        host_addr: Ipv4Addr,
        emu_dev: &str,
        emu_addr: Ipv4Addr,
    ) -> Result<()> {
        ip(&[
            "link", "add", "name", HOST_DEV, "netns", host, "type", "veth", "peer", "name",
            emu_dev, "netns", &self.emu,
        ])?;
        for (ns, dev, addr) in [(host, HOST_DEV, host_addr), (&self.emu, emu_dev, emu_addr)] {
            in_netns(ns, || netns::offloads_off(dev))?;
            ip(&["-n", ns, "addr", "add", &format!("{addr}/30"), "dev", dev])?;
            ip(&["-n", ns, "link", "set", dev, "up"])?;
        }
        Ok(())
    }

    /// The three namespace names.
    pub fn namespaces(&self) -> [&str; 3] {
        [&self.cli, &self.srv, &self.emu]
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        for ns in [&self.cli, &self.srv, &self.emu] {
            if let Err(e) = netns::delete_netns(ns) {
                eprintln!("tcpnc lab: deleting {ns}: {e}");
            }
            guard::unregister_netns(ns);
        }
    }
}
