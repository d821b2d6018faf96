//! What the gateway and the `tcpnc link` relay share to drive [`tcpnc_proto::seam::Seam`]
//! elements over real I/O: the [`Udp`] socket seam with its real ([`SysUdp`]) and in-memory
//! ([`FakeNet`]) sockets and their batched calls ([`batch`]: `recvmmsg`/`sendmmsg`; [`gso`]:
//! UDP GSO sends; [`gro`]: UDP GRO receives), the bounded readiness wait their reader
//! threads use, and the one rendering of counters as JSON ([`counters_json`]).

pub mod batch;
pub mod counters_json;
pub mod fake;
pub mod gro;
pub mod gso;
pub mod udp;

pub use batch::{BATCH, RecvSlots};
pub use fake::{FakeNet, FakeUdp, copy_out, recv_timeout};
pub use gso::Sent;
pub use udp::{BindError, SysUdp, Udp, wait_readable};
