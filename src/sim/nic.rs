//! An Ethernet NIC function running netperf TCP_STREAM against an ideal peer.
//!
//! Bus transactions per full-size transmitted segment:
//! 1. read of one transmit descriptor (`descriptor` bytes);
//! 2. read of the frame (MAC header to payload), in `max_read` requests;
//! 3. posted write of the descriptor back once the frame has left.
//!
//! Per received frame (data segment or ACK):
//! 1. posted write of the frame, in `write_burst` bursts;
//! 2. posted write of a status descriptor;
//! 3. every `rx_descriptor_batch` frames, a read of that many fresh descriptors;
//! 4. `pio_reads_per_interrupt` register reads by the interrupt CPU (one
//!    interrupt per frame), each mastered by the bridge, its value returning
//!    up the ropes behind the posted writes; the CPU stalls meanwhile.
//!
//! The driver queues at most `tx_ring_frames` data segments for transmission
//! (ACKs are always queued).
//! The peer processes each received segment in `peer_cpu_per_segment`, one
//! at a time, and ACKs `peer_turnaround` after it.
//! The host stack spends `cpu_per_segment_sent` per data segment sent (on the
//! send CPU), `cpu_per_packet` per segment or ACK received (on the interrupt
//! CPU) and `cpu_per_packet` per ACK sent (on the reader CPU), each plus
//! `cpu_per_kb` of payload and `cpu_misses_per_packet` stalls at the
//! partition's mean CPU memory latency (see `cpu` for the three CPUs); the
//! receiver ACKs every `tcp_ack_every` segments. The sender
//! keeps at most one socket's worth (the TCP window) unacknowledged. The peer
//! is ideal: it ACKs after `peer_turnaround` and sends whenever the window and
//! the NIC's receive FIFO allow (802.3x flow control: no drops, no retransmits).
//! Left out: interrupt coalescing, delayed-ACK timers, checksum work (offloaded).

use std::collections::VecDeque;

use super::config::{EthCfg, NicCfg};
use super::cpu::CpuWork;
use super::dma::Purpose;
use super::wire::{Frame, FrameKind, Way};
use super::{Ev, System};
use crate::engine::Scheduler;
use crate::units::Picos;

/// The server sending to the peer.
#[derive(Debug, Default)]
pub struct TcpOut {
    window: u64,
    snd_nxt: u64,
    snd_una: u64,
    building: bool,
    peer_segments: u32,
    peer_busy_until: Picos,
}

/// The peer sending to the server.
#[derive(Debug, Default)]
pub struct TcpIn {
    window: u64,
    peer_nxt: u64,
    peer_una: u64,
    segments: u32,
}

/// NIC state.
#[derive(Debug)]
pub struct Nic {
    /// Engine.
    pub cfg: NicCfg,
    /// Link framing.
    pub eth: EthCfg,
    tx_ring: VecDeque<Frame>,
    fetching: Option<Frame>,
    tx_fifo: VecDeque<Frame>,
    tx_fifo_used: u64,
    rx_fifo: VecDeque<Frame>,
    rx_fifo_used: u64,
    rx_dma_busy: bool,
    rx_desc: u32,
    rx_desc_fetching: bool,
    peer_acks: VecDeque<Frame>,
    out: Option<TcpOut>,
    inn: Option<TcpIn>,
    /// Payload delivered to the peer since the last reset.
    pub delivered_out: u64,
    /// Payload delivered to the server's application since the last reset.
    pub delivered_in: u64,
}

impl Nic {
    /// A NIC with the given streams' windows.
    pub fn new(cfg: NicCfg, eth: EthCfg, streams: (Option<u64>, Option<u64>)) -> Nic {
        Nic {
            cfg,
            eth,
            tx_ring: VecDeque::new(),
            fetching: None,
            tx_fifo: VecDeque::new(),
            tx_fifo_used: 0,
            rx_fifo: VecDeque::new(),
            rx_fifo_used: 0,
            rx_dma_busy: false,
            rx_desc: 0,
            rx_desc_fetching: false,
            peer_acks: VecDeque::new(),
            out: streams.0.map(|w| TcpOut {
                window: w,
                ..Default::default()
            }),
            inn: streams.1.map(|w| TcpIn {
                window: w,
                ..Default::default()
            }),
            delivered_out: 0,
            delivered_in: 0,
        }
    }

    /// Frames queued for transmission: in the ring, being fetched, or in the FIFO.
    fn queued_frames(&self) -> usize {
        self.tx_ring.len() + self.tx_fifo.len() + usize::from(self.fetching.is_some())
    }

    fn data_frame(&self, end: u64) -> Frame {
        Frame {
            bytes: self.eth.frame,
            payload: self.eth.mss,
            wire_bytes: self.eth.wire_bytes(self.eth.frame),
            kind: FrameKind::EthData { end },
        }
    }

    fn ack_frame(&self, ack: u64) -> Frame {
        Frame {
            bytes: self.eth.ack_frame,
            payload: 0,
            wire_bytes: self.eth.wire_bytes(self.eth.ack_frame),
            kind: FrameKind::EthAck { ack },
        }
    }
}

impl System {
    fn nic(&mut self, f: usize) -> &mut Nic {
        match &mut self.funcs[f] {
            super::Func::Nic(n) => n,
            super::Func::Hba(_) => unreachable!("function {f} is an HBA, not a NIC"),
        }
    }

    fn packet_cost(&self, payload: u64) -> Picos {
        let c = &self.cfg.cpu;
        c.per_packet + Picos((c.per_kib_ps * payload as f64 / 1024.0).round() as u64)
    }

    /// Starts the NIC's streams.
    pub(super) fn nic_start(&mut self, f: usize, s: &mut Scheduler<Ev>) {
        self.nic_try_send(f, s);
        self.nic_rx_pump(f, s);
        self.wire_kick(f, Way::In, s);
    }

    /// The sender builds another segment if the window allows.
    fn nic_try_send(&mut self, f: usize, s: &mut Scheduler<Ev>) {
        let nic = self.nic(f);
        let mss = nic.eth.mss;
        let ring_full = nic.queued_frames() >= nic.cfg.tx_ring as usize;
        let Some(out) = nic.out.as_mut() else {
            return;
        };
        if ring_full || out.building || out.snd_nxt - out.snd_una + mss > out.window {
            return;
        }
        out.building = true;
        let c = &self.cfg.cpu;
        let cost = c.per_segment_sent + Picos((c.per_kib_ps * mss as f64 / 1024.0).round() as u64);
        let cpu = super::cpu::send_cpu(self.funcs.len(), f);
        self.cpu_submit(cpu, cost, CpuWork::SendSegment(f), s);
    }

    /// A segment has been built: it joins the transmit ring.
    pub(super) fn nic_segment_built(&mut self, f: usize, s: &mut Scheduler<Ev>) {
        let nic = self.nic(f);
        let mss = nic.eth.mss;
        let end = match nic.out.as_mut() {
            Some(out) => {
                out.building = false;
                out.snd_nxt += mss;
                out.snd_nxt
            }
            None => return,
        };
        let frame = nic.data_frame(end);
        nic.tx_ring.push_back(frame);
        self.nic_tx_pump(f, s);
        self.nic_try_send(f, s);
    }

    /// An ACK has been built: it joins the transmit ring.
    pub(super) fn nic_ack_built(&mut self, f: usize, ack: u64, s: &mut Scheduler<Ev>) {
        let nic = self.nic(f);
        let frame = nic.ack_frame(ack);
        nic.tx_ring.push_back(frame);
        self.nic_tx_pump(f, s);
    }

    /// The transmit engine fetches the next frame if it has FIFO room.
    fn nic_tx_pump(&mut self, f: usize, s: &mut Scheduler<Ev>) {
        let nic = self.nic(f);
        if nic.fetching.is_some() {
            return;
        }
        let Some(&frame) = nic.tx_ring.front() else {
            return;
        };
        if nic.tx_fifo_used + frame.bytes > nic.cfg.tx_fifo {
            return;
        }
        nic.tx_ring.pop_front();
        nic.tx_fifo_used += frame.bytes;
        nic.fetching = Some(frame);
        let d = nic.cfg.descriptor;
        self.dma_read(f, d, Purpose::NicTxDesc, s);
    }

    /// The receive engine moves the next frame from its FIFO to host memory.
    fn nic_rx_pump(&mut self, f: usize, s: &mut Scheduler<Ev>) {
        let nic = self.nic(f);
        let batch = nic.cfg.rx_desc_batch;
        if !nic.rx_desc_fetching && nic.rx_desc <= batch / 2 {
            nic.rx_desc_fetching = true;
            let bytes = batch as u64 * nic.cfg.descriptor;
            self.dma_read(f, bytes, Purpose::NicRxDesc, s);
        }
        let nic = self.nic(f);
        if nic.rx_dma_busy || nic.rx_desc == 0 {
            return;
        }
        let Some(&frame) = nic.rx_fifo.front() else {
            return;
        };
        nic.rx_desc -= 1;
        nic.rx_dma_busy = true;
        self.dma_write(f, frame.bytes, Purpose::NicRxData, s);
    }

    /// A NIC DMA finished.
    pub(super) fn nic_dma_done(&mut self, f: usize, p: Purpose, s: &mut Scheduler<Ev>) {
        match p {
            Purpose::NicTxDesc => {
                let bytes = self.nic(f).fetching.map(|fr| fr.bytes).unwrap_or(0);
                self.dma_read(f, bytes, Purpose::NicTxData, s);
            }
            Purpose::NicTxData => {
                let nic = self.nic(f);
                if let Some(frame) = nic.fetching.take() {
                    nic.tx_fifo.push_back(frame);
                }
                self.wire_kick(f, Way::Out, s);
                self.nic_tx_pump(f, s);
            }
            Purpose::NicTxWriteback => {}
            Purpose::NicRxDesc => {
                let nic = self.nic(f);
                nic.rx_desc += nic.cfg.rx_desc_batch;
                nic.rx_desc_fetching = false;
                self.nic_rx_pump(f, s);
            }
            Purpose::NicRxData => {
                let nic = self.nic(f);
                nic.rx_dma_busy = false;
                let Some(frame) = nic.rx_fifo.pop_front() else {
                    return;
                };
                nic.rx_fifo_used -= frame.bytes;
                let d = nic.cfg.descriptor;
                self.dma_write(f, d, Purpose::NicRxStatus(frame.kind), s);
                self.nic_rx_pump(f, s);
                self.wire_kick(f, Way::In, s);
            }
            Purpose::NicRxStatus(kind) => match kind {
                FrameKind::EthData { end } => {
                    let mss = self.nic(f).eth.mss;
                    let cost = self.packet_cost(mss);
                    let cpu = super::cpu::interrupt_cpu(f);
                    self.cpu_submit(cpu, cost, CpuWork::ReceiveSegment(f, end), s);
                }
                FrameKind::EthAck { ack } => {
                    let cost = self.packet_cost(0);
                    let cpu = super::cpu::interrupt_cpu(f);
                    self.cpu_submit(cpu, cost, CpuWork::ReceiveAck(f, ack), s);
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// The host has processed a received segment.
    pub(super) fn nic_segment_received(&mut self, f: usize, end: u64, s: &mut Scheduler<Ev>) {
        let ack_every = self.cfg.cpu.ack_every;
        let mss = self.nic(f).eth.mss;
        let nic = self.nic(f);
        nic.delivered_in += mss;
        let Some(inn) = nic.inn.as_mut() else {
            return;
        };
        inn.segments += 1;
        if inn.segments >= ack_every {
            inn.segments = 0;
            let cost = self.packet_cost(0);
            let cpu = super::cpu::reader_cpu(self.funcs.len(), f);
            self.cpu_submit(cpu, cost, CpuWork::SendAck(f, end), s);
        }
    }

    /// The host has processed an ACK from the peer.
    pub(super) fn nic_ack_received(&mut self, f: usize, ack: u64, s: &mut Scheduler<Ev>) {
        if let Some(out) = self.nic(f).out.as_mut() {
            out.snd_una = out.snd_una.max(ack);
        }
        self.nic_try_send(f, s);
    }

    /// The next frame for wire `way` of NIC `f`.
    pub(super) fn nic_next_frame(&mut self, f: usize, way: Way) -> Option<Frame> {
        let nic = self.nic(f);
        match way {
            Way::Out => nic.tx_fifo.pop_front(),
            Way::In => {
                if let Some(&ack) = nic.peer_acks.front() {
                    if nic.rx_fifo_used + ack.bytes <= nic.cfg.rx_fifo {
                        nic.peer_acks.pop_front();
                        nic.rx_fifo_used += ack.bytes;
                        return Some(ack);
                    }
                    return None;
                }
                let mss = nic.eth.mss;
                let frame_bytes = nic.eth.frame;
                let inn = nic.inn.as_mut()?;
                if inn.peer_nxt - inn.peer_una + mss > inn.window
                    || nic.rx_fifo_used + frame_bytes > nic.cfg.rx_fifo
                {
                    return None;
                }
                inn.peer_nxt += mss;
                let end = inn.peer_nxt;
                nic.rx_fifo_used += frame_bytes;
                Some(nic.data_frame(end))
            }
        }
    }

    /// A frame reached the end of wire `way` of NIC `f`.
    pub(super) fn nic_frame_arrived(
        &mut self,
        f: usize,
        way: Way,
        frame: Frame,
        s: &mut Scheduler<Ev>,
    ) {
        match way {
            Way::Out => {
                let nic = self.nic(f);
                nic.tx_fifo_used -= frame.bytes;
                let d = nic.cfg.descriptor;
                self.dma_write(f, d, Purpose::NicTxWriteback, s);
                self.nic_tx_pump(f, s);
                self.nic_try_send(f, s);
                match frame.kind {
                    FrameKind::EthData { end } => {
                        let ack_every = self.cfg.cpu.ack_every;
                        let turnaround = self.cfg.testbed.peer_turnaround;
                        let per_segment = self.cfg.testbed.peer_per_segment;
                        let now = s.now();
                        let nic = self.nic(f);
                        nic.delivered_out += frame.payload;
                        if let Some(out) = nic.out.as_mut() {
                            // The peer processes segments one at a time.
                            let done = out.peer_busy_until.max(now) + per_segment;
                            out.peer_busy_until = done;
                            out.peer_segments += 1;
                            if out.peer_segments >= ack_every {
                                out.peer_segments = 0;
                                s.schedule_at(done + turnaround, Ev::PeerAck(f, end));
                            }
                        }
                    }
                    FrameKind::EthAck { ack } => {
                        if let Some(inn) = self.nic(f).inn.as_mut() {
                            inn.peer_una = inn.peer_una.max(ack);
                        }
                        self.wire_kick(f, Way::In, s);
                    }
                    _ => {}
                }
            }
            Way::In => {
                self.nic(f).rx_fifo.push_back(frame);
                self.nic_rx_pump(f, s);
            }
        }
    }

    /// The peer sends an ACK up to `ack`.
    pub(super) fn nic_peer_ack(&mut self, f: usize, ack: u64, s: &mut Scheduler<Ev>) {
        let nic = self.nic(f);
        let frame = nic.ack_frame(ack);
        nic.peer_acks.push_back(frame);
        self.wire_kick(f, Way::In, s);
    }
}
