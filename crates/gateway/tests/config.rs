//! Config parsing and every validation error.

use tcpnc_gateway::config::{Config, ConfigError};
use tcpnc_gateway::security::{CipherSetting, Security};
use tcpnc_proto::settings::{
    CodingMode as Mode, CodingScheme as Scheme, CoefficientTransport as Coefficients,
    RedundancyPolicy, RepairPolicy as Repair,
};

/// The example from docs/gateway.md.
const EXAMPLE: &str = r#"
[interface]
name = "tcpnc0"
address = "10.77.0.1/24"
mtu = 1400
listen = "192.168.50.1:51900"
path_mtu = 1500
stats_file = "/run/tcpnc/tcpnc0.json"
private_key = "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo="

[coding]
mode = "nc"
window = 16
redundancy = 1.25
scheme = "systematic"
coefficients = "explicit"
repair = "off"
buffer_packets = 256
buffer_bytes = 1048576
seed = 7

[[peer]]
name = "right"
endpoint = "192.168.50.2:51900"
allowed_ips = ["10.77.0.2/32", "10.88.0.0/16"]
keepalive_secs = 25
public_key = "3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08="
"#;

fn with(edit: impl Fn(&str) -> String) -> Result<Config, ConfigError> {
    Config::parse(&edit(EXAMPLE))
}

fn invalid(text: &str) -> (String, String) {
    match Config::parse(text) {
        Err(ConfigError::Invalid { key, reason }) => (key, reason),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

fn replaced(from: &str, to: &str) -> String {
    assert!(EXAMPLE.contains(from), "{from}");
    EXAMPLE.replace(from, to)
}

#[test]
fn example_parses() {
    let c = Config::parse(EXAMPLE).unwrap();
    assert_eq!(c.interface.name, "tcpnc0");
    assert_eq!(c.interface.address.to_string(), "10.77.0.1/24");
    assert_eq!(c.interface.mtu, 1400);
    assert_eq!(c.interface.listen.to_string(), "192.168.50.1:51900");
    assert!(c.interface.routes);
    assert_eq!(c.coding.mode, Mode::Nc);
    assert_eq!(c.coding.policies.window, 16);
    assert_eq!(c.coding.policies.redundancy, RedundancyPolicy::Fixed(1.25));
    assert_eq!(c.coding.policies.scheme, Scheme::Systematic);
    assert_eq!(c.coding.policies.coefficients, Coefficients::Explicit);
    assert_eq!(c.coding.policies.repair, Repair::Off);
    assert_eq!(c.coding.seed, 7);
    assert_eq!(c.peers.len(), 1);
    assert_eq!(c.peers[0].name, "right");
    assert_eq!(c.peers[0].allowed_ips.len(), 2);
    assert_eq!(c.peers[0].keepalive_secs, 25);
    assert_eq!(
        c.tunnel_payload(),
        1500 - 28 - 32,
        "outer IP/UDP and the transport envelope"
    );
}

#[test]
fn defaults() {
    let c = Config::parse(
        r#"
        [interface]
        name = "t0"
        address = "10.0.0.1/24"
        listen = "127.0.0.1:5000"
        insecure = true
        [[peer]]
        endpoint = "127.0.0.1:5001"
        allowed_ips = ["10.0.0.2/32"]
        "#,
    )
    .unwrap();
    assert_eq!(c.interface.mtu, 1400);
    assert_eq!(c.interface.stats_file.to_str(), Some("/run/tcpnc/t0.json"));
    assert_eq!(c.coding.mode, Mode::Nc);
    assert_eq!(c.coding.policies.repair, Repair::Deficit);
    assert_eq!(c.coding.policies.redundancy, RedundancyPolicy::adaptive());
    assert_eq!(c.coding.policies.coefficients, Coefficients::Seeded);
    assert_eq!(c.coding.policies.window, 12);
    assert_eq!(c.coding.policies, tcpnc_proto::Policies::product());
    assert_eq!(c.peers[0].name, "peer0");
    assert_eq!(c.peers[0].keepalive_secs, 0);
    assert!(c.interface.tun_offload && c.interface.udp_gso && c.interface.udp_gro);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert_eq!(c.interface.workers, cores);
    assert_eq!(
        c.interface.workers,
        tcpnc_gateway::config::default_workers()
    );
}

/// `workers` shards the engines over that many threads; it must be a number.
#[test]
fn workers_key() {
    let three = with(|_| replaced("mtu = 1400\n", "mtu = 1400\nworkers = 3\n")).unwrap();
    assert_eq!(three.interface.workers, 3);
    assert!(with(|_| replaced("mtu = 1400\n", "mtu = 1400\nworkers = \"all\"\n")).is_err());
}

/// `tun_queues` asks for that many TUN queues (default one); it must be a number.
#[test]
fn tun_queues_key() {
    let one = with(|s| s.to_string()).unwrap();
    assert_eq!(one.interface.tun_queues, 1);
    let two = with(|_| replaced("mtu = 1400\n", "mtu = 1400\ntun_queues = 2\n")).unwrap();
    assert_eq!(two.interface.tun_queues, 2);
    assert!(with(|_| replaced("mtu = 1400\n", "mtu = 1400\ntun_queues = \"2\"\n")).is_err());
}

/// `udp_gso` turns UDP GSO sends off; it must be a boolean.
#[test]
fn udp_gso_switch() {
    let off = with(|_| replaced("mtu = 1400\n", "mtu = 1400\nudp_gso = false\n")).unwrap();
    assert!(!off.interface.udp_gso);
    assert!(with(|_| replaced("mtu = 1400\n", "mtu = 1400\nudp_gso = \"yes\"\n")).is_err());
}

/// `udp_gro` turns UDP GRO receives off; it must be a boolean.
#[test]
fn udp_gro_switch() {
    let off = with(|_| replaced("mtu = 1400\n", "mtu = 1400\nudp_gro = false\n")).unwrap();
    assert!(!off.interface.udp_gro);
    let on = with(|_| replaced("mtu = 1400\n", "mtu = 1400\nudp_gro = true\n")).unwrap();
    assert!(on.interface.udp_gro);
    assert!(with(|_| replaced("mtu = 1400\n", "mtu = 1400\nudp_gro = 1\n")).is_err());
}

#[test]
fn unknown_keys_and_types_are_syntax_errors() {
    for text in [
        replaced("mtu = 1400", "mtu = 1400\nmtuu = 1"),
        replaced("window = 16", "window = 16\nwindw = 1"),
        replaced("keepalive_secs = 25", "keepalive_secs = 25\nkey = \"x\""),
        replaced("[coding]", "[codng]"),
        replaced("mtu = 1400", "mtu = \"big\""),
        "not toml at all [".to_string(),
    ] {
        let e = Config::parse(&text).unwrap_err();
        assert!(matches!(e, ConfigError::Syntax(_)), "{e:?} for {text}");
    }
    let e = Config::parse(&replaced("[coding]", "[codng]")).unwrap_err();
    assert!(e.to_string().contains("codng"), "{e}");
}

/// Every validation error: (text of the example, its replacement, expected key, phrase in the
/// reason).
#[rustfmt::skip]
const VALIDATION_CASES: &[(&str, &str, &str, &str)] = &[
    (r#"name = "tcpnc0""#, r#"name = """#, "interface.name", "1 to 15"),
    (r#"name = "tcpnc0""#, r#"name = "averyveryverylongname""#, "interface.name", "1 to 15"),
    (r#"name = "tcpnc0""#, r#"name = "a/b""#, "interface.name", "must not contain"),
    ("10.77.0.1/24", "10.77.0.1", "interface.address", "ADDRESS/PREFIX"),
    ("10.77.0.1/24", "10.77.0.300/24", "interface.address", "invalid IP address"),
    ("10.77.0.1/24", "10.77.0.1/40", "interface.address", "prefix length"),
    ("10.77.0.1/24", "10.77.0.0/24", "interface.address", "network address"),
    ("mtu = 1400", "mtu = 500", "interface.mtu", "below the minimum"),
    ("192.168.50.1:51900", "192.168.50.1", "interface.listen", "not IP:PORT"),
    ("path_mtu = 1500", "path_mtu = 100", "interface.path_mtu", "below the minimum"),
    ("path_mtu = 1500", "path_mtu = 1500\nqueue_packets = 0", "interface.queue_packets", "at least 1"),
    ("path_mtu = 1500", "path_mtu = 1500\nworkers = 0", "interface.workers", "outside 1..=256"),
    ("path_mtu = 1500", "path_mtu = 1500\nworkers = 257", "interface.workers", "outside 1..=256"),
    ("path_mtu = 1500", "path_mtu = 1500\ntun_queues = 0", "interface.tun_queues", "outside 1..=256"),
    ("path_mtu = 1500", "path_mtu = 1500\ntun_queues = 300", "interface.tun_queues", "outside 1..=256"),
    (r#"stats_file = "/run/tcpnc/tcpnc0.json""#, r#"stats_file = "  ""#, "interface.stats_file", "empty"),
    (r#"mode = "nc""#, r#"mode = "on""#, "coding.mode", "not one of"),
    (r#"scheme = "systematic""#, r#"scheme = "sparse""#, "coding.scheme", "not one of"),
    (r#"coefficients = "explicit""#, r#"coefficients = "implicit""#, "coding.coefficients", "not one of"),
    (r#"repair = "off""#, r#"repair = "always""#, "coding.repair", "not one of"),
    ("window = 16", "window = 16\nack_rule = \"all\"", "coding.ack_rule", "not one of"),
    ("window = 16", "window = 0", "coding.window", "outside 1..=255"),
    ("window = 16", "window = 256", "coding.window", "outside 1..=255"),
    ("redundancy = 1.25", "redundancy = \"high\"", "coding.redundancy", "neither a number"),
    ("redundancy = 1.25", "redundancy = 0.9", "coding.redundancy", "outside [1, 16]"),
    ("redundancy = 1.25", "redundancy = nan", "coding.redundancy", "outside [1, 16]"),
    ("redundancy = 1.25", "redundancy = 17.0", "coding.redundancy", "outside [1, 16]"),
    ("buffer_packets = 256", "buffer_packets = 8", "coding.buffer_packets", "smaller than the coding window"),
    ("buffer_bytes = 1048576", "buffer_bytes = 1000", "coding.buffer_bytes", "cannot hold one window"),
    ("buffer_bytes = 1048576", "buffer_bytes = 1048576\ndecoding_buffer_packets = 8", "coding.decoding_buffer_packets", "smaller than the coding window"),
    ("buffer_bytes = 1048576", "buffer_bytes = 1048576\ndecoding_buffer_bytes = 1000", "coding.decoding_buffer_bytes", "cannot hold one window"),
    ("192.168.50.2:51900", "peer.example:51900", "peer[0].endpoint", "not IP:PORT"),
    ("192.168.50.2:51900", "192.168.50.2:0", "peer[0].endpoint", "not a reachable address"),
    ("192.168.50.2:51900", "[fd00::2]:51900", "peer[0].endpoint", "another address family"),
    (r#"["10.77.0.2/32", "10.88.0.0/16"]"#, "[]", "peer[0].allowed_ips", "at least one"),
    ("10.88.0.0/16", "10.88.0.0/", "peer[0].allowed_ips[1]", "prefix length"),
    ("10.88.0.0/16", "10.88.0.1/16", "peer[0].allowed_ips[1]", "host bits"),
    ("10.88.0.0/16", "10.77.0.0/24", "peer[0].allowed_ips[1]", "same peer"),
    ("10.88.0.0/16", "192.168.0.0/16", "peer[0].allowed_ips[1]", "would loop"),
];

#[test]
fn every_validation_error_names_key_and_reason() {
    for &(from, to, key, phrase) in VALIDATION_CASES {
        let (k, reason) = invalid(&replaced(from, to));
        assert_eq!(k, key, "reason was: {reason}");
        assert!(
            reason.contains(phrase),
            "{key}: '{reason}' lacks '{phrase}'"
        );
    }
}

#[test]
fn peer_level_errors() {
    let second = |allowed: &str, endpoint: &str| {
        format!(
            "{EXAMPLE}\n[[peer]]\nname = \"other\"\nendpoint = \"{endpoint}\"\nallowed_ips = [\"{allowed}\"]\npublic_key = \"hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=\"\n"
        )
    };
    let (k, r) = invalid(&second("10.88.1.0/24", "192.168.50.3:51900"));
    assert_eq!(k, "peer[1].allowed_ips[0]");
    assert!(r.contains("overlaps 10.88.0.0/16 of peer[0]"), "{r}");
    let (k, r) = invalid(&second("10.99.0.0/16", "192.168.50.2:51900"));
    assert_eq!(k, "peer[1].endpoint");
    assert!(r.contains("also the endpoint of peer[0]"), "{r}");
    assert!(Config::parse(&second("10.99.0.0/16", "192.168.50.3:51900")).is_ok());
    let none = EXAMPLE.split("[[peer]]").next().unwrap();
    let (k, r) = invalid(none);
    assert_eq!(k, "peer");
    assert!(r.contains("at least one"), "{r}");
}

#[test]
fn routes_off_allows_endpoint_inside_allowed_ips_and_off_mode_skips_header_check() {
    let text = replaced("path_mtu = 1500", "path_mtu = 1500\nroutes = false")
        .replace("10.88.0.0/16", "192.168.0.0/16");
    assert!(with(|_| text.clone()).is_ok());
    let off = replaced("path_mtu = 1500", "path_mtu = 600")
        .replace("window = 16", "window = 100")
        .replace(r#"mode = "nc""#, r#"mode = "off""#);
    assert_eq!(Config::parse(&off).unwrap().coding.mode, Mode::Off);
}

/// The path MTU check is the engine's (`EngineConfig::mss_clamp`): windows whose header does not
/// fit are shrunk by the sender, so even W = 255 with explicit coefficients leaves a usable MSS
/// at the smallest accepted path MTU, over IPv6.
#[test]
fn widest_window_fits_the_smallest_path() {
    let text = replaced("path_mtu = 1500", "path_mtu = 576")
        .replace("window = 16", "window = 255")
        .replace("buffer_packets = 256", "buffer_packets = 1024")
        .replace("buffer_bytes = 1048576", "buffer_bytes = 4194304");
    let c = Config::parse(&text).unwrap();
    let engine = tcpnc_gateway::peer_engine::engine_config(&c);
    assert!(engine.validate().is_ok());
    assert!(engine.mss_clamp(tcpnc_wire::IpVersion::V6) >= 64);
}

/// `decoding_buffer_packets` and `decoding_buffer_bytes` reach the engine's decoding buffer,
/// which bounds the window the receiving gateway advertises (docs/gateway.md, "Buffers and the
/// window"); without them it has the gateway's defaults, 4 MiB and 4096 packets (larger than
/// the engine's own, which the simulator runs).
#[test]
fn the_decoding_buffer_keys_reach_the_engine() {
    let text = replaced(
        "buffer_bytes = 1048576",
        "buffer_bytes = 1048576\ndecoding_buffer_packets = 8192\ndecoding_buffer_bytes = 16777216",
    );
    let l = tcpnc_gateway::peer_engine::engine_config(&Config::parse(&text).unwrap()).limits;
    assert_eq!(
        (l.decoding_buffer_packets, l.decoding_buffer_bytes),
        (8192, 16 << 20)
    );
    let d = tcpnc_gateway::peer_engine::engine_config(&Config::parse(EXAMPLE).unwrap());
    assert_eq!(
        (
            d.limits.decoding_buffer_packets,
            d.limits.decoding_buffer_bytes
        ),
        (4096, 4 << 20)
    );
}

#[test]
fn unknown_policy_key_names_the_key() {
    let e = Config::parse(&replaced("window = 16", "window = 16\nack = \"every\"")).unwrap_err();
    assert!(matches!(e, ConfigError::Syntax(_)), "{e:?}");
    assert!(e.to_string().contains("coding.ack"), "{e}");
    let c = Config::parse(&replaced(
        "window = 16",
        "window = 16\nack_rule = \"every\"",
    ))
    .unwrap();
    assert_eq!(
        c.coding.policies.ack_rule,
        tcpnc_proto::settings::AckPolicy::EveryCombination
    );
}

#[test]
fn load_reports_missing_file() {
    let e = Config::load(std::path::Path::new("/nonexistent/tcpnc.toml")).unwrap_err();
    assert!(matches!(e, ConfigError::Io { .. }));
    assert!(e.to_string().contains("/nonexistent/tcpnc.toml"));
}

/// Keys with the default cipher setting.
fn keys_auto(private: tcpnc_tunnel::Key) -> Security {
    Security::Keys {
        private,
        cipher: CipherSetting::Auto,
    }
}

/// The security keys: keys or an explicit `insecure = true`, never neither; every error names
/// its key; with keys, `endpoint` is optional (roaming).
#[test]
fn keys_or_explicit_insecure() {
    const PUB: &str = r#"public_key = "3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08=""#;
    const PRIV: &str = r#"private_key = "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=""#;
    let c = Config::parse(EXAMPLE).unwrap();
    let expected = "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo="
        .parse()
        .unwrap();
    assert_eq!(c.security, keys_auto(expected));
    assert_eq!(c.peers[0].public_key, Some(PUB[14..58].parse().unwrap()));
    let cases: &[(&str, &str, &str, &str)] = &[
        (PRIV, "", "interface.private_key", "tcpnc genkey"),
        (PRIV, "insecure = true", "peer[0].public_key", "keys need"),
        (
            PRIV,
            &format!("{PRIV}\ninsecure = true"),
            "interface.insecure",
            "cannot be combined",
        ),
        (
            PRIV,
            r#"private_key = "short""#,
            "interface.private_key",
            "base64",
        ),
        (
            PRIV,
            &format!("{PRIV}\nprivate_key_file = \"/x\""),
            "interface.private_key_file",
            "cannot read",
        ),
        (PUB, "", "peer[0].public_key", "required"),
        (
            PRIV,
            &format!("{PRIV}\ncipher = \"aes-128-gcm\""),
            "interface.cipher",
            "unknown cipher",
        ),
        (
            PUB,
            &format!("{PUB}\npreshared_key = \"abc\""),
            "peer[0].preshared_key",
            "base64",
        ),
    ];
    for (from, to, key, reason) in cases {
        let (k, r) = invalid(&replaced(from, to));
        assert_eq!(k, *key, "{to}: {r}");
        assert!(r.contains(reason), "{to}: {r}");
    }
    // Insecure needs endpoints; keys do not.
    let no_endpoint = replaced(r#"endpoint = "192.168.50.2:51900""#, "");
    let c = Config::parse(&no_endpoint).unwrap();
    assert_eq!(c.peers[0].endpoint, None);
    let insecure = no_endpoint
        .replace(PRIV, "insecure = true")
        .replace(PUB, "");
    let (k, r) = invalid(&insecure);
    assert_eq!(
        (k.as_str(), r.contains("required with insecure")),
        ("peer[0].endpoint", true),
        "{r}"
    );
    // A private key from a file.
    let dir = std::env::temp_dir().join(format!("tcpnc-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("private");
    std::fs::write(&file, "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=\n").unwrap();
    let c = Config::parse(&replaced(
        PRIV,
        &format!("private_key_file = \"{}\"", file.display()),
    ))
    .unwrap();
    assert_eq!(c.security, keys_auto(expected));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `interface.cipher`: `auto` by default; each cipher by name; refused without keys.
#[test]
fn the_cipher_key_names_a_cipher_and_needs_keys() {
    use tcpnc_tunnel::Cipher;
    const PRIV: &str = r#"private_key = "dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=""#;
    let cipher = |text: &str| match Config::parse(text).unwrap().security {
        Security::Keys { cipher, .. } => cipher,
        Security::Insecure => panic!("keys expected"),
    };
    assert_eq!(cipher(EXAMPLE), CipherSetting::Auto);
    for (name, want) in [
        ("auto", CipherSetting::Auto),
        (
            "chacha20-poly1305",
            CipherSetting::Only(Cipher::ChaCha20Poly1305),
        ),
        ("aes-256-gcm", CipherSetting::Only(Cipher::Aes256Gcm)),
    ] {
        let text = replaced(PRIV, &format!("{PRIV}\ncipher = \"{name}\""));
        assert_eq!(cipher(&text), want);
        assert_eq!(want.to_string(), name);
    }
    let insecure = replaced(PRIV, "insecure = true\ncipher = \"aes-256-gcm\"").replace(
        r#"public_key = "3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08=""#,
        "",
    );
    let (k, r) = invalid(&insecure);
    assert_eq!(k, "interface.cipher", "{r}");
}
