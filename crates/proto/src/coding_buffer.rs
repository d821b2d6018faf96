//! Coding buffer (§III-A).
