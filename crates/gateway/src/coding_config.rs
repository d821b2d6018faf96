//! `[coding]` of the gateway configuration: [`RawCoding`] as written and [`Coding`] validated
//! (mode, buffers, seed and every policy key of the shared vocabulary, `tcpnc-settings`).

use serde::{Deserialize, Serialize};
use tcpnc_proto::settings::{CodingMode, Policies, PolicyOverrides};

use crate::config::{ConfigError, Interface};

/// The gateway's buffers per flow when `[coding]` does not size them. A gateway carries
/// fast paths, so they are larger than the engine's own defaults (`tcpnc_proto::Limits`, what
/// the simulator runs): the coding buffer holds a flow's packets not yet seen by the peer, the
/// decoding buffer bounds the window advertised to the sending TCP (Sundararajan et al.
/// §IV-D). Bytes bind the decoding buffer before packets do (4 MiB is 3057 segments of 1372
/// bytes): the packet bound also counts the delivered segments the peer has not yet released
/// (Base moves a round trip later), and where it binds the advertised window collapses
/// (docs/speed.md, "The decoding buffer's default").
pub const DEFAULT_BUFFER_PACKETS: usize = 1024;
/// See [`DEFAULT_BUFFER_PACKETS`].
pub const DEFAULT_BUFFER_BYTES: usize = 4 << 20;
/// See [`DEFAULT_BUFFER_PACKETS`].
pub const DEFAULT_DECODING_BUFFER_PACKETS: usize = 4096;
/// See [`DEFAULT_BUFFER_PACKETS`].
pub const DEFAULT_DECODING_BUFFER_BYTES: usize = 4 << 20;

/// `[coding]` as written.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct RawCoding {
    /// `"nc"` or `"off"`.
    pub mode: Option<String>,
    /// Coding buffer limit in packets per flow.
    pub buffer_packets: Option<usize>,
    /// Coding buffer limit in bytes per flow.
    pub buffer_bytes: Option<usize>,
    /// Decoding buffer limit per flow, packets (undecoded rows and tracked symbols).
    pub decoding_buffer_packets: Option<usize>,
    /// Decoding buffer limit per flow, bytes of sequence space: bounds the window advertised
    /// to the peer's TCP (Sundararajan et al. §IV-D).
    pub decoding_buffer_bytes: Option<usize>,
    /// Base seed for the engines' coefficient generators.
    pub seed: Option<u64>,
    /// Every other key: the policies ([`PolicyOverrides::KEYS`]), checked one by one so an
    /// error names its key.
    #[serde(flatten)]
    pub policies: toml::Table,
}

/// A validated `[coding]`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Coding {
    /// On or off.
    pub mode: CodingMode,
    /// Every coding policy: the product's set ([`Policies::product`]) with the keys the file
    /// gives.
    pub policies: Policies,
    /// Coding buffer limit (packets).
    pub buffer_packets: usize,
    /// Coding buffer limit (bytes).
    pub buffer_bytes: usize,
    /// Decoding buffer limit per flow (packets).
    pub decoding_buffer_packets: usize,
    /// Decoding buffer limit per flow (bytes).
    pub decoding_buffer_bytes: usize,
    /// Base seed; peer `i` uses `seed + i`.
    pub seed: u64,
}

impl Coding {
    /// The buffers per flow, as the stats file reports them.
    pub fn buffers(&self) -> crate::stats::Buffers {
        crate::stats::Buffers {
            buffer_packets: self.buffer_packets,
            buffer_bytes: self.buffer_bytes,
            decoding_buffer_packets: self.decoding_buffer_packets,
            decoding_buffer_bytes: self.decoding_buffer_bytes,
        }
    }
}

impl RawCoding {
    /// `[coding]` with `mode` and the policy keys `policies` gives (the rest: defaults).
    pub fn new(mode: CodingMode, policies: &PolicyOverrides, seed: Option<u64>) -> RawCoding {
        RawCoding {
            mode: Some(mode.name().to_string()),
            buffer_packets: None,
            buffer_bytes: None,
            decoding_buffer_packets: None,
            decoding_buffer_bytes: None,
            seed,
            policies: toml::Table::try_from(policies).unwrap_or_default(),
        }
    }

    pub(crate) fn validate(self, iface: &Interface) -> Result<Coding, ConfigError> {
        let mode = match self.mode.as_deref() {
            None => CodingMode::default(),
            Some(m) => m.parse().map_err(|e: tcpnc_proto::settings::UnknownName| {
                ConfigError::invalid("coding.mode", e.to_string())
            })?,
        };
        let policies = Policies::product().with(&policy_overrides(self.policies)?);
        if let Err(e) = policies.validate() {
            let key = match e {
                tcpnc_proto::settings::PolicyError::Window(_) => "coding.window",
                tcpnc_proto::settings::PolicyError::Redundancy(_) => "coding.redundancy",
                tcpnc_proto::settings::PolicyError::PbBlock => "coding.pb_block",
            };
            return Err(ConfigError::invalid(key, e.to_string()));
        }
        let (window, mtu) = (policies.window, iface.mtu);
        let buffer_packets = self.buffer_packets.unwrap_or(DEFAULT_BUFFER_PACKETS);
        let buffer_bytes = self.buffer_bytes.unwrap_or(DEFAULT_BUFFER_BYTES);
        fits_one_window("buffer", (buffer_packets, buffer_bytes), window, mtu)?;
        let decoding_buffer_packets = self
            .decoding_buffer_packets
            .unwrap_or(DEFAULT_DECODING_BUFFER_PACKETS);
        let decoding_buffer_bytes = self
            .decoding_buffer_bytes
            .unwrap_or(DEFAULT_DECODING_BUFFER_BYTES);
        let decoding = (decoding_buffer_packets, decoding_buffer_bytes);
        fits_one_window("decoding_buffer", decoding, window, mtu)?;
        Ok(Coding {
            mode,
            policies,
            buffer_packets,
            buffer_bytes,
            decoding_buffer_packets,
            decoding_buffer_bytes,
            seed: self.seed.unwrap_or(0x7c9_2c0de),
        })
    }
}

/// `coding.{key}_packets` and `coding.{key}_bytes` checked to hold one coding window of
/// `window` packets of `mtu` bytes.
fn fits_one_window(
    key: &str,
    (packets, bytes): (usize, usize),
    window: u16,
    mtu: u16,
) -> Result<(), ConfigError> {
    if packets < usize::from(window) {
        return Err(ConfigError::invalid(
            format!("coding.{key}_packets"),
            format!("{packets} is smaller than the coding window {window}"),
        ));
    }
    if bytes < usize::from(window) * usize::from(mtu) {
        return Err(ConfigError::invalid(
            format!("coding.{key}_bytes"),
            format!("{bytes} cannot hold one window ({window} x mtu {mtu} bytes)"),
        ));
    }
    Ok(())
}

/// The policy keys of `[coding]`: each key is read on its own first, so that an unknown key or
/// a bad value is reported with its name.
fn policy_overrides(table: toml::Table) -> Result<PolicyOverrides, ConfigError> {
    for (key, value) in &table {
        if !PolicyOverrides::KEYS.contains(&key.as_str()) {
            return Err(ConfigError::Syntax(format!(
                "unknown key `coding.{key}` (expected one of mode, buffer_packets, buffer_bytes, decoding_buffer_packets, decoding_buffer_bytes, seed, {})",
                PolicyOverrides::KEYS.join(", ")
            )));
        }
        let one = toml::Table::from_iter([(key.clone(), value.clone())]);
        PolicyOverrides::deserialize(one)
            .map_err(|e| ConfigError::invalid(format!("coding.{key}"), e.message()))?;
    }
    PolicyOverrides::deserialize(table).map_err(|e| ConfigError::Syntax(e.to_string()))
}
