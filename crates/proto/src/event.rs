//! Events reported through [`Engine::poll_event`](crate::Engine::poll_event).

use tcpnc_wire::FlowId;

/// Why a flow was removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CloseReason {
    /// Both directions finished and the linger time passed.
    Finished,
    /// A RST was seen (from the local TCP or from the peer).
    Reset,
    /// No packet for `idle_timeout`.
    Idle,
}

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// A local packet was not parseable IP.
    MalformedLocal,
    /// A datagram was not a valid tunnel frame.
    MalformedDatagram,
    /// The coding buffer was full (§III-D).
    CodingBufferFull,
    /// The decoder refused a combination (row or span limit, oversize payload).
    DecodingBufferFull,
    /// A queue was full.
    QueueFull,
    /// A decoded symbol did not rebuild into a TCP segment.
    Rebuild,
    /// A delivered segment was never acknowledged by the local TCP after every redelivery.
    RedeliveryAbandoned,
}

/// Something the embedding program may want to know.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Event {
    /// A flow entered the table (identity local → remote).
    FlowOpened {
        /// The flow.
        flow: FlowId,
    },
    /// A flow left the table.
    FlowClosed {
        /// The flow.
        flow: FlowId,
        /// Why.
        reason: CloseReason,
    },
    /// A duplicate TCP ACK was given to the local sender: a loss the code could not mask
    /// (§V-B, the token argument).
    LossVisible {
        /// The flow.
        flow: FlowId,
        /// The repeated ack number.
        ack: u32,
    },
    /// A packet was dropped.
    Dropped {
        /// The flow, when known.
        flow: Option<FlowId>,
        /// Why.
        reason: DropReason,
    },
    /// A KEEPALIVE reply arrived (the gateway matches the nonce).
    KeepaliveReply {
        /// The nonce echoed.
        nonce: u64,
    },
}
