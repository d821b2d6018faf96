//! A smoltcp TCP endpoint on an in-memory IP device.

use std::collections::VecDeque;
use std::time::Duration;

use smoltcp::iface::{Config, Interface, PollResult, SocketHandle, SocketSet};
use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::socket::tcp;
use smoltcp::time::{Duration as SmolDuration, Instant};
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr, Ipv4Address};

use crate::config::{CongestionControl, SimConfig};

/// Converts virtual time to smoltcp's microsecond clock (truncating).
pub(crate) fn instant(now: Duration) -> Instant {
    Instant::from_micros(now.as_micros() as i64)
}

/// Converts a smoltcp instant back to virtual time (negative clamps to zero).
pub(crate) fn duration(i: Instant) -> Duration {
    Duration::from_micros(i.total_micros().max(0) as u64)
}

/// An IP-medium device backed by two queues; the simulator moves packets in and out.
#[derive(Debug)]
pub(crate) struct MemDevice {
    /// Packets waiting to be received by the interface.
    pub rx: VecDeque<Vec<u8>>,
    /// Packets the interface transmitted.
    pub tx: Vec<Vec<u8>>,
    mtu: usize,
}

impl Device for MemDevice {
    type RxToken<'a> = RxToken;
    type TxToken<'a> = TxToken<'a>;

    fn receive(&mut self, _timestamp: Instant) -> Option<(RxToken, TxToken<'_>)> {
        let buf = self.rx.pop_front()?;
        Some((RxToken(buf), TxToken(&mut self.tx)))
    }

    fn transmit(&mut self, _timestamp: Instant) -> Option<TxToken<'_>> {
        Some(TxToken(&mut self.tx))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ip;
        caps.max_transmission_unit = self.mtu;
        caps
    }
}

pub(crate) struct RxToken(Vec<u8>);

impl phy::RxToken for RxToken {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

pub(crate) struct TxToken<'a>(&'a mut Vec<Vec<u8>>);

impl phy::TxToken for TxToken<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut buf = vec![0u8; len];
        let r = f(&mut buf);
        self.0.push(buf);
        r
    }
}

/// Client address.
pub(crate) const CLIENT_ADDR: Ipv4Address = Ipv4Address::new(10, 0, 0, 1);
/// Server address.
pub(crate) const SERVER_ADDR: Ipv4Address = Ipv4Address::new(10, 0, 0, 2);
/// Server port.
pub(crate) const SERVER_PORT: u16 = 5001;

/// Interface, device and one TCP socket.
pub(crate) struct Endpoint {
    pub iface: Interface,
    pub device: MemDevice,
    pub sockets: SocketSet<'static>,
    pub handle: SocketHandle,
}

impl Endpoint {
    /// Builds an endpoint at `addr` with one TCP socket configured from `cfg`.
    pub fn new(addr: Ipv4Address, cfg: &SimConfig, iface_seed: u64) -> Self {
        let mut device = MemDevice {
            rx: VecDeque::new(),
            tx: Vec::new(),
            mtu: cfg.mtu,
        };
        let mut config = Config::new(HardwareAddress::Ip);
        config.random_seed = iface_seed;
        let mut iface = Interface::new(config, &mut device, instant(Duration::ZERO));
        iface.update_ip_addrs(|addrs| {
            addrs
                .push(IpCidr::new(IpAddress::Ipv4(addr), 24))
                .expect("one address fits");
        });
        let mut socket = tcp::Socket::new(
            tcp::SocketBuffer::new(vec![0u8; cfg.rx_buffer]),
            tcp::SocketBuffer::new(vec![0u8; cfg.tx_buffer]),
        );
        socket.set_congestion_control(match cfg.cc {
            CongestionControl::None => tcp::CongestionControl::None,
            CongestionControl::Reno => tcp::CongestionControl::Reno,
            CongestionControl::Cubic => tcp::CongestionControl::Cubic,
            // Rejected by SimConfig::validate; smoltcp's nearest is NewReno.
            CongestionControl::Bbr => tcp::CongestionControl::Reno,
        });
        socket.set_ack_delay(
            cfg.ack_delay
                .map(|d| SmolDuration::from_micros(d.as_micros() as u64)),
        );
        let mut sockets = SocketSet::new(Vec::new());
        let handle = sockets.add(socket);
        Self {
            iface,
            device,
            sockets,
            handle,
        }
    }

    /// The endpoint's TCP socket.
    pub fn socket(&mut self) -> &mut tcp::Socket<'static> {
        self.sockets.get_mut::<tcp::Socket>(self.handle)
    }

    /// Runs the interface once at `now`; `true` if it reports a possible state change.
    pub fn poll(&mut self, now: Duration) -> bool {
        self.iface
            .poll(instant(now), &mut self.device, &mut self.sockets)
            == PollResult::SocketStateChanged
    }

    /// When the interface next wants to be polled.
    pub fn poll_at(&mut self, now: Duration) -> Option<Duration> {
        self.iface
            .poll_at(instant(now), &self.sockets)
            .map(duration)
    }

    /// Starts an active open to the server.
    pub fn connect(&mut self, local_port: u16) -> Result<(), tcp::ConnectError> {
        let cx = self.iface.context();
        let socket = self.sockets.get_mut::<tcp::Socket>(self.handle);
        socket.connect(cx, (IpAddress::Ipv4(SERVER_ADDR), SERVER_PORT), local_port)
    }
}
