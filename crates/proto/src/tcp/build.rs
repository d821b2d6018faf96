//! Synthesis of TCP segments toward a local TCP, chiefly the pure ACKs that turn NC-ACKs into
//! ordinary TCP ACKs for the sending kernel (§II-C: "delivers regular TCP ACKs back to the sender
//! TCP").

use super::TcpError;
use super::flow_key::FlowKey;
use super::ip::{IpParams, ip_header_len, write_ip_header};
use super::segment::{TCP_HEADER_MAX, TCP_HEADER_MIN, TcpFlags};
use super::subheader::subheader_checksum;

/// The fields of a synthesised TCP header (ports come from the flow, the checksum is computed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentFields {
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Control bits.
    pub flags: TcpFlags,
    /// Window field as it goes on the wire (already right-shifted by the negotiated scale).
    pub window: u16,
    /// Urgent pointer.
    pub urgent: u16,
}

/// Write a whole IP packet carrying a TCP segment on `flow` (source to destination) into `out`
/// (cleared first), with correct IP header checksum (IPv4) and TCP checksum. `options` must be a
/// multiple of 4 bytes, at most 40.
pub fn build_segment_into(
    out: &mut Vec<u8>,
    flow: &FlowKey,
    fields: &SegmentFields,
    options: &[u8],
    payload: &[u8],
    ip: &IpParams,
) -> Result<(), TcpError> {
    let hlen = TCP_HEADER_MIN + options.len();
    if !options.len().is_multiple_of(4) || hlen > TCP_HEADER_MAX {
        return Err(TcpError::BadOptionsLength(options.len()));
    }
    out.clear();
    out.reserve(ip_header_len(flow.src.addr) + hlen + payload.len());
    write_ip_header(out, flow.src.addr, flow.dst.addr, hlen + payload.len(), ip)?;
    out.extend_from_slice(&flow.port_bytes());
    let sub_start = out.len();
    out.extend_from_slice(&fields.seq.to_be_bytes());
    out.extend_from_slice(&fields.ack.to_be_bytes());
    out.extend_from_slice(&[((hlen / 4) as u8) << 4, fields.flags.bits()]);
    out.extend_from_slice(&fields.window.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&fields.urgent.to_be_bytes());
    out.extend_from_slice(options);
    out.extend_from_slice(payload);
    let c = subheader_checksum(
        flow.src.addr,
        flow.dst.addr,
        flow.port_bytes(),
        &out[sub_start..],
    );
    out[sub_start + 12..sub_start + 14].copy_from_slice(&c.to_be_bytes());
    Ok(())
}

/// [`build_segment_into`] into a new vector.
pub fn build_segment(
    flow: &FlowKey,
    fields: &SegmentFields,
    options: &[u8],
    payload: &[u8],
    ip: &IpParams,
) -> Result<Vec<u8>, TcpError> {
    let mut out = Vec::new();
    build_segment_into(&mut out, flow, fields, options, payload, ip)?;
    Ok(out)
}

/// A pure ACK (flags ACK only, no options, no payload) on `flow`: `flow.src` is the side the ACK
/// claims to come from (the remote peer), `flow.dst` the local TCP it is delivered to. `window` is
/// the on-wire (scaled) value.
pub fn build_ack(
    flow: &FlowKey,
    seq: u32,
    ack: u32,
    window: u16,
    ip: &IpParams,
) -> Result<Vec<u8>, TcpError> {
    let mut out = Vec::new();
    build_ack_into(&mut out, flow, seq, ack, window, ip)?;
    Ok(out)
}

/// [`build_ack`] into `out` (replaced; no allocation when its capacity suffices).
pub fn build_ack_into(
    out: &mut Vec<u8>,
    flow: &FlowKey,
    seq: u32,
    ack: u32,
    window: u16,
    ip: &IpParams,
) -> Result<(), TcpError> {
    let fields = SegmentFields {
        seq,
        ack,
        flags: TcpFlags::ACK,
        window,
        urgent: 0,
    };
    build_segment_into(out, flow, &fields, &[], &[], ip)
}
