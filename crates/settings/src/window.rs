//! How the coding window is sized: a fixed W, or Parejiya & Desai's variable bucket size
//! (VBNC, §II-B) with W as its maximum. The controller itself is `tcpnc_proto::vbnc`.

use crate::named_enum;

named_enum! {
    /// How many packets a combination spans (the coding window, Sundararajan et al. §III-C).
    pub enum WindowPolicy {
        /// Always the configured W (the implementation paper's scheme).
        Fixed = "fixed",
        /// VBNC (Parejiya & Desai §II-B): starts at 1, grows with ACKs up to the local TCP's
        /// transmission opportunity, shrinks with its window on loss, halves while the round
        /// trip exceeds 100 ms; never above W (docs/engine.md).
        Vbnc = "vbnc",
    }
}

impl Default for WindowPolicy {
    /// Fixed: VBNC is a streaming policy; bulk transfers gain nothing from a smaller window
    /// (docs/streaming.md).
    fn default() -> Self {
        WindowPolicy::Fixed
    }
}

impl WindowPolicy {
    /// Whether the window follows the VBNC controller.
    pub fn is_variable(self) -> bool {
        matches!(self, WindowPolicy::Vbnc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        assert_eq!("vbnc".parse(), Ok(WindowPolicy::Vbnc));
        assert_eq!(WindowPolicy::default().name(), "fixed");
        assert!(WindowPolicy::Vbnc.is_variable());
        assert!("bucket".parse::<WindowPolicy>().is_err());
    }
}
