//! The reader threads of the event loop: one per blocking source (TUN, UDP), each waiting with
//! `poll(2)` (at most [`POLL_INTERVAL`], to notice shutdown), reading and handing its input to
//! the owner thread through the bounded channel. A full channel is a counted drop.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::io::{Tun, Udp};

/// How often reader threads and the owner look at the shutdown flag.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// Largest packet or datagram read.
pub const MAX_PACKET: usize = 65536;

/// One input for the owner thread.
pub(crate) enum Input {
    Tun(Vec<u8>),
    Udp(Vec<u8>, SocketAddr),
    Failed(String, std::io::Error),
}

/// Counters the reader threads update (the owner adds them to its own in every snapshot).
#[derive(Debug, Default)]
pub(crate) struct ReaderCounters {
    /// Inputs dropped because the owner's channel was full.
    pub queue_drops: AtomicU64,
    /// Read system calls on the TUN.
    pub tun_rx_calls: AtomicU64,
    /// Receive system calls on the UDP socket.
    pub udp_rx_calls: AtomicU64,
}

impl ReaderCounters {
    /// Adds the readers' counts to the owner's gateway counters.
    pub fn add_to(&self, g: &mut crate::stats::GatewayCounters) {
        g.queue_drops += self.queue_drops.load(Ordering::Relaxed);
        g.tun_rx_calls += self.tun_rx_calls.load(Ordering::Relaxed);
        g.udp_rx_calls += self.udp_rx_calls.load(Ordering::Relaxed);
    }
}

fn forward(tx: &SyncSender<Input>, input: Input, drops: &AtomicU64) -> bool {
    match tx.try_send(input) {
        Ok(()) => true,
        Err(TrySendError::Full(_)) => {
            drops.fetch_add(1, Ordering::Relaxed);
            true
        }
        Err(TrySendError::Disconnected(_)) => false,
    }
}

pub(crate) fn spawn_tun_reader<T: Tun>(
    tun: &Arc<T>,
    tx: &SyncSender<Input>,
    shutdown: &Arc<AtomicBool>,
    counters: &Arc<ReaderCounters>,
) -> JoinHandle<()> {
    let (tun, tx, shutdown, c) = (tun.clone(), tx.clone(), shutdown.clone(), counters.clone());
    thread::spawn(move || {
        let mut buf = vec![0u8; MAX_PACKET];
        while !shutdown.load(Ordering::SeqCst) {
            let input = match tun.recv(&mut buf, POLL_INTERVAL) {
                Ok(Some(n)) => Input::Tun(buf[..n].to_vec()),
                Ok(None) => continue,
                Err(e) => {
                    let _ = tx.send(Input::Failed("reading the TUN device".into(), e));
                    return;
                }
            };
            c.tun_rx_calls.fetch_add(1, Ordering::Relaxed);
            if !forward(&tx, input, &c.queue_drops) {
                return;
            }
        }
    })
}

pub(crate) fn spawn_udp_reader<U: Udp>(
    udp: &Arc<U>,
    tx: &SyncSender<Input>,
    shutdown: &Arc<AtomicBool>,
    counters: &Arc<ReaderCounters>,
) -> JoinHandle<()> {
    let (udp, tx, shutdown, c) = (udp.clone(), tx.clone(), shutdown.clone(), counters.clone());
    thread::spawn(move || {
        let mut buf = vec![0u8; MAX_PACKET];
        while !shutdown.load(Ordering::SeqCst) {
            let input = match udp.recv_from(&mut buf, POLL_INTERVAL) {
                Ok(Some((n, from))) => Input::Udp(buf[..n].to_vec(), from),
                Ok(None) => continue,
                Err(e) => {
                    let _ = tx.send(Input::Failed("receiving on the UDP socket".into(), e));
                    return;
                }
            };
            c.udp_rx_calls.fetch_add(1, Ordering::Relaxed);
            if !forward(&tx, input, &c.queue_drops) {
                return;
            }
        }
    })
}
