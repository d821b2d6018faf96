//! A real application across the tunnel, unchanged: `python3 -m http.server` serves a file
//! and `curl` downloads it; the file's sha256 is compared.
//!
//! The server runs in the client namespace (the data-sending side), so the download crosses
//! the lossy, coded direction; curl runs in the server namespace. Neither is configured in
//! any way for the tunnel: they use the namespace's default congestion control, which the
//! lab sets explicitly ([`crate::topo::DEFAULT_CC`]).

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::child::Child;
use crate::error::{LabError, Result};
use crate::session::{Lab, Session, wait_listening};
use crate::settings::{PathMode, PathSettings, PolicyOverrides};
use crate::traffic::DataGen;

/// TCP port of the HTTP server.
pub const HTTP_PORT: u16 = 8080;

/// The outcome of the download.
#[derive(Debug, Clone, Serialize)]
pub struct HttpResult {
    /// plain or nc.
    pub mode: String,
    /// Size of the served file.
    pub bytes: u64,
    /// Size of the downloaded file.
    pub bytes_received: u64,
    /// Seconds curl took (connect included).
    pub seconds: f64,
    /// bytes · 8 / seconds / 10^6.
    pub goodput_mbit: f64,
    /// Sizes and sha256 equal.
    pub integrity_ok: bool,
    /// sha256 of the served file.
    pub sha256_served: String,
    /// sha256 of the downloaded file.
    pub sha256_received: String,
    /// Gateway counters.
    pub gateways: Option<crate::session::GatewayStats>,
    /// Relay counters.
    pub link: Value,
}

/// `name` on `PATH`, if present.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn sha256_file(path: &Path) -> Result<(u64, String)> {
    let data = std::fs::read(path).map_err(|e| LabError::file(path, e))?;
    let d = Sha256::digest(&data);
    Ok((
        data.len() as u64,
        d.iter().map(|b| format!("{b:02x}")).collect(),
    ))
}

/// Writes `bytes` of seeded data to `www/blob.bin`; returns its sha256.
fn write_blob(www: &Path, bytes: u64) -> Result<String> {
    std::fs::create_dir_all(www).map_err(|e| LabError::file(www, e))?;
    let blob = www.join("blob.bin");
    let mut data = vec![0u8; bytes.div_ceil(8) as usize * 8];
    DataGen::new(7).fill(&mut data);
    data.truncate(bytes as usize);
    std::fs::write(&blob, &data).map_err(|e| LabError::file(&blob, e))?;
    drop(data);
    Ok(sha256_file(&blob)?.1)
}

/// `python3 -m http.server` serving `www` on `ip` in the client namespace, once it listens.
fn start_server(lab: &Lab, python: &Path, ip: Ipv4Addr, www: &Path) -> Result<Child> {
    let srv_args: Vec<String> = [
        "-m",
        "http.server",
        &HTTP_PORT.to_string(),
        "--bind",
        &ip.to_string(),
        "--directory",
        &www.display().to_string(),
    ]
    .map(String::from)
    .to_vec();
    let cli = lab.topo.cli.clone();
    let mut server = lab.spawn_program("http server", &cli, python, &srv_args)?;
    wait_listening(
        &mut server,
        "python3 -m http.server to listen",
        &cli,
        HTTP_PORT,
        Duration::from_secs(15),
    )?;
    Ok(server)
}

/// Serves `bytes` of seeded data with python3's http.server and downloads it with curl
/// across the tunnel in `mode`.
pub fn http_download(
    lab: &Lab,
    mode: PathMode,
    path: &PathSettings,
    coding: &PolicyOverrides,
    bytes: u64,
    timeout_s: f64,
) -> Result<HttpResult> {
    let python = find_program("python3")
        .ok_or_else(|| LabError::Invalid("python3 is not installed".into()))?;
    let curl =
        find_program("curl").ok_or_else(|| LabError::Invalid("curl is not installed".into()))?;
    path.validate()?;
    let www = lab.dir().join("www");
    let sha_served = write_blob(&www, bytes)?;
    let session = Session::start(lab, mode, path, coding)?;
    let server_ip = match mode {
        PathMode::Direct => crate::topo::CLI_ADDR,
        _ => crate::session::TUN_CLI,
    };
    let mut server = start_server(lab, &python, server_ip, &www)?;
    let out = lab.dir().join("downloaded.bin");
    let url = format!("http://{server_ip}:{HTTP_PORT}/blob.bin");
    let curl_args: Vec<String> = [
        "-sS",
        "--fail",
        "--max-time",
        &format!("{timeout_s}"),
        "-o",
        &out.display().to_string(),
        &url,
    ]
    .map(String::from)
    .to_vec();
    let start = Instant::now();
    let mut client = lab.spawn_program("curl", &lab.topo.srv, &curl, &curl_args)?;
    let status = client.wait(start + Duration::from_secs_f64(timeout_s + 5.0))?;
    let seconds = start.elapsed().as_secs_f64();
    if !status.success() {
        return Err(LabError::Child {
            what: format!("curl failed ({status})"),
            log: client.log_tail(),
        });
    }
    server.stop();
    let stats = session.finish()?;
    let (got, sha_received) = sha256_file(&out)?;
    Ok(HttpResult {
        mode: mode.name().to_string(),
        bytes,
        bytes_received: got,
        seconds,
        goodput_mbit: got as f64 * 8.0 / seconds / 1e6,
        integrity_ok: got == bytes && sha_received == sha_served,
        sha256_served: sha_served,
        sha256_received: sha_received,
        gateways: stats.gateways,
        link: stats.link.unwrap_or(Value::Null),
    })
}
