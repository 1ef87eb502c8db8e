//! The `netperf-tcp-stream` workload kind: a netperf TCP_STREAM test on
//! one port, its socket and send sizes (128 and 32 KiB unless given),
//! carried by any engine that holds a TCP stream ([`super::tcp`]).

use crate::model::{usual_direction, Demand, Shape, WorkloadArgs, WorkloadDef};

/// What scenario files know of it.
pub static KIND: WorkloadDef = WorkloadDef {
    name: "netperf-tcp-stream",
    keys: &["socket_kib", "message_kib"],
    direction: usual_direction,
    words: ["transmit", "receive"],
    shape: Shape::TcpStream,
    make,
};

/// A netperf client's socket and send sizes in bytes (128 and 32 KiB
/// unless given); each `None` when refused.
pub(super) fn sizes(a: &mut dyn WorkloadArgs) -> (Option<u64>, Option<u64>) {
    (a.size("socket_kib", 128.0), a.size("message_kib", 32.0))
}

fn make(a: &mut dyn WorkloadArgs) -> Option<Demand> {
    let (socket, message) = sizes(a);
    let (socket_bytes, message_bytes) = socket.zip(message)?;
    Some(Demand::NetperfTcpStream {
        socket_bytes,
        message_bytes,
    })
}
