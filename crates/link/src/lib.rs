//! tcpnc link layer.
