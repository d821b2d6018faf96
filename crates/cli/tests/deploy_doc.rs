//! Every command of docs/deploy.md (the `$ ` lines of its console blocks) is run here, in a
//! scratch directory standing in for /etc/tcpnc, /run/tcpnc and /usr/share/tcpnc, or is named
//! in `ELSEWHERE` with the test that runs it; a command in neither fails the test, so the page
//! and the tests cannot drift apart.

mod common;

use std::path::PathBuf;
use std::process::Command;

use tcpnc_gateway::stats::{GatewayCounters, STATS_VERSION, Snapshot};

const BIN: &str = env!("CARGO_BIN_EXE_tcpnc");
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const DOC: &str = include_str!("../../../docs/deploy.md");

/// Commands run by other tests: (command, test file, a string that file contains where it runs
/// the command), or not run at all (file "-", with the reason).
const ELSEWHERE: &[(&str, &str, &str)] = &[
    ("scripts/build-deb", "package.rs", "scripts/build-deb"),
    (
        "dpkg -i target/debian/tcpnc_0.1.0-1_amd64.deb",
        "package.rs",
        "\"--force-depends\"",
    ),
    (
        "curl -s http://127.0.0.1:9617/metrics | promtool check metrics",
        "operate.rs",
        "check_with_promtool(&promtool, &page_a)",
    ),
    (
        "tcpdump -i wan0 -w wan.pcap udp port 51900",
        "operate.rs",
        "net.cmd(0, \"tcpdump\")",
    ),
    (
        "systemctl enable --now tcpnc@site",
        "-",
        "needs systemd as PID 1",
    ),
    ("systemctl status tcpnc@site", "-", "needs systemd as PID 1"),
    ("journalctl -u tcpnc@site", "-", "needs systemd as PID 1"),
];

/// The `$ ` lines of the page's console blocks.
fn commands() -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in DOC.lines() {
        if line.starts_with("```") {
            inside = line.trim() == "```console";
            continue;
        }
        if inside && let Some(cmd) = line.strip_prefix("$ ") {
            out.push(cmd.trim().to_string());
        }
    }
    out
}

fn have_tshark() -> bool {
    let ok = Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok || std::env::var("CI").as_deref() != Ok("true"),
        "CI=true but tshark is missing"
    );
    ok
}

/// The scratch stand-ins: config directory, stats file, capture.
struct Scratch {
    root: PathBuf,
    etc: PathBuf,
    stats: PathBuf,
    pcap: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let root = std::env::temp_dir().join(format!("tcpnc-deploy-{}", std::process::id()));
        let etc = root.join("etc");
        std::fs::create_dir_all(&etc).unwrap();
        let stats = root.join("tcpnc0.json");
        let snapshot = Snapshot {
            version: STATS_VERSION,
            interface: "tcpnc0".into(),
            listen: "192.0.2.1:51900".into(),
            mode: "nc".into(),
            pid: 1,
            uptime_secs: 1.0,
            unix_time: 1.0,
            stopped: false,
            gateway: GatewayCounters::default(),
            peers: vec![],
            window: Some(12),
            buffers: None,
            tun_offload: false,
            udp_gso: false,
            udp_gro: false,
            workers: 1,
            worker_items: Vec::new(),
            tun_queues: 1,
            tun_queue_packets: Vec::new(),
            tunnel: serde_json::Value::Null,
        };
        tcpnc_gateway::stats::write_snapshot(&stats, &snapshot).unwrap();
        let pcap = root.join("wan.pcap");
        let golden: Vec<Vec<u8>> = common::golden_blocks()
            .into_iter()
            .map(|(_, b)| b)
            .collect();
        common::write_pcap(&pcap, &golden);
        Scratch {
            root,
            etc,
            stats,
            pcap,
        }
    }

    /// `cmd` with the installed paths replaced by the repository's and the scratch ones.
    fn translate(&self, cmd: &str) -> String {
        let mut line = cmd
            .replace(
                "/usr/share/doc/tcpnc/examples",
                &format!("{REPO}/contrib/examples"),
            )
            .replace("/usr/share/tcpnc/wireshark/tcpnc.lua", common::LUA)
            .replace("/etc/tcpnc", self.etc.to_str().unwrap())
            .replace("wan.pcap", self.pcap.to_str().unwrap());
        if let Some(rest) = line.strip_prefix("tcpnc ") {
            line = format!("{BIN} {rest}");
        }
        if line.contains(" stats tcpnc0") {
            let file = format!(" stats tcpnc0 --file {}", self.stats.display());
            line = line.replace(" stats tcpnc0", &file);
            if line.ends_with("--watch") {
                line.push_str(" --count 1");
            }
        }
        line
    }
}

/// Whether `cmd` is run by another test (checked) or not run at all (with a reason).
fn elsewhere(cmd: &str) -> bool {
    let Some((_, file, marker)) = ELSEWHERE.iter().find(|(c, _, _)| *c == cmd) else {
        return false;
    };
    if *file != "-" {
        let text = std::fs::read_to_string(format!("{REPO}/crates/cli/tests/{file}")).unwrap();
        assert!(
            text.contains(marker),
            "{file} should run `{cmd}` ({marker})"
        );
    }
    true
}

#[test]
fn every_command_of_the_deploy_page_is_run() {
    let scratch = Scratch::new();
    let tshark = have_tshark();
    let cmds = commands();
    assert!(cmds.len() >= 12, "{cmds:?}");
    let mut ran = 0;
    for cmd in &cmds {
        if elsewhere(cmd) {
            continue;
        }
        if cmd.starts_with("tshark") && !tshark {
            eprintln!("tshark not installed: `{cmd}` not run");
            continue;
        }
        let line = scratch.translate(cmd);
        let out = Command::new("sh")
            .args(["-c", &line])
            .env("TCPNC_CONFIG_DIR", &scratch.etc)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "`{cmd}` (as `{line}`): {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The two tshark commands: no malformed golden frame; the ACK fields of ack-v4 and
        // ack-v6-flags.
        if cmd.contains("tcpnc.malformed") {
            assert_eq!(
                stdout.trim(),
                "",
                "no frame of the golden vectors is malformed"
            );
        }
        if cmd.contains("tcpnc.ack.lost_pid") {
            assert_eq!(stdout, "9\t8,6\t2\n4294967295\t4294967294,4294967263\t1\n");
        }
        ran += 1;
    }
    assert!(ran >= 7, "ran {ran} commands");
    std::fs::remove_dir_all(&scratch.root).unwrap();
}
