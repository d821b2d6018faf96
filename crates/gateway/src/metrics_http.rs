//! The `/metrics` endpoint (`interface.metrics_listen`): a small blocking HTTP server
//! (`tiny_http`) on its own thread rendering the [`crate::metrics::PrometheusExporter`]'s page
//! on each scrape. It serves `GET /metrics` (Prometheus text format 0.0.4) and answers 404 to
//! anything else; it stops when dropped.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use metrics_exporter_prometheus::PrometheusHandle;
use tiny_http::{Header, Response, Server};

use crate::error::GatewayError;

/// Content type of the Prometheus text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// How often the server thread looks at its stop flag.
const POLL: Duration = Duration::from_millis(50);

/// A running metrics server; stops (and joins its thread) on drop.
#[derive(Debug)]
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Binds `addr` and serves `handle`'s page on `/metrics`.
    pub fn start(
        addr: SocketAddr,
        handle: PrometheusHandle,
    ) -> Result<MetricsServer, GatewayError> {
        let server = Server::http(addr).map_err(|e| GatewayError::Metrics {
            addr,
            reason: e.to_string(),
        })?;
        let bound = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| GatewayError::Metrics {
                addr,
                reason: "not an IP listener".into(),
            })?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = thread::Builder::new()
            .name("tcpnc-metrics".into())
            .spawn(move || serve(&server, &handle, &flag))
            .map_err(|e| GatewayError::Metrics {
                addr,
                reason: e.to_string(),
            })?;
        Ok(MetricsServer {
            addr: bound,
            stop,
            thread: Some(thread),
        })
    }

    /// The bound address (the real port when `addr` had port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(server: &Server, handle: &PrometheusHandle, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        let request = match server.recv_timeout(POLL) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                tracing::warn!("metrics server: {e}");
                continue;
            }
        };
        let path = request.url().split('?').next().unwrap_or_default();
        let response = if path == "/metrics" {
            let header =
                Header::from_bytes("Content-Type", CONTENT_TYPE).expect("constant header is valid");
            Response::from_string(handle.render()).with_header(header)
        } else {
            Response::from_string("tcpnc: metrics are on /metrics\n").with_status_code(404)
        };
        if let Err(e) = request.respond(response) {
            tracing::debug!("metrics server: {e}");
        }
    }
}
