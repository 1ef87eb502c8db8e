//! The `ip-forward` workload kind: a TCP stream from the client of one port
//! to the client of another port of the same card (`to`), forwarded by the
//! server's stack; its direction is receive, the clients' socket and send
//! sizes 128 and 32 KiB unless given.

use crate::model::{usual_direction, Demand, Direction, Shape, WorkloadArgs, WorkloadDef};

/// What scenario files know of it.
pub static KIND: WorkloadDef = WorkloadDef {
    name: "ip-forward",
    keys: &["socket_kib", "message_kib", "to"],
    direction: usual_direction,
    words: ["forwarded", "forwarded"],
    shape: Shape::IpForward,
    make,
};

fn make(a: &mut dyn WorkloadArgs) -> Option<Demand> {
    let (socket, message) = super::netperf::sizes(a);
    let to = match a.to() {
        Some(None) => {
            a.refuse(
                "kind",
                "an ip-forward workload names the function its packets leave by: `to`",
            );
            None
        }
        Some(Some(t)) if Some(t) == a.function() => {
            a.refuse("to", "an ip-forward workload forwards to another port");
            None
        }
        Some(Some(t)) => Some(t),
        None => None,
    };
    if a.direction() != Some(Direction::In) {
        a.refuse(
            "direction",
            "an ip-forward workload's direction is receive: the packets enter by this port",
        );
    }
    let (socket_bytes, message_bytes, to) = (socket?, message?, to?);
    Some(Demand::IpForward {
        to,
        socket_bytes,
        message_bytes,
    })
}
