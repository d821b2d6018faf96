//! How the lab's gateways protect their tunnel ([`TunnelMode`], `tcpnc lab --tunnel`): the TUN
//! MTU that fits the envelope, and fresh keys for both gateways of a session.

use std::path::{Path, PathBuf};

use serde::Serialize;
use tcpnc_tunnel::Key;
use tcpnc_tunnel::outer::{INTEGRITY_OVERHEAD, TRANSPORT_OVERHEAD};

use crate::error::{LabError, Result};
use crate::session::Lab;

/// TUN MTU: the path's 1500 B less the outer IPv4/UDP header (28 B), the tunnel envelope
/// (32 B with keys, 5 B insecure) and the BYPASS preamble (2 B), so that an uncoded packet
/// (plain mode, SYN, non-TCP) still fits one datagram: 1438 B secure, 1465 B insecure. In nc
/// mode the gateways' MSS clamp (the NC header at n = W) lowers TCP's MSS further.
pub fn tun_mtu(tunnel: TunnelMode) -> u16 {
    let envelope = match tunnel {
        TunnelMode::Secure => TRANSPORT_OVERHEAD,
        TunnelMode::Insecure => INTEGRITY_OVERHEAD,
    };
    (1500 - 28 - 2 - envelope) as u16
}

/// How the lab's two gateways protect their tunnel.
///
/// The lab defaults to [`TunnelMode::Secure`]: it runs what an operator deploys (keys,
/// encrypted and authenticated datagrams), and at the lab's rates the AEAD costs nothing
/// measurable (`docs/lab.md`); `insecure` (CRC-32C only) remains for comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TunnelMode {
    /// Fresh Curve25519 keys for both gateways on every session; Noise IKpsk2 sessions.
    #[default]
    Secure,
    /// `insecure = true`: integrity checks only.
    Insecure,
}

/// With keys: a fresh private key per gateway, written (mode 0600) to the scratch directory,
/// and the two public keys.
pub(crate) fn session_keys(lab: &Lab) -> Result<Option<([PathBuf; 2], [Key; 2])>> {
    if lab.tunnel == TunnelMode::Insecure {
        return Ok(None);
    }
    let key = |side: &str| -> Result<(PathBuf, Key)> {
        let private = Key::generate().map_err(|e| LabError::Invalid(e.to_string()))?;
        let public = private
            .public()
            .map_err(|e| LabError::Invalid(e.to_string()))?;
        let file = lab.file(&format!("{side}-gateway"), "key");
        write_private(&file, &private)?;
        Ok((file, public))
    };
    let (cf, cp) = key("client")?;
    let (sf, sp) = key("server")?;
    Ok(Some(([cf, sf], [cp, sp])))
}

fn write_private(file: &Path, key: &Key) -> Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
        .map_err(|e| LabError::file(file, e))?;
    writeln!(f, "{key}").map_err(|e| LabError::file(file, e))
}
