//! tcpnc proto layer.
