//! A raw DMA test function: a bus-test card with no link that moves blocks
//! between itself and host memory back to back, as bus analysers and vendor
//! DMA tests measure a bus's efficiency.
//!
//! Bus transactions per block of B bytes:
//! - host to card (a DMA read, "out" of the server): reads of B bytes in
//!   `max_read` requests, at most `max_outstanding_reads` in flight (PCI-X
//!   split reads), or delayed reads retried until the bridge has the data
//!   (PCI);
//! - card to host (a DMA write, "in" to the server): posted writes of B bytes
//!   in `write_burst` bursts.
//!
//! The function keeps `outstanding` blocks in flight per direction and
//! starts the next the moment one finishes: no descriptors, no interrupts,
//! no CPU work, so what it measures is the bus, its bridge and the path
//! above them.

use super::seam::inherent_behaviour;
use super::seam::{dma_from_params, Ctx, DmaCfg, EngineType, FunctionInput, Reads, Token};
use crate::error::Result;
use crate::model::schema::dma_engine_kind;
use crate::model::{Demand, EngineDef, Shape};

/// What a raw DMA function waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawDmaEv {
    /// A block read from host memory has arrived.
    ReadDone,
    /// A block written to host memory has been posted.
    WriteDone,
}

/// The test's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawDmaTest {
    /// Bytes per block.
    pub block: u64,
    /// Blocks read from host memory kept in flight (0: no reads).
    pub reads: u32,
    /// Blocks written to host memory kept in flight (0: no writes).
    pub writes: u32,
}

/// A raw DMA test function: its DMA engine and the test it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawDmaCfg {
    /// DMA engine.
    pub dma: DmaCfg,
    /// The test.
    pub test: RawDmaTest,
}

dma_engine_kind! {
    /// Parameters of a raw DMA test function (a bus-test card with no link).
    RAW_DMA, RawDmaParams {

    }
}

/// What model files know of the raw DMA engine.
pub static KIND: EngineDef = EngineDef {
    name: "dma",
    rules: RAW_DMA,
    framings: &[],
    carries: &[Shape::DmaBlocks],
};

impl EngineType for RawDma {
    type Ev = RawDmaEv;
    type Cfg = RawDmaCfg;
    const KIND: &'static EngineDef = &KIND;

    fn assemble(input: &FunctionInput) -> Result<RawDmaCfg> {
        let f = input.spec;
        let fp = RawDmaParams::from_set(&f.params, &f.at)?;
        let mut test = RawDmaTest {
            block: 0,
            reads: 0,
            writes: 0,
        };
        for w in input.work() {
            if let Demand::RawDma {
                block_bytes,
                outstanding,
            } = w.demand
            {
                test.block = block_bytes;
                let mut ways = (test.reads, test.writes);
                w.direction.set(&mut ways, outstanding);
                (test.reads, test.writes) = ways;
            }
        }
        Ok(RawDmaCfg {
            dma: dma_from_params(fp.max_read, fp.max_outstanding_reads, fp.write_burst),
            test,
        })
    }

    fn build(c: &RawDmaCfg) -> RawDma {
        RawDma::new(c.test)
    }
    inherent_behaviour!(RawDma, RawDmaEv);
    fn dma(c: &RawDmaCfg) -> DmaCfg {
        c.dma
    }
    fn busy(c: &RawDmaCfg) -> bool {
        c.test.reads > 0 || c.test.writes > 0
    }
    fn reads(_: &RawDmaCfg) -> Reads {
        Reads::default()
    }
}

/// Raw DMA state.
#[derive(Debug)]
pub struct RawDma {
    cfg: RawDmaTest,
    /// Bytes read from host memory since the last reset.
    pub delivered_out: u64,
    /// Bytes written to host memory since the last reset.
    pub delivered_in: u64,
}

impl RawDma {
    /// A raw DMA function with the given settings.
    pub fn new(cfg: RawDmaTest) -> RawDma {
        RawDma {
            cfg,
            delivered_out: 0,
            delivered_in: 0,
        }
    }

    /// Starts every block in flight.
    pub fn start<T: Token<RawDmaEv>>(&mut self, cx: &mut Ctx<'_, T>) {
        for _ in 0..self.cfg.reads {
            cx.dma_read(self.cfg.block, RawDmaEv::ReadDone.into());
        }
        for _ in 0..self.cfg.writes {
            cx.dma_write(self.cfg.block, RawDmaEv::WriteDone.into());
        }
    }

    /// A block finished: count it and start the next.
    pub fn handle<T: Token<RawDmaEv>>(&mut self, e: RawDmaEv, cx: &mut Ctx<'_, T>) {
        match e {
            RawDmaEv::ReadDone => {
                self.delivered_out += self.cfg.block;
                cx.dma_read(self.cfg.block, RawDmaEv::ReadDone.into());
            }
            RawDmaEv::WriteDone => {
                self.delivered_in += self.cfg.block;
                cx.dma_write(self.cfg.block, RawDmaEv::WriteDone.into());
            }
        }
    }
}
