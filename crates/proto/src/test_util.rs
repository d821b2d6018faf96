//! Helpers shared by the crate's unit tests.

use std::net::Ipv4Addr;

use tcpnc_wire::{AckRepr, FlowId};

/// An NC-ACK of a fixed IPv4 flow with the fields the sender's policies read; the rest zero.
pub fn nc_ack(ack: u32, pid_echo: u32, loss_bitmap: u32, lost_dof: u16) -> AckRepr {
    AckRepr {
        flow: FlowId::v4(Ipv4Addr::LOCALHOST, 1, Ipv4Addr::LOCALHOST, 2),
        ack,
        window: 0,
        pid_echo,
        loss_bitmap,
        lost_dof,
        unordering: 0,
        redundant: false,
        dependent: None,
        pause: false,
        update: false,
    }
}
