//! Conversions between the TCP layer's directed [`FlowKey`] and the wire's [`FlowId`] (both name
//! a data direction: source and destination address and port).

use std::net::IpAddr;

use tcpnc_wire::{FlowAddrs, FlowId};

use crate::tcp::{Endpoint, FlowKey};

/// The wire identity of a directed flow; `None` if the two addresses are of different families.
pub fn flow_id(key: &FlowKey) -> Option<FlowId> {
    match (key.src.addr, key.dst.addr) {
        (IpAddr::V4(s), IpAddr::V4(d)) => Some(FlowId::v4(s, key.src.port, d, key.dst.port)),
        (IpAddr::V6(s), IpAddr::V6(d)) => Some(FlowId::v6(s, key.src.port, d, key.dst.port)),
        _ => None,
    }
}

/// The directed flow named by a wire identity.
pub fn flow_key(id: &FlowId) -> FlowKey {
    let (src, dst) = match id.addrs {
        FlowAddrs::V4 { src, dst } => (IpAddr::V4(src), IpAddr::V4(dst)),
        FlowAddrs::V6 { src, dst } => (IpAddr::V6(src), IpAddr::V6(dst)),
    };
    FlowKey::new(
        Endpoint::new(src, id.src_port),
        Endpoint::new(dst, id.dst_port),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn round_trip() {
        let id = FlowId::v4(
            Ipv4Addr::new(10, 0, 0, 1),
            1234,
            Ipv4Addr::new(10, 0, 0, 2),
            80,
        );
        assert_eq!(flow_id(&flow_key(&id)), Some(id));
        let id6 = FlowId::v6(Ipv6Addr::LOCALHOST, 1, Ipv6Addr::UNSPECIFIED, 2);
        assert_eq!(flow_id(&flow_key(&id6)), Some(id6));
        let mixed = FlowKey::new(
            Endpoint::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 1),
            Endpoint::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 2),
        );
        assert_eq!(flow_id(&mixed), None);
    }
}
