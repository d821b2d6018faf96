//! The peers' engines as the owner thread drives them: on the owner thread itself
//! (`interface.workers = 1`), or sharded by connection over worker threads
//! ([`crate::workers`], `workers` > 1). Either way the owner takes what the engines produced
//! one [`Output`] at a time (inline straight from the engines' buffers, from workers out of
//! their [`Parcel`]s) and seals, writes and monitors it in one place.

use std::time::Duration;

use tcpnc_proto::Event;
use tcpnc_proto::seam::Counters;

use crate::parcel::{Parcel, Side};
use crate::peer_engine::PeerEngine;
use crate::workers::{OwnerLink, Workers};

/// The engines of every peer (see the module docs).
pub(crate) enum Engines {
    /// One engine per peer, on the owner thread.
    Inline(Vec<PeerEngine>),
    /// Engine shards on worker threads.
    Workers(Workers),
}

impl Engines {
    /// `shards[k][i]`: shard k's engine of peer i. One shard runs inline.
    pub fn new(mut shards: Vec<Vec<PeerEngine>>) -> Engines {
        if shards.len() == 1 {
            Engines::Inline(shards.pop().unwrap_or_default())
        } else {
            Engines::Workers(Workers::new(shards))
        }
    }

    /// Starts the worker threads, if any.
    pub fn start(&mut self, link: &OwnerLink) {
        if let Engines::Workers(w) = self {
            w.start(link);
        }
    }

    /// An IP packet from the TUN for peer `peer`.
    pub fn local(&mut self, now: Duration, peer: usize, packet: &[u8]) {
        match self {
            Engines::Inline(e) => e[peer].handle_local(now, packet),
            Engines::Workers(w) => w.local(peer, packet),
        }
    }

    /// An opened frame from peer `peer`.
    pub fn remote(&mut self, now: Duration, peer: usize, frame: &[u8]) {
        match self {
            Engines::Inline(e) => e[peer].handle_remote(now, frame),
            Engines::Workers(w) => w.remote(peer, frame),
        }
    }

    /// The earliest inline engine deadline (workers keep their own timers).
    pub fn poll_timeout(&self) -> Option<Duration> {
        match self {
            Engines::Inline(e) => e.iter().filter_map(|e| e.poll_timeout()).min(),
            Engines::Workers(_) => None,
        }
    }

    /// Runs the inline engines' due timers.
    pub fn handle_timeout(&mut self, now: Duration) {
        if let Engines::Inline(engines) = self {
            for e in engines {
                if e.poll_timeout().is_some_and(|t| t <= now) {
                    e.handle_timeout(now);
                }
            }
        }
    }

    /// Peer `peer` restarted: reset its connections on every shard.
    pub fn reset_flows(&mut self, now: Duration, peer: usize) {
        match self {
            Engines::Inline(e) => e[peer].reset_flows(now),
            Engines::Workers(w) => w.reset_flows(peer),
        }
    }

    /// End of a dispatch round: the inline engines' output handed to `take`, read in place;
    /// with workers, their inputs of this round handed over (their output arrives as
    /// [`crate::readers::Input::Worker`]).
    pub fn flush(&mut self, take: impl FnMut(usize, Output<'_>)) {
        match self {
            Engines::Inline(e) => {
                drain(e, take);
            }
            Engines::Workers(w) => w.submit(),
        }
    }

    /// Gives worker `k`'s output parcel back.
    pub fn give_back(&self, k: usize, parcel: Parcel) {
        if let Engines::Workers(w) = self {
            w.give_back(k, parcel);
        }
    }

    /// Peer `peer`'s counters (over every shard).
    pub fn counters(&self, peer: usize) -> Counters {
        match self {
            Engines::Inline(e) => e[peer].counters(),
            Engines::Workers(w) => w.counters(peer),
        }
    }

    /// Items dropped because a worker's channel was full.
    pub fn drops(&self) -> u64 {
        match self {
            Engines::Inline(_) => 0,
            Engines::Workers(w) => w.drops,
        }
    }

    /// Items handed to each worker (empty when inline).
    pub fn fed(&self) -> Vec<u64> {
        match self {
            Engines::Inline(_) => Vec::new(),
            Engines::Workers(w) => w.fed.clone(),
        }
    }

    /// Number of shards (1 when inline).
    pub fn shards(&self) -> usize {
        match self {
            Engines::Inline(_) => 1,
            Engines::Workers(w) => w.shards(),
        }
    }

    /// Stops and joins the workers, if any.
    pub fn stop(&mut self) {
        if let Engines::Workers(w) = self {
            w.stop();
        }
    }
}

/// One thing an engine produced, for the owner.
pub(crate) enum Output<'a> {
    /// A frame for the peer ([`Side::Remote`]) or an IP packet for the TUN ([`Side::Local`]).
    Packet(Side, &'a [u8]),
    /// An engine event.
    Event(Event),
}

/// Hands everything `engines` (peer i at index i) produced to `take` (frames for the peer,
/// packets for the TUN, events), each buffer going back to its engine after. Returns whether
/// a flow opened or closed.
pub(crate) fn drain(engines: &mut [PeerEngine], mut take: impl FnMut(usize, Output<'_>)) -> bool {
    let mut changed = false;
    for (peer, e) in engines.iter_mut().enumerate() {
        while let Some(d) = e.poll_remote() {
            take(peer, Output::Packet(Side::Remote, &d));
            e.recycle(d);
        }
        while let Some(p) = e.poll_local() {
            take(peer, Output::Packet(Side::Local, &p));
            e.recycle(p);
        }
        while let Some(ev) = e.poll_event() {
            changed |= matches!(ev, Event::FlowOpened { .. } | Event::FlowClosed { .. });
            take(peer, Output::Event(ev));
        }
    }
    changed
}
