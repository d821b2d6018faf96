//! The Debian package: `scripts/build-deb` (dpkg-deb from `[package.metadata.deb]`, and
//! cargo-deb when installed) packages the binary, the systemd unit, the example configs, the
//! docs, the dissector, the dashboard, man pages and completions; installed with
//! `dpkg --root` into a scratch root (root only) it runs; the unit passes
//! `systemd-analyze verify` where systemd-analyze exists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const BIN: &str = env!("CARGO_BIN_EXE_tcpnc");
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn have(prog: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {prog}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether the packaging tools exist; under CI=true their absence is a failure.
fn can_package(test: &str) -> bool {
    let missing: Vec<_> = ["dpkg-deb", "dpkg-shlibdeps", "python3", "strip"]
        .into_iter()
        .filter(|p| !have(p))
        .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true but {missing:?} missing"
    );
    eprintln!("skipping {test}: {missing:?} not installed (Debian: dpkg-dev, python3, binutils)");
    false
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcpnc-pkg-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn build(tool: &str) -> PathBuf {
    let out = scratch(tool);
    let run = Command::new(format!("{REPO}/scripts/build-deb"))
        .args(["--binary", BIN, "--tool", tool, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "build-deb --tool {tool}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let path = String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .to_string();
    PathBuf::from(path)
}

/// The package built once (dpkg-deb) for every test of this file.
fn package() -> &'static Path {
    static DEB: OnceLock<PathBuf> = OnceLock::new();
    DEB.get_or_init(|| build("dpkg-deb"))
}

/// `(mode, path)` of every non-directory entry.
fn contents(deb: &Path) -> BTreeSet<(String, String)> {
    let out = Command::new("dpkg-deb")
        .arg("-c")
        .arg(deb)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('d'))
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (
                cols[0].to_string(),
                cols[5].trim_start_matches('.').to_string(),
            )
        })
        .collect()
}

fn expected() -> BTreeSet<(String, String)> {
    let f = |p: &str| ("-rw-r--r--".to_string(), p.to_string());
    let mut e: BTreeSet<_> = [
        "/lib/systemd/system/tcpnc@.service",
        "/usr/share/doc/tcpnc/deploy.md",
        "/usr/share/doc/tcpnc/copyright",
        "/usr/share/tcpnc/wireshark/tcpnc.lua",
        "/usr/share/tcpnc/grafana/tcpnc-gateway.json",
        "/usr/share/bash-completion/completions/tcpnc",
        "/usr/share/zsh/vendor-completions/_tcpnc",
        "/usr/share/fish/vendor_completions.d/tcpnc.fish",
        "/usr/share/man/man1/tcpnc.1.gz",
    ]
    .into_iter()
    .map(f)
    .collect();
    for sub in [
        "up",
        "genkey",
        "pubkey",
        "link",
        "stats",
        "sim",
        "bench",
        "lab",
        "experiment",
    ] {
        e.insert(f(&format!("/usr/share/man/man1/tcpnc-{sub}.1.gz")));
    }
    for ex in std::fs::read_dir(format!("{REPO}/contrib/examples")).unwrap() {
        let name = ex.unwrap().file_name().into_string().unwrap();
        e.insert(f(&format!("/usr/share/doc/tcpnc/examples/{name}")));
    }
    e.insert(("-rwxr-xr-x".into(), "/usr/bin/tcpnc".into()));
    e
}

#[test]
fn package_has_every_file_and_cargo_deb_agrees() {
    if !can_package("package_has_every_file_and_cargo_deb_agrees") {
        return;
    }
    let deb = package();
    assert_eq!(contents(deb), expected());
    let field = |f: &str| {
        let o = Command::new("dpkg-deb")
            .arg("-f")
            .arg(deb)
            .arg(f)
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    assert_eq!(field("Package"), "tcpnc");
    assert!(
        field("Depends").contains("iproute2"),
        "{}",
        field("Depends")
    );
    assert!(field("Depends").contains("libc6"), "{}", field("Depends"));
    if Command::new("cargo")
        .args(["deb", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        assert_eq!(
            contents(&build("cargo-deb")),
            expected(),
            "cargo-deb's layout"
        );
    } else {
        eprintln!("cargo-deb not installed: only the dpkg-deb build checked");
    }
}

/// `systemd-analyze verify` of the installed unit as instance `site`, with ExecStart pointing
/// at the scratch root's binary (the host has no /usr/bin/tcpnc).
fn verify_unit(root: &Path) {
    if !have("systemd-analyze") {
        eprintln!("systemd-analyze not installed: unit not verified");
        return;
    }
    let unit = std::fs::read_to_string(root.join("lib/systemd/system/tcpnc@.service")).unwrap();
    let bin = root.join("usr/bin/tcpnc");
    let dir = scratch("unit");
    let file = dir.join("tcpnc@site.service");
    let text = unit.replace("/usr/bin/tcpnc", bin.to_str().unwrap());
    std::fs::write(&file, &text).unwrap();
    let out = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "verify: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The check can fail: a unit whose ExecStart does not exist is refused.
    std::fs::write(&file, unit.replace("/usr/bin/tcpnc", "/nonexistent/tcpnc")).unwrap();
    let bad = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&file)
        .output();
    assert!(!bad.unwrap().status.success());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn package_installs_into_a_scratch_root_and_runs() {
    if !tcpnc_gateway::sys::is_root() {
        eprintln!("skipping package_installs_into_a_scratch_root_and_runs: dpkg --root needs root");
        return;
    }
    if !can_package("package_installs_into_a_scratch_root_and_runs") || !have("dpkg") {
        return;
    }
    let root = scratch("root");
    std::fs::create_dir_all(root.join("var/lib/dpkg/info")).unwrap();
    std::fs::create_dir_all(root.join("var/lib/dpkg/updates")).unwrap();
    std::fs::write(root.join("var/lib/dpkg/status"), "").unwrap();
    // Dependencies (libc6, iproute2) are the host's: the scratch root has no packages.
    let out = Command::new("dpkg")
        .arg(format!("--root={}", root.display()))
        .args(["--force-depends", "--force-script-chrootless", "-i"])
        .arg(package())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dpkg -i: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = Command::new("dpkg")
        .arg(format!("--root={}", root.display()))
        .args(["-L", "tcpnc"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("/usr/bin/tcpnc"));
    let version = Command::new(root.join("usr/bin/tcpnc"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(version.status.success());
    let want = format!("tcpnc {}\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(String::from_utf8(version.stdout).unwrap(), want);
    // The installed example configs are valid.
    let examples = root.join("usr/share/doc/tcpnc/examples");
    for ex in std::fs::read_dir(&examples).unwrap() {
        let path = ex.unwrap().path();
        let check = Command::new(root.join("usr/bin/tcpnc"))
            .args(["up", "--check"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&check.stderr)
        );
    }
    verify_unit(&root);
    std::fs::remove_dir_all(&root).unwrap();
}
