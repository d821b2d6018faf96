//! Which received combinations the receiver half answers with an NC-ACK: the rule
//! ([`AckPolicy`], Sundararajan et al. §IV-A; Mitsuzumi et al. §III) is a setting, defined with
//! the other policies in `tcpnc-settings`.

pub use tcpnc_settings::{AckDecision, AckPolicy};
