//! tcpnc codec layer.
