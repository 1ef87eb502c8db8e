//! A Fibre Channel or parallel SCSI HBA function running [`Diskbench`] I/Os
//! against an ideal disk array at the far end of its link (on a SCSI bus,
//! the array stands for the devices on the bus).
//!
//! Bus transactions per I/O of B bytes (FCP):
//! 1. read of the I/O control block (`command_bytes`);
//! 2. read I/O (disk to host): per data frame, a posted write of its payload
//!    (`write_burst` bursts); write I/O (host to disk): per data frame, reads
//!    of its payload in `max_read` requests, at most `max_outstanding_reads`
//!    in flight;
//! 3. a posted write of the completion entry (`completion_bytes`).
//!
//! The card's own processor (firmware), when the adapter has one
//! (`processor_per_io`), spends that time on each I/O once its control block
//! is read and before its FCP_CMND leaves, one I/O at a time: a port's IOPS
//! cannot exceed its inverse. The processor is the function's own, so each
//! port of a multi-port card (each its own function) has one.
//!
//! On the link: FCP_CMND out; for a write, XFER_RDY in, then data frames out;
//! for a read, data frames in (one per free receive buffer); FCP_RSP in. The
//! disk array answers after its service time, `target_latency` plus
//! `target_per_kib` per KiB of the I/O: from a read's command to its
//! first data frame, and from a write's last data frame to its response
//! (XFER_RDY is immediate: the array accepts writes into its cache). The host
//! spends `cpu_per_io` per I/O: half to issue it, on the CPU of the
//! application that asks for it (diskbench, placed as a process), and half
//! to complete it, on the function's interrupt CPU, followed by the
//! driver's `pio_reads_per_interrupt` register reads (one interrupt per
//! I/O), each stalling that CPU for a round trip across the bus. Left out:
//! disk mechanics (the array's cache serves every block), link errors, ABTS,
//! interrupt coalescing.
//!
//! On a parallel SCSI link the same frames stand for the information units
//! (command, the target's request for write data, data, status), all on
//! one half-duplex bus shared by both directions (`wire::SharedBus`): each
//! frame opens a connection (arbitration and selection) unless it is a data
//! frame continuing its I/O's; the host adapter wins arbitration.

use std::collections::VecDeque;

use super::framing::{fc_cfg, FcCfg};
use super::seam::inherent_behaviour;
use super::seam::{
    dma_from_params, kick_wire, whole, Ctx, DmaCfg, EngineType, FunctionInput, Reads, Token,
};
use crate::error::Result;
use crate::model::schema::dma_engine_kind;
use crate::model::{Demand, EngineDef, Framing, ParamSet, Shape};
use crate::sim::cpu::CpuRole;
use crate::sim::wire::{Frame, FrameKind, Way};
use crate::sim::workloads::diskbench::{DiskStreams, Diskbench};
use crate::units::{BytesPerSec, Picos};

/// HBA engine parameters.
#[derive(Debug, Clone)]
pub struct HbaCfg {
    /// DMA engine.
    pub dma: DmaCfg,
    /// Command block bytes.
    pub command: u64,
    /// Completion entry bytes.
    pub completion: u64,
    /// Receive frame buffers.
    pub rx_buffers: u32,
    /// Transmit frame buffers.
    pub tx_buffers: u32,
    /// On-card processor time per I/O (zero: no such limit).
    pub processor_per_io: Picos,
    /// Register reads per completion interrupt.
    pub pio_reads: u32,
}

/// An HBA function: its engine, its link's framing and the diskbench
/// streams it carries.
#[derive(Debug, Clone)]
pub struct HbaFunction {
    /// Engine.
    pub hba: HbaCfg,
    /// Link.
    pub fc: FcCfg,
    /// diskbench streams.
    pub streams: DiskStreams,
}

dma_engine_kind! {
    /// Parameters of a Fibre Channel HBA function.
    HBA, HbaParams {
        command_bytes: Size whole, 16.0, 256.0,
            "I/O control block the HBA reads per command";
        completion_bytes: Size whole, 4.0, 256.0,
            "completion entry the HBA writes per I/O";
        rx_buffer_frames: Count whole, 1.0, 256.0,
            "receive buffers (buffer-to-buffer credit)";
        tx_buffer_frames: Count whole, 1.0, 256.0,
            "transmit frame buffers";
        processor_per_io: Time, 0.0, 1e7,
            "time the card's own processor (its firmware) spends on each I/O, one I/O at a time: what bounds small-block IOPS",
            absent = "no on-card processor limit: the card handles an I/O as fast as its bus and link let it";
        pio_reads_per_interrupt: Count whole, 0.0, 16.0,
            "register reads the driver makes per completion interrupt (one per I/O), each stalling the interrupt CPU for a round trip across the bus",
            absent = "none: the driver reads its completions from host memory only";
    }
}

/// What model files know of the HBA engine.
pub static KIND: EngineDef = EngineDef {
    name: "hba",
    rules: HBA,
    framings: &[Framing::FibreChannel, Framing::ParallelScsi],
    carries: &[Shape::DiskIo],
};

impl EngineType for Hba {
    type Ev = HbaEv;
    type Cfg = HbaFunction;
    const KIND: &'static EngineDef = &KIND;

    fn assemble(input: &FunctionInput) -> Result<HbaFunction> {
        let f = input.spec;
        let empty = ParamSet::default();
        let fc = fc_cfg(input.link, input.link.map_or(&empty, |l| &l.params), &f.at)?;
        let fp = HbaParams::from_set(&f.params, &f.at)?;
        let mut streams = (None, None);
        for w in input.work() {
            if let Demand::Diskbench {
                block_bytes,
                outstanding,
            } = w.demand
            {
                let s = Some((
                    block_bytes,
                    outstanding.unwrap_or(input.testbed.outstanding),
                ));
                w.direction.set(&mut streams, s);
            }
        }
        let hba = HbaCfg {
            dma: dma_from_params(fp.max_read, fp.max_outstanding_reads, fp.write_burst),
            command: whole(fp.command_bytes),
            completion: whole(fp.completion_bytes),
            rx_buffers: whole(fp.rx_buffer_frames).max(1) as u32,
            tx_buffers: whole(fp.tx_buffer_frames).max(1) as u32,
            processor_per_io: Picos::from_ns(fp.processor_per_io.unwrap_or(0.0)),
            pio_reads: fp.pio_reads_per_interrupt.map_or(0, whole) as u32,
        };
        Ok(HbaFunction { hba, fc, streams })
    }

    fn build(c: &HbaFunction) -> Hba {
        Hba::new(c.hba.clone(), c.fc.clone(), c.streams)
    }
    inherent_behaviour!(Hba, HbaEv, link);
    fn ceiling(&self) -> BytesPerSec {
        self.fc.goodput_ceiling()
    }
    fn dma(c: &HbaFunction) -> DmaCfg {
        c.hba.dma
    }
    fn wire_rate(c: &HbaFunction) -> BytesPerSec {
        c.fc.byte_rate
    }
    fn busy(c: &HbaFunction) -> bool {
        c.streams.0.is_some() || c.streams.1.is_some()
    }
    fn processes(c: &HbaFunction) -> [bool; 2] {
        // diskbench issues its I/Os from one process.
        [Self::busy(c), false]
    }
    fn process_names(_: &HbaFunction) -> [&'static str; 2] {
        ["diskbench", ""]
    }
    fn reads(_: &HbaFunction) -> Reads {
        Reads {
            disk: true,
            ..Reads::default()
        }
    }
}

/// What an HBA waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HbaEv {
    /// DMA: the control block of I/O `io` has been read.
    Cmd(usize),
    /// Card processor: I/O `io` is set up; its command may leave.
    Processed(usize),
    /// DMA: a frame of write data of I/O `io` (bytes) has been read.
    WriteData(usize, u64),
    /// DMA: a frame of read data of I/O `io` (bytes) has been written.
    ReadData(usize, u64),
    /// DMA: the completion entry of I/O `io` has been written.
    Completion(usize),
    /// CPU: the application has issued I/O `io` through the driver.
    Issued(usize),
    /// CPU: the driver has completed I/O `io`.
    Completed(usize),
    /// Timer: the array is ready with I/O `io` (data or XFER_RDY).
    TargetReady(usize),
    /// Timer: the array has all data of write `io` and responds.
    TargetDone(usize),
}

fn ev<T: From<HbaEv>>(e: HbaEv) -> T {
    T::from(e)
}

/// One I/O in flight.
#[derive(Debug, Clone, Copy, Default)]
struct Io {
    write: bool,
    bytes: u64,
    to_fetch: u64,
    arrived: u64,
    written: u64,
    rsp: bool,
    completing: bool,
}

/// HBA state, with the disk array at the far end.
#[derive(Debug)]
pub struct Hba {
    /// Engine.
    pub cfg: HbaCfg,
    /// Link framing.
    pub fc: FcCfg,
    bench: Diskbench,
    ios: Vec<Io>,
    free: Vec<usize>,
    out_frames: VecDeque<Frame>,
    tx_buffers_used: u32,
    write_fetch: VecDeque<usize>,
    rx_credits: u32,
    rx_queue: VecDeque<Frame>,
    rx_dma_busy: bool,
    target_ctrl: VecDeque<Frame>,
    target_data: VecDeque<(usize, u64)>,
    /// Write payload received by the array since the last reset.
    pub delivered_out: u64,
    /// Read payload written to host memory since the last reset.
    pub delivered_in: u64,
}

/// FCP_CMND payload bytes.
const FCP_CMND: u64 = 32;
/// FCP_XFER_RDY payload bytes.
const FCP_XFER_RDY: u64 = 12;
/// FCP_RSP payload bytes (no sense data).
const FCP_RSP: u64 = 24;

impl Hba {
    /// An HBA with (write, read) diskbench streams of (block bytes, outstanding).
    pub fn new(cfg: HbaCfg, fc: FcCfg, streams: DiskStreams) -> Hba {
        let credits = cfg.rx_buffers;
        Hba {
            cfg,
            fc,
            bench: Diskbench::new(streams),
            ios: Vec::new(),
            free: Vec::new(),
            out_frames: VecDeque::new(),
            tx_buffers_used: 0,
            write_fetch: VecDeque::new(),
            rx_credits: credits,
            rx_queue: VecDeque::new(),
            rx_dma_busy: false,
            target_ctrl: VecDeque::new(),
            target_data: VecDeque::new(),
            delivered_out: 0,
            delivered_in: 0,
        }
    }

    fn control(&self, kind: FrameKind, payload: u64) -> Frame {
        Frame {
            bytes: payload,
            payload: 0,
            wire_bytes: self.fc.wire_bytes(payload),
            kind,
        }
    }

    fn data(&self, io: usize, payload: u64) -> Frame {
        Frame {
            bytes: payload,
            payload,
            wire_bytes: self.fc.wire_bytes(payload),
            kind: FrameKind::FcData(io),
        }
    }

    fn half_io_cost<T: Token<HbaEv>>(cx: &Ctx<'_, T>) -> Picos {
        Picos(cx.stack().per_io.0 / 2)
    }

    /// Starts diskbench: every outstanding I/O of each stream is issued.
    pub fn start<T: Token<HbaEv>>(&mut self, cx: &mut Ctx<'_, T>) {
        for write in self.bench.initial() {
            self.issue(write, cx);
        }
    }

    /// Starts the next frame on wire `way` if it is idle.
    pub fn kick<T: Token<HbaEv>>(&mut self, way: Way, cx: &mut Ctx<'_, T>) {
        kick_wire(cx, way, || self.next_frame(way));
    }

    fn issue<T: Token<HbaEv>>(&mut self, write: bool, cx: &mut Ctx<'_, T>) {
        let Some(bytes) = self.bench.block(write) else {
            return;
        };
        let io = Io {
            write,
            bytes,
            to_fetch: bytes,
            ..Default::default()
        };
        let id = match self.free.pop() {
            Some(i) => {
                self.ios[i] = io;
                i
            }
            None => {
                self.ios.push(io);
                self.ios.len() - 1
            }
        };
        let cost = Self::half_io_cost(cx);
        cx.cpu(CpuRole::Send, cost, ev(HbaEv::Issued(id)), 0);
    }

    /// Handles one of the HBA's events.
    pub fn handle<T: Token<HbaEv>>(&mut self, e: HbaEv, cx: &mut Ctx<'_, T>) {
        match e {
            HbaEv::Issued(io) => cx.dma_read(self.cfg.command, ev(HbaEv::Cmd(io))),
            HbaEv::Completed(io) => {
                let write = self.ios[io].write;
                self.free.push(io);
                self.issue(write, cx);
            }
            HbaEv::Cmd(io) if self.cfg.processor_per_io > Picos(0) => {
                cx.card_processor(self.cfg.processor_per_io, ev(HbaEv::Processed(io)));
            }
            HbaEv::Cmd(io) | HbaEv::Processed(io) => {
                let frame = self.control(FrameKind::FcCmd(io), FCP_CMND);
                self.out_frames.push_back(frame);
                self.kick(Way::Out, cx);
            }
            HbaEv::WriteData(io, bytes) => {
                let frame = self.data(io, bytes);
                self.out_frames.push_back(frame);
                self.kick(Way::Out, cx);
            }
            HbaEv::ReadData(io, bytes) => {
                self.rx_dma_busy = false;
                self.rx_credits += 1;
                self.ios[io].written += bytes;
                self.delivered_in += bytes;
                self.maybe_complete(io, cx);
                self.rx_pump(cx);
                self.kick(Way::In, cx);
            }
            HbaEv::Completion(io) => {
                let cost = Self::half_io_cost(cx);
                let reads = self.cfg.pio_reads;
                cx.cpu(CpuRole::Interrupt, cost, ev(HbaEv::Completed(io)), reads);
            }
            HbaEv::TargetReady(io) => {
                let st = self.ios[io];
                if st.write {
                    let fr = self.control(FrameKind::FcXferRdy(io), FCP_XFER_RDY);
                    self.target_ctrl.push_back(fr);
                } else {
                    self.target_data.push_back((io, st.bytes));
                }
                self.kick(Way::In, cx);
            }
            HbaEv::TargetDone(io) => {
                let fr = self.control(FrameKind::FcRsp(io), FCP_RSP);
                self.target_ctrl.push_back(fr);
                self.kick(Way::In, cx);
            }
        }
    }

    /// Fetches write data into free transmit buffers.
    fn fill<T: Token<HbaEv>>(&mut self, cx: &mut Ctx<'_, T>) {
        loop {
            if self.tx_buffers_used >= self.cfg.tx_buffers {
                return;
            }
            let Some(&io) = self.write_fetch.front() else {
                return;
            };
            let chunk = self.ios[io].to_fetch.min(self.fc.max_payload);
            self.ios[io].to_fetch -= chunk;
            if self.ios[io].to_fetch == 0 {
                self.write_fetch.pop_front();
            }
            self.tx_buffers_used += 1;
            cx.dma_read(chunk, ev(HbaEv::WriteData(io, chunk)));
        }
    }

    fn rx_pump<T: Token<HbaEv>>(&mut self, cx: &mut Ctx<'_, T>) {
        if self.rx_dma_busy {
            return;
        }
        let Some(frame) = self.rx_queue.pop_front() else {
            return;
        };
        self.rx_dma_busy = true;
        if let FrameKind::FcData(io) = frame.kind {
            cx.dma_write(frame.payload, ev(HbaEv::ReadData(io, frame.payload)));
        }
    }

    fn maybe_complete<T: Token<HbaEv>>(&mut self, io: usize, cx: &mut Ctx<'_, T>) {
        let st = self.ios[io];
        let done = st.rsp && !st.completing && (st.write || st.written >= st.bytes);
        if done {
            self.ios[io].completing = true;
            cx.dma_write(self.cfg.completion, ev(HbaEv::Completion(io)));
        }
    }

    /// The next frame for wire `way`.
    fn next_frame(&mut self, way: Way) -> Option<Frame> {
        match way {
            Way::Out => self.out_frames.pop_front(),
            Way::In => {
                if let Some(fr) = self.target_ctrl.pop_front() {
                    return Some(fr);
                }
                if self.rx_credits == 0 {
                    return None;
                }
                let max_payload = self.fc.max_payload;
                let (io, left) = self.target_data.front_mut()?;
                let io = *io;
                let chunk = (*left).min(max_payload);
                *left -= chunk;
                if *left == 0 {
                    self.target_data.pop_front();
                    let rsp = self.control(FrameKind::FcRsp(io), FCP_RSP);
                    self.target_ctrl.push_back(rsp);
                }
                self.rx_credits -= 1;
                Some(self.data(io, chunk))
            }
        }
    }

    /// A frame reached the end of wire `way`.
    pub fn frame_arrived<T: Token<HbaEv>>(&mut self, way: Way, frame: Frame, cx: &mut Ctx<'_, T>) {
        match (way, frame.kind) {
            (Way::Out, FrameKind::FcCmd(io)) => {
                // A read waits for the array; a write is accepted into its cache at once.
                let delay = if self.ios[io].write {
                    Picos(0)
                } else {
                    cx.testbed().target_service(self.ios[io].bytes)
                };
                cx.after(delay, ev(HbaEv::TargetReady(io)));
            }
            (Way::Out, FrameKind::FcData(io)) => {
                self.tx_buffers_used -= 1;
                self.delivered_out += frame.payload;
                self.ios[io].arrived += frame.payload;
                if self.ios[io].arrived >= self.ios[io].bytes {
                    let latency = cx.testbed().target_service(self.ios[io].bytes);
                    cx.after(latency, ev(HbaEv::TargetDone(io)));
                }
                self.fill(cx);
            }
            (Way::In, FrameKind::FcXferRdy(io)) => {
                self.write_fetch.push_back(io);
                self.fill(cx);
            }
            (Way::In, FrameKind::FcData(_)) => {
                self.rx_queue.push_back(frame);
                self.rx_pump(cx);
            }
            (Way::In, FrameKind::FcRsp(io)) => {
                self.ios[io].rsp = true;
                self.maybe_complete(io, cx);
            }
            _ => {}
        }
    }
}
