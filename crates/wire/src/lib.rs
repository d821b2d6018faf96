//! tcpnc wire layer.
