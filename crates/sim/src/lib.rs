//! tcpnc sim layer.
