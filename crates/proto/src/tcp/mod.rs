//! TCP/IP segment parsing and synthesis.
