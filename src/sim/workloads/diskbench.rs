//! diskbench: sequential I/Os of one block size kept outstanding per
//! direction (write: host to disk; read: disk to host). Each completed I/O is
//! replaced by a new one of the same direction. Also the `diskbench`
//! workload kind of scenario files: its block (128 KiB unless given) and
//! outstanding I/Os (the test bed's unless given).

use crate::model::{usual_direction, Demand, Shape, WorkloadArgs, WorkloadDef};

/// What scenario files know of it.
pub static KIND: WorkloadDef = WorkloadDef {
    name: "diskbench",
    keys: &["block_kib", "outstanding"],
    direction: usual_direction,
    words: ["write", "read"],
    shape: Shape::DiskIo,
    make,
};

fn make(a: &mut dyn WorkloadArgs) -> Option<Demand> {
    let (block_bytes, outstanding) = a.blocks(128.0, "outstanding I/Os")?;
    Some(Demand::Diskbench {
        block_bytes,
        outstanding,
    })
}

/// diskbench (block bytes, outstanding I/Os) for the (write, read) streams.
pub type DiskStreams = (Option<(u64, u32)>, Option<(u64, u32)>);

/// The I/O generator of one storage function.
#[derive(Debug, Clone, Copy)]
pub struct Diskbench {
    streams: DiskStreams,
}

impl Diskbench {
    /// diskbench with the given (write, read) streams.
    pub fn new(streams: DiskStreams) -> Diskbench {
        Diskbench { streams }
    }

    /// The I/Os issued at the start, in order: every outstanding write, then
    /// every outstanding read (true for a write).
    pub fn initial(&self) -> Vec<bool> {
        let (w, r) = self.streams;
        let mut v = Vec::new();
        for (write, stream) in [(true, w), (false, r)] {
            if let Some((_, n)) = stream {
                v.extend(std::iter::repeat_n(write, n as usize));
            }
        }
        v
    }

    /// The block size of a new I/O in direction `write`, if that stream runs.
    pub fn block(&self, write: bool) -> Option<u64> {
        let stream = if write {
            self.streams.0
        } else {
            self.streams.1
        };
        stream.map(|(bytes, _)| bytes)
    }
}
