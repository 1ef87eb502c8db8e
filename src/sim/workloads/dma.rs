//! The `dma` workload kind: raw DMA blocks (4 KiB unless given) kept in
//! flight (one unless given) between a bus-test function and host memory;
//! its directions are `read` (DMA reads of host memory: data out of it) and
//! `write` (DMA writes to it).

use crate::model::{Demand, Direction, Shape, WorkloadArgs, WorkloadDef};

/// What scenario files know of it.
pub static KIND: WorkloadDef = WorkloadDef {
    name: "dma",
    keys: &["block_kib", "outstanding"],
    direction,
    words: ["DMA reads of host memory", "DMA writes to host memory"],
    shape: Shape::DmaBlocks,
    make,
};

/// `read` is a DMA read of host memory: data out of it.
fn direction(word: &str) -> Option<Result<Direction, &'static str>> {
    match word {
        "read" => Some(Ok(Direction::Out)),
        "write" => Some(Ok(Direction::In)),
        "bidirectional" => Some(Ok(Direction::Both)),
        "transmit" | "receive" => Some(Err(
            "a dma workload's direction is read (DMA reads of host memory), write (DMA writes to it) or bidirectional",
        )),
        _ => None,
    }
}

fn make(a: &mut dyn WorkloadArgs) -> Option<Demand> {
    let (block_bytes, outstanding) = a.blocks(4.0, "blocks in flight")?;
    Some(Demand::RawDma {
        block_bytes,
        outstanding: outstanding.unwrap_or(1),
    })
}
