//! A Fibre Channel HBA function running diskbench against an ideal disk array.
//!
//! Bus transactions per I/O of B bytes (FCP):
//! 1. read of the I/O control block (`command_bytes`);
//! 2. read I/O (disk to host): per data frame, a posted write of its payload
//!    (`write_burst` bursts); write I/O (host to disk): per data frame, reads
//!    of its payload in `max_read` requests, at most `max_outstanding_reads`
//!    in flight;
//! 3. a posted write of the completion entry (`completion_bytes`).
//!
//! On the link: FCP_CMND out; for a write, XFER_RDY in, then data frames out;
//! for a read, data frames in (one per free receive buffer); FCP_RSP in. The
//! disk array answers after `target_latency`: from a read's command to its
//! first data frame, and from a write's last data frame to its response
//! (XFER_RDY is immediate: the array accepts writes into its cache). The host spends `cpu_per_io` per I/O, half to issue
//! and half to complete, on the function's interrupt CPU. diskbench keeps
//! `outstanding` I/Os per direction. Left out: disk mechanics (the array's
//! cache serves every block), link errors, ABTS.

use std::collections::VecDeque;

use super::config::{DiskStreams, FcCfg, HbaCfg};
use super::cpu::CpuWork;
use super::dma::Purpose;
use super::wire::{Frame, FrameKind, Way};
use super::{Ev, System};
use crate::engine::Scheduler;
use crate::units::Picos;

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
    streams: DiskStreams,
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

impl Hba {
    /// An HBA with (write, read) diskbench streams of (block bytes, outstanding).
    pub fn new(cfg: HbaCfg, fc: FcCfg, streams: DiskStreams) -> Hba {
        let credits = cfg.rx_buffers;
        Hba {
            cfg,
            fc,
            streams,
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
}

/// FCP_CMND payload bytes.
const FCP_CMND: u64 = 32;
/// FCP_XFER_RDY payload bytes.
const FCP_XFER_RDY: u64 = 12;
/// FCP_RSP payload bytes (no sense data).
const FCP_RSP: u64 = 24;

impl System {
    fn hba(&mut self, f: usize) -> &mut Hba {
        match &mut self.funcs[f] {
            super::Func::Hba(h) => h,
            super::Func::Nic(_) => unreachable!("function {f} is a NIC, not an HBA"),
        }
    }

    fn half_io_cost(&self) -> Picos {
        Picos(self.cfg.cpu.per_io.0 / 2)
    }

    /// Starts diskbench: every outstanding I/O of each stream is issued.
    pub(super) fn hba_start(&mut self, f: usize, s: &mut Scheduler<Ev>) {
        let (w, r) = self.hba(f).streams;
        for (write, stream) in [(true, w), (false, r)] {
            if let Some((_, n)) = stream {
                for _ in 0..n {
                    self.hba_issue(f, write, s);
                }
            }
        }
    }

    fn hba_issue(&mut self, f: usize, write: bool, s: &mut Scheduler<Ev>) {
        let h = self.hba(f);
        let stream = if write { h.streams.0 } else { h.streams.1 };
        let Some((bytes, _)) = stream else {
            return;
        };
        let io = Io {
            write,
            bytes,
            to_fetch: bytes,
            ..Default::default()
        };
        let id = match h.free.pop() {
            Some(i) => {
                h.ios[i] = io;
                i
            }
            None => {
                h.ios.push(io);
                h.ios.len() - 1
            }
        };
        let cost = self.half_io_cost();
        self.cpu_submit(f, cost, CpuWork::IssueIo(f, id), s);
    }

    /// The driver has queued I/O `io`: the HBA fetches its control block.
    pub(super) fn hba_issued(&mut self, f: usize, io: usize, s: &mut Scheduler<Ev>) {
        let c = self.hba(f).cfg.command;
        self.dma_read(f, c, Purpose::HbaCmd(io), s);
    }

    /// The completion of I/O `io` has been processed: diskbench issues another.
    pub(super) fn hba_completed(&mut self, f: usize, io: usize, s: &mut Scheduler<Ev>) {
        let h = self.hba(f);
        let write = h.ios[io].write;
        h.free.push(io);
        self.hba_issue(f, write, s);
    }

    /// An HBA DMA finished.
    pub(super) fn hba_dma_done(&mut self, f: usize, p: Purpose, s: &mut Scheduler<Ev>) {
        match p {
            Purpose::HbaCmd(io) => {
                let h = self.hba(f);
                let frame = h.control(FrameKind::FcCmd(io), FCP_CMND);
                h.out_frames.push_back(frame);
                self.wire_kick(f, Way::Out, s);
            }
            Purpose::HbaWriteData(io, bytes) => {
                let h = self.hba(f);
                let frame = h.data(io, bytes);
                h.out_frames.push_back(frame);
                self.wire_kick(f, Way::Out, s);
            }
            Purpose::HbaReadData(io, bytes) => {
                let h = self.hba(f);
                h.rx_dma_busy = false;
                h.rx_credits += 1;
                h.ios[io].written += bytes;
                h.delivered_in += bytes;
                self.hba_maybe_complete(f, io, s);
                self.hba_rx_pump(f, s);
                self.wire_kick(f, Way::In, s);
            }
            Purpose::HbaCompletion(io) => {
                let cost = self.half_io_cost();
                self.cpu_submit(f, cost, CpuWork::CompleteIo(f, io), s);
            }
            _ => {}
        }
    }

    /// Fetches write data into free transmit buffers.
    fn hba_fill(&mut self, f: usize, s: &mut Scheduler<Ev>) {
        loop {
            let h = self.hba(f);
            if h.tx_buffers_used >= h.cfg.tx_buffers {
                return;
            }
            let Some(&io) = h.write_fetch.front() else {
                return;
            };
            let chunk = h.ios[io].to_fetch.min(h.fc.max_payload);
            h.ios[io].to_fetch -= chunk;
            if h.ios[io].to_fetch == 0 {
                h.write_fetch.pop_front();
            }
            h.tx_buffers_used += 1;
            self.dma_read(f, chunk, Purpose::HbaWriteData(io, chunk), s);
        }
    }

    fn hba_rx_pump(&mut self, f: usize, s: &mut Scheduler<Ev>) {
        let h = self.hba(f);
        if h.rx_dma_busy {
            return;
        }
        let Some(frame) = h.rx_queue.pop_front() else {
            return;
        };
        h.rx_dma_busy = true;
        if let FrameKind::FcData(io) = frame.kind {
            self.dma_write(f, frame.payload, Purpose::HbaReadData(io, frame.payload), s);
        }
    }

    fn hba_maybe_complete(&mut self, f: usize, io: usize, s: &mut Scheduler<Ev>) {
        let h = self.hba(f);
        let st = h.ios[io];
        let done = st.rsp && !st.completing && (st.write || st.written >= st.bytes);
        if done {
            h.ios[io].completing = true;
            let c = h.cfg.completion;
            self.dma_write(f, c, Purpose::HbaCompletion(io), s);
        }
    }

    /// The next frame for wire `way` of HBA `f`.
    pub(super) fn hba_next_frame(&mut self, f: usize, way: Way) -> Option<Frame> {
        let h = self.hba(f);
        match way {
            Way::Out => h.out_frames.pop_front(),
            Way::In => {
                if let Some(fr) = h.target_ctrl.pop_front() {
                    return Some(fr);
                }
                if h.rx_credits == 0 {
                    return None;
                }
                let (io, left) = h.target_data.front_mut()?;
                let io = *io;
                let chunk = (*left).min(h.fc.max_payload);
                *left -= chunk;
                if *left == 0 {
                    h.target_data.pop_front();
                    let rsp = h.control(FrameKind::FcRsp(io), FCP_RSP);
                    h.target_ctrl.push_back(rsp);
                }
                h.rx_credits -= 1;
                Some(h.data(io, chunk))
            }
        }
    }

    /// A frame reached the end of wire `way` of HBA `f`.
    pub(super) fn hba_frame_arrived(
        &mut self,
        f: usize,
        way: Way,
        frame: Frame,
        s: &mut Scheduler<Ev>,
    ) {
        let latency = self.cfg.testbed.target_latency;
        match (way, frame.kind) {
            (Way::Out, FrameKind::FcCmd(io)) => {
                // A read waits for the array; a write is accepted into its cache at once.
                let delay = if self.hba(f).ios[io].write {
                    Picos(0)
                } else {
                    latency
                };
                s.schedule_in(delay, Ev::TargetReady(f, io));
            }
            (Way::Out, FrameKind::FcData(io)) => {
                let h = self.hba(f);
                h.tx_buffers_used -= 1;
                h.delivered_out += frame.payload;
                h.ios[io].arrived += frame.payload;
                if h.ios[io].arrived >= h.ios[io].bytes {
                    s.schedule_in(latency, Ev::TargetDone(f, io));
                }
                self.hba_fill(f, s);
            }
            (Way::In, FrameKind::FcXferRdy(io)) => {
                self.hba(f).write_fetch.push_back(io);
                self.hba_fill(f, s);
            }
            (Way::In, FrameKind::FcData(_)) => {
                self.hba(f).rx_queue.push_back(frame);
                self.hba_rx_pump(f, s);
            }
            (Way::In, FrameKind::FcRsp(io)) => {
                self.hba(f).ios[io].rsp = true;
                self.hba_maybe_complete(f, io, s);
            }
            _ => {}
        }
    }

    /// The array is ready with I/O `io`: data for a read, XFER_RDY for a write.
    pub(super) fn hba_target_ready(&mut self, f: usize, io: usize, s: &mut Scheduler<Ev>) {
        let h = self.hba(f);
        let st = h.ios[io];
        if st.write {
            let fr = h.control(FrameKind::FcXferRdy(io), FCP_XFER_RDY);
            h.target_ctrl.push_back(fr);
        } else {
            h.target_data.push_back((io, st.bytes));
        }
        self.wire_kick(f, Way::In, s);
    }

    /// The array has all data of write `io`: it sends FCP_RSP.
    pub(super) fn hba_target_done(&mut self, f: usize, io: usize, s: &mut Scheduler<Ev>) {
        let h = self.hba(f);
        let fr = h.control(FrameKind::FcRsp(io), FCP_RSP);
        h.target_ctrl.push_back(fr);
        self.wire_kick(f, Way::In, s);
    }
}
