//! `tcpnc genkey` and `tcpnc pubkey`: Curve25519 keys for the tunnel, printed as WireGuard's
//! `wg genkey` / `wg pubkey` print them (base64). Key handling lives in `tcpnc-tunnel`.

use std::io::{Read, Write};

use anyhow::{Context, Result};
use tcpnc_tunnel::Key;

/// Prints a new private key (for `private_key`, or a `preshared_key`).
pub fn genkey() -> Result<()> {
    let key = Key::generate()?;
    writeln!(std::io::stdout(), "{key}")?;
    Ok(())
}

/// Reads a private key on stdin and prints its public key (for the peer's `public_key`).
pub fn pubkey() -> Result<()> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("reading the private key from stdin")?;
    let private: Key = text.parse().context("stdin")?;
    writeln!(std::io::stdout(), "{}", private.public()?)?;
    Ok(())
}
