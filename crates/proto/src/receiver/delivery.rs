//! Delivery of decoded segments to the local TCP (Sundararajan et al. §IV-B, §IV-C): each
//! decoded symbol is rebuilt into the original TCP segment and delivered; the local TCP's ACKs
//! confirm delivery, an unconfirmed segment is delivered again after the redelivery timeout, and
//! the prefix that is below Base and confirmed leaves the decoder.

use std::time::Duration;

use super::{Delivery, ReceiverHalf, Symbol};
use crate::config::EngineConfig;
use crate::context::Context;
use crate::event::{DropReason, Event};
use crate::tcp::{
    FlowKey, IpParams, Subheader, TcpError, TcpFlags, rebuild_packet_into, seq_add, seq_lt,
};

/// A decoded symbol rebuilt into the TCP segment the peer's TCP sent.
struct Rebuilt {
    /// The IP packet for the local TCP.
    packet: Vec<u8>,
    /// Its IP identification.
    ident: u16,
    /// It carries FIN.
    fin: bool,
    /// Its payload length.
    payload_len: usize,
}

/// Rebuilds the segment of a decoded symbol spanning `range` (§IV-B: padding removed, ports
/// from `key`, header and checksum untouched); the IP identification is taken from
/// `ip_ident`, advanced only once the subheader is known good. Built into `packet` (a reused
/// buffer).
fn rebuild(
    key: &FlowKey,
    ip_ident: &mut u16,
    bytes: &[u8],
    range: tcpnc_wire::SeqRange,
    mut packet: Vec<u8>,
) -> Result<Rebuilt, TcpError> {
    let s = Subheader::parse(bytes)?;
    let len = s.unpadded_len(range.start, range.end)?;
    let fin = s.flags().contains(TcpFlags::FIN);
    *ip_ident = ip_ident.wrapping_add(1);
    let ip = IpParams {
        ident: *ip_ident,
        ..IpParams::default()
    };
    rebuild_packet_into(&mut packet, key, &bytes[..len], &ip)?;
    Ok(Rebuilt {
        packet,
        ident: *ip_ident,
        fin,
        payload_len: len - s.header_len(),
    })
}

/// The segment of a delivered symbol again, rebuilt from the decoder's copy with the IP
/// identification `ident` of its first delivery (so the same bytes), queued for the local TCP.
fn redeliver(
    cx: &mut Context<'_>,
    decoded: Option<&[u8]>,
    key: &FlowKey,
    range: tcpnc_wire::SeqRange,
    ident: u16,
    flow: tcpnc_wire::FlowId,
) {
    let Some(bytes) = decoded else {
        return;
    };
    // `rebuild` advances the identification before using it.
    let mut previous = ident.wrapping_sub(1);
    let buf = cx.out.buffer();
    if let Ok(r) = rebuild(key, &mut previous, bytes, range, buf) {
        cx.out.deliver_local(r.packet, Some(flow));
    }
}

/// Redelivery timeout after `attempts` redeliveries: doubled each time (at most 64×).
fn backoff(timeout: Duration, attempts: u32) -> Duration {
    timeout * (1u32 << attempts.min(6))
}

impl ReceiverHalf {
    /// Marks every newly decoded symbol, then delivers the decoded symbols at the in-order
    /// delivery frontier to the local TCP.
    pub(super) fn deliver_decoded(&mut self, cx: &mut Context<'_>) {
        let Some(decoder) = self.decoder.as_mut() else {
            return;
        };
        while let Some((index, _)) = decoder.poll_decoded() {
            if let Some(sym) = self.symbols.get_mut(index)
                && sym.delivery == Delivery::Pending
            {
                sym.delivery = Delivery::Decoded;
            }
        }
        self.deliver_in_order(cx);
    }

    /// Delivers the decoded symbols from the frontier on, in order, advancing the frontier
    /// past them and past those already delivered; stops at the first one not decoded (unless
    /// the local TCP's ack is past it: its bytes reached the TCP another way).
    fn deliver_in_order(&mut self, cx: &mut Context<'_>) {
        let Some(decoder) = self.decoder.as_ref() else {
            return;
        };
        while let Some(sym) = self.symbols.get_mut(self.frontier_index) {
            let covered = self.local_ack.is_some_and(|a| seq_lt(sym.range.end, a));
            match sym.delivery {
                Delivery::Pending if !covered => break,
                Delivery::Decoded => {
                    let bytes = decoder.symbol(self.frontier_index).unwrap_or_default();
                    let buf = cx.out.buffer();
                    match rebuild(&self.deliver_key, &mut self.ip_ident, bytes, sym.range, buf) {
                        Ok(r) => {
                            if r.fin {
                                self.fin_seq = Some(sym.range.end);
                            }
                            let flow = Some(self.data_flow.reversed());
                            deliver_first(cx, sym, r, self.local_ack, flow);
                        }
                        Err(_) => {
                            cx.out.stats.rebuild_errors += 1;
                            cx.out.event(Event::Dropped {
                                flow: Some(self.data_flow.reversed()),
                                reason: DropReason::Rebuild,
                            });
                            sym.delivery = Delivery::Confirmed;
                        }
                    }
                }
                _ => {}
            }
            self.frontier_seq = Some(seq_add(sym.range.end, 1));
            self.frontier_index += 1;
        }
    }

    /// Drops from the decoder the prefix of symbols that are below Base and confirmed (§IV-C),
    /// keeping those a combination that may only be late could still reference
    /// ([`Self::late_floor`]).
    pub(super) fn try_drop(&mut self) {
        let floor = self.late_floor();
        let (Some(decoder), Some(base_seq)) = (self.decoder.as_mut(), self.base_seq) else {
            return;
        };
        let mut cut = decoder.base();
        while let Some(sym) = self.symbols.get(cut) {
            if floor.is_some_and(|f| cut >= f) {
                break;
            }
            if sym.delivery == Delivery::Confirmed && seq_lt(sym.range.end, base_seq) {
                self.dropped_end = Some(seq_add(sym.range.end, 1));
                cut += 1;
            } else {
                break;
            }
        }
        if cut > decoder.base() {
            decoder.drop_below(cut);
            self.symbols.remove_below(cut);
            self.frontier_index = self.frontier_index.max(cut);
        }
    }

    /// The lowest index a combination missing within the unordering length (Ha & Tsuru §3.2:
    /// it may only be late) can reference. The sender's Base moves on with the NC-ACKs, so a
    /// newer frame's Base passes packets that a combination overtaken on the way still
    /// includes; dropped, they would make that combination stale (`Outcome::Stale`) and its
    /// DoF lost, to be repaired although nothing was lost on the path. `None` without
    /// reordering (or with `unordering` off, when the length is 0).
    fn late_floor(&self) -> Option<u64> {
        let floor = self.pids.late_floor(u32::from(self.reorder.length()))?;
        self.unwrap_index(floor)
    }

    /// The local TCP acknowledged up to `ack` with its window right edge at `right_edge`
    /// (its window already scaled; `window_shift` is its scale, which the peer's TCP applies).
    /// Confirms delivered segments; sends a window-update NC-ACK when the window reopens from
    /// below one segment, or when a probe is pending.
    pub fn on_local_ack(
        &mut self,
        cx: &mut Context<'_>,
        ack: u32,
        right_edge: u32,
        window_shift: u8,
    ) {
        let advanced = self.local_ack.is_none_or(|a| seq_lt(a, ack));
        if advanced {
            self.local_ack = Some(ack);
        }
        self.local_right_edge = Some(right_edge);
        self.window_shift = window_shift;
        self.confirm_below(ack);
        self.try_drop();
        if advanced {
            self.redeliver_at(cx, ack);
            // A segment the ack passed without its decoding no longer holds the ones after it.
            self.deliver_in_order(cx);
        }
        let Some(a) = self.ack_seq() else {
            return;
        };
        let reopened = self.last_window_sent.is_some_and(|w| {
            self.usable(w) < self.max_seg && self.usable(self.window(a, cx.config)) >= self.max_seg
        });
        if reopened || self.probe_pending {
            self.probe_pending = false;
            self.send_ack(cx, false, false);
        }
    }

    /// Confirms every delivered symbol ending before `ack`. Symbols are in sequence order, so
    /// the scan stops at the first one that does not end before `ack`, and it starts at
    /// `confirmed_to`, which it moves past the confirmed prefix. Every symbol below
    /// `confirmed_to` ends before the local ACK, so one recorded there later (its bytes reached
    /// the TCP another way) is confirmed as it is delivered (`deliver_first`): nothing below
    /// the prefix waits for a scan.
    fn confirm_below(&mut self, ack: u32) {
        let mut prefix = true;
        for (index, sym) in self.symbols.iter_mut_from(self.confirmed_to) {
            if !seq_lt(sym.range.end, ack) {
                break;
            }
            if matches!(sym.delivery, Delivery::Delivered { .. } | Delivery::Decoded) {
                sym.delivery = Delivery::Confirmed;
            }
            prefix &= sym.delivery == Delivery::Confirmed;
            if prefix {
                self.confirmed_to = index + 1;
            }
        }
    }

    /// What the peer's TCP can use of a window of `w` bytes: its ACKs carry `w >> shift`, so a
    /// window of 1400 bytes at shift 10 reads as 1024, less than a segment. Judged unscaled, such
    /// a window counted as open, the window update when the local TCP really opened was never
    /// sent, and the peer's TCP waited on its persist timer's backoff (12 s in a 100-flow lab run,
    /// docs/lab.md "Real links, stop 16").
    fn usable(&self, w: u32) -> u32 {
        let unit = 1u32 << self.window_shift.min(14);
        w / unit * unit
    }

    /// Earliest redelivery deadline.
    pub fn poll_timeout(&self, cfg: &EngineConfig) -> Option<Duration> {
        self.symbols
            .iter_from(self.confirmed_to)
            .map(|(_, s)| s)
            .filter_map(|s| match s.delivery {
                Delivery::Delivered { last, attempts, .. }
                    if attempts <= cfg.max_redeliveries
                        || Some(s.range.start) == self.local_ack =>
                {
                    Some(last + backoff(cfg.redelivery_timeout, attempts))
                }
                _ => None,
            })
            .min()
    }

    /// Redelivers every segment whose redelivery timeout expired (§IV-C). After
    /// `max_redeliveries` a segment is redelivered only while it is the one the local TCP's ack
    /// asks for (the head), so a segment the NC layer acknowledged is never given up while the
    /// local TCP still needs it.
    pub fn on_timeout(&mut self, cx: &mut Context<'_>) {
        let (now, cfg) = (cx.now, cx.config);
        let flow = self.data_flow.reversed();
        let head = self.local_ack;
        let decoder = self.decoder.as_ref();
        for (index, sym) in self.symbols.iter_mut_from(self.confirmed_to) {
            let is_head = Some(sym.range.start) == head;
            let Delivery::Delivered {
                ident,
                last,
                attempts,
            } = &mut sym.delivery
            else {
                continue;
            };
            if (*attempts > cfg.max_redeliveries && !is_head)
                || *last + backoff(cfg.redelivery_timeout, *attempts) > now
            {
                continue;
            }
            if *attempts == cfg.max_redeliveries && !is_head {
                // Timer-driven redelivery stops; the segment is kept (the NC layer has
                // acknowledged it, nobody else holds it) and is still delivered again when the
                // local TCP's ack reaches it.
                *attempts += 1;
                cx.out.stats.redeliveries_abandoned += 1;
                cx.out.event(Event::Dropped {
                    flow: Some(flow),
                    reason: DropReason::RedeliveryAbandoned,
                });
                continue;
            }
            *attempts = attempts.saturating_add(1);
            *last = now;
            cx.out.stats.redeliveries += 1;
            cx.stats.redeliveries += 1;
            let decoded = decoder.and_then(|d| d.symbol(index));
            redeliver(cx, decoded, &self.deliver_key, sym.range, *ident, flow);
        }
        self.try_drop();
    }
    /// The local TCP's ack advanced to `ack`: if the segment starting there was delivered (more
    /// than a grace time ago) but not accepted — dropped as out of order — deliver it again at
    /// once (§IV-C). Only that one
    /// segment: its acceptance advances the ack again, which redelivers the next, so a gap costs
    /// one extra delivery per segment (a TCP that keeps out-of-order data jumps its ack instead).
    fn redeliver_at(&mut self, cx: &mut Context<'_>, ack: u32) {
        let (now, cfg) = (cx.now, cx.config);
        // A segment handed over within the last quarter timeout is probably still queued
        // toward the local TCP (it processes packets in order): leave it to the timer.
        let grace = cfg.redelivery_timeout / 4;
        let flow = self.data_flow.reversed();
        let next = self
            .symbols
            .iter_mut_from(0)
            .find(|(_, s)| !seq_lt(s.range.end, ack));
        if let Some((index, sym)) = next
            && sym.range.start == ack
            && let Delivery::Delivered { ident, last, .. } = &mut sym.delivery
            && *last + grace <= now
        {
            *last = now;
            cx.out.stats.redeliveries += 1;
            cx.stats.redeliveries += 1;
            let decoded = self.decoder.as_ref().and_then(|d| d.symbol(index));
            redeliver(cx, decoded, &self.deliver_key, sym.range, *ident, flow);
        }
    }
}

/// First delivery of a rebuilt segment: counted and queued for the local TCP; marked for
/// redelivery unless the local TCP's `local_ack` already covers it.
fn deliver_first(
    cx: &mut Context<'_>,
    sym: &mut Symbol,
    rebuilt: Rebuilt,
    local_ack: Option<u32>,
    flow: Option<tcpnc_wire::FlowId>,
) {
    cx.stats.segments_delivered += 1;
    cx.stats.bytes_delivered += rebuilt.payload_len as u64;
    cx.out.stats.segments_delivered += 1;
    let already = local_ack.is_some_and(|a| seq_lt(sym.range.end, a));
    sym.delivery = if already {
        Delivery::Confirmed
    } else {
        Delivery::Delivered {
            ident: rebuilt.ident,
            last: cx.now,
            attempts: 0,
        }
    };
    cx.out.deliver_local(rebuilt.packet, flow);
}
