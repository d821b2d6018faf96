//! Settings of a run around the engine: what carries the traffic and which TCP sends it.

use crate::named_enum;

named_enum! {
    /// Whether a gateway codes (`[coding] mode` of `tcpnc up`).
    pub enum CodingMode {
        /// TCP/NC.
        Nc = "nc",
        /// The same tunnel, every packet carried uncoded in a BYPASS frame (the baseline).
        Off = "off",
    }
}

impl Default for CodingMode {
    /// A gateway codes unless told otherwise.
    fn default() -> Self {
        CodingMode::Nc
    }
}

named_enum! {
    /// How a measured transfer crosses the path (`tcpnc sim`, `tcpnc lab`, experiment plans).
    pub enum PathMode {
        /// Uncoded: in the lab through the gateways' tunnel with coding off (mode `off`), in the
        /// simulator IP packets cross the link unchanged.
        Plain = "plain",
        /// TCP/NC on both sides of the lossy path.
        Nc = "nc",
        /// Lab only: routed through the emulator namespace without tunnel and impairment.
        Direct = "direct",
    }
}

impl PathMode {
    /// The gateway's coding mode for this path mode (`None`: no gateway runs).
    pub const fn gateway_mode(self) -> Option<CodingMode> {
        match self {
            PathMode::Plain => Some(CodingMode::Off),
            PathMode::Nc => Some(CodingMode::Nc),
            PathMode::Direct => None,
        }
    }
}

named_enum! {
    /// TCP congestion control of the sending endpoint.
    pub enum CongestionControl {
        /// Reno / NewReno (RFC 5681, RFC 6582).
        Reno = "reno",
        /// CUBIC (RFC 9438).
        Cubic = "cubic",
        /// BBR (lab only: the Linux kernel's; smoltcp has none).
        Bbr = "bbr",
        /// No congestion control, the receiver window only (simulator only).
        None = "none",
    }
}

impl CongestionControl {
    /// Whether the simulator's TCP (smoltcp) has it.
    pub const fn in_simulator(self) -> bool {
        !matches!(self, CongestionControl::Bbr)
    }

    /// Whether the Linux kernel has it (set per socket with `TCP_CONGESTION`).
    pub const fn in_kernel(self) -> bool {
        !matches!(self, CongestionControl::None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_map_to_gateways() {
        assert_eq!(PathMode::Plain.gateway_mode(), Some(CodingMode::Off));
        assert_eq!(PathMode::Nc.gateway_mode(), Some(CodingMode::Nc));
        assert_eq!(PathMode::Direct.gateway_mode(), None);
        assert!(!CongestionControl::Bbr.in_simulator());
        assert!(!CongestionControl::None.in_kernel());
        assert_eq!("bbr".parse(), Ok(CongestionControl::Bbr));
    }
}
