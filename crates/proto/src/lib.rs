//! The sans-IO TCP/NC engine (Sundararajan et al., "Network coding meets TCP: theory and
//! implementation", §II–V): coding buffer, sender and receiver state machines, TCP segment
//! parsing and synthesis, policies, timers and statistics. Time (`now`) and seeds are passed in;
//! this crate performs no I/O and never reads the clock.

pub mod coding_buffer;
pub mod tcp;
