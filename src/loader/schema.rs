//! The parameters each kind of model file must declare: unit dimension,
//! plausible range (in base units) and physical meaning. Defaults live nowhere
//! else: a model file states every parameter with its source.

use crate::units::Dimension::{self, *};

/// One parameter a model kind requires.
pub struct ParamRule {
    /// Key in the TOML table.
    pub key: &'static str,
    /// Physical dimension the unit must have.
    pub dim: Dimension,
    /// Smallest plausible value, in the base unit.
    pub min: f64,
    /// Largest plausible value, in the base unit.
    pub max: f64,
    /// What it means.
    pub meaning: &'static str,
}

const fn r(
    key: &'static str,
    dim: Dimension,
    min: f64,
    max: f64,
    meaning: &'static str,
) -> ParamRule {
    ParamRule {
        key,
        dim,
        min,
        max,
        meaning,
    }
}

/// Parameters of a bus mode.
pub const BUS: &[ParamRule] = &[
    r("clock", Frequency, 10.0, 600.0, "bus clock frequency"),
    r(
        "transfers_per_clock",
        Count,
        1.0,
        4.0,
        "data transfers per clock (2 for DDR, 4 for QDR)",
    ),
    r("width", Size, 4.0, 8.0, "data path width"),
    r(
        "write_overhead_clocks",
        Count,
        1.0,
        20.0,
        "clocks of a posted write besides data: address, attribute, target response, turnaround",
    ),
    r(
        "read_request_clocks",
        Count,
        1.0,
        20.0,
        "clocks of a read attempt answered with Retry (PCI) or Split Response (PCI-X)",
    ),
    r(
        "completion_overhead_clocks",
        Count,
        1.0,
        20.0,
        "clocks of a read data transaction besides data (PCI retried read, PCI-X split completion)",
    ),
    r(
        "latency_timer_clocks",
        Count,
        8.0,
        255.0,
        "a master must end its burst after this many clocks when another master waits",
    ),
    r(
        "max_burst",
        Size,
        64.0,
        4096.0,
        "largest data burst of one transaction (buffer or disconnect boundary)",
    ),
];

/// Parameters of an Ethernet link.
pub const ETHERNET: &[ParamRule] = &[
    r("line_rate", Rate, 1e5, 1e10, "signalling rate of data bits"),
    r("mtu", Size, 576.0, 65536.0, "largest IP packet"),
    r("header", Size, 14.0, 22.0, "MAC header"),
    r("fcs", Size, 4.0, 4.0, "frame check sequence"),
    r("preamble", Size, 8.0, 8.0, "preamble and start delimiter"),
    r("gap", Size, 12.0, 12.0, "minimum inter-frame gap"),
    r(
        "min_frame",
        Size,
        64.0,
        64.0,
        "minimum frame (header to FCS)",
    ),
    r(
        "tcp_ip_headers",
        Size,
        40.0,
        80.0,
        "IPv4 and TCP headers with options, per segment",
    ),
];

/// Parameters of a Fibre Channel link.
pub const FIBRE_CHANNEL: &[ParamRule] = &[
    r("baud", SymbolRate, 1e8, 2e10, "line symbol rate"),
    r(
        "bits_per_byte",
        Count,
        8.0,
        10.0,
        "encoded bits per data byte (10 for 8b/10b)",
    ),
    r(
        "frame_overhead",
        Size,
        36.0,
        36.0,
        "SOF, header, CRC and EOF per frame",
    ),
    r(
        "idle_between_frames",
        Size,
        24.0,
        48.0,
        "primitive signals between frames",
    ),
    r("max_payload", Size, 256.0, 2112.0, "data payload per frame"),
];

/// Parameters of a server (memory, I/O path, CPUs, stack costs).
pub const SERVER: &[ParamRule] = &[
    r("cells_max", Count, 1.0, 16.0, "cells a partition can have"),
    r("cpus_per_cell", Count, 1.0, 64.0, "CPUs in a cell"),
    r("memory_local_latency", Time, 50.0, 2000.0, "latency of a cache line from the cell's own memory"),
    r("memory_remote_latency", Time, 50.0, 5000.0, "latency of a cache line from another cell's memory, for DMA"),
    r("cache_line", Size, 32.0, 256.0, "coherency unit; memory is interleaved over cells by line"),
    r("line_fetches_in_flight", Count, 1.0, 64.0, "cache-line fetches a DMA read keeps in flight"),
    r("io_read_latency", Time, 100.0, 20000.0, "fixed round trip of a DMA read through bus adapter, ropes, SBA and cell controller (memory and data time excluded)"),
    r("rope_bandwidth", Rate, 5e7, 4e9, "data rate of one rope in each direction"),
    r("rope_packet_overhead", Size, 0.0, 64.0, "header bytes per rope packet"),
    r("cpu_per_packet", Time, 100.0, 200000.0, "CPU time per packet received and per ACK sent (interrupt, driver, TCP/IP), memory stalls excluded"),
    r("cpu_per_segment_sent", Time, 100.0, 200000.0, "CPU time to build and send one data segment (socket copy, TCP output, driver), memory stalls excluded"),
    r("cpu_misses_per_packet", Count, 0.0, 500.0, "cache misses to memory per packet handled; each stalls the CPU for the partition's mean load-to-use latency"),
    r("cpu_remote_memory_latency", Time, 50.0, 5000.0, "CPU load-to-use latency of a line held by another cell"),
    r("cpu_per_kb", Time, 0.0, 100000.0, "CPU time per KiB of network payload (copy, checksum)"),
    r("cpu_per_io", Time, 1000.0, 1000000.0, "CPU time per disk I/O (issue, interrupt, completion)"),
    r("tcp_ack_every", Count, 1.0, 8.0, "segments acknowledged by one ACK"),
];

/// Parameters of the bus adapter (bridge) above a slot.
pub const BRIDGE: &[ParamRule] = &[
    r(
        "posted_write_buffer",
        Size,
        64.0,
        1048576.0,
        "posted-write data the bridge holds before it stalls the bus",
    ),
    r(
        "delayed_read_slots",
        Count,
        1.0,
        8.0,
        "delayed reads the bridge queues at once (PCI mode)",
    ),
    r(
        "delayed_read_prefetch",
        Size,
        64.0,
        8192.0,
        "bytes the bridge fetches for one delayed read (PCI mode)",
    ),
    r(
        "retry_interval",
        Time,
        0.0,
        20000.0,
        "time a retried master waits before it asks for the bus again",
    ),
    r(
        "register_reads_use_delayed_slots",
        Count,
        0.0,
        1.0,
        "1 if a CPU's register read in PCI mode waits for a free delayed-read slot, as a DMA read does; 0 if the bridge tracks it apart",
    ),
];

/// The rules every DMA engine shares, spliced into [`NIC`] and [`HBA`].
macro_rules! dma_engine_rules {
    ($($extra:expr),* $(,)?) => {
        &[
        r(
            "max_read",
            Size,
            64.0,
            4096.0,
            "bytes per DMA read request (PCI-X Maximum Memory Read Byte Count)",
        ),
        r(
            "max_outstanding_reads",
            Count,
            1.0,
            32.0,
            "DMA read requests in flight at once",
        ),
        r(
            "write_burst",
            Size,
            64.0,
            4096.0,
            "bytes per DMA write burst",
        ),
        $($extra),*
        ]
    };
}

/// Parameters of a NIC function.
pub const NIC: &[ParamRule] = dma_engine_rules![
    r("descriptor", Size, 8.0, 64.0, "size of one ring descriptor"),
    r(
        "rx_descriptor_batch",
        Count,
        1.0,
        64.0,
        "receive descriptors fetched by one read",
    ),
    r(
        "tx_ring_frames",
        Count,
        1.0,
        4096.0,
        "frames the driver keeps queued for transmission (transmit ring)",
    ),
    r("tx_fifo", Size, 2048.0, 1048576.0, "on-chip transmit FIFO"),
    r("rx_fifo", Size, 2048.0, 1048576.0, "on-chip receive FIFO"),
    r(
        "pio_reads_per_interrupt",
        Count,
        0.0,
        16.0,
        "register reads the driver makes per interrupt (one per received frame), each stalling the interrupt CPU for a round trip across the bus",
    ),
];

/// Parameters of a raw DMA test function (a bus-test card with no link).
pub const RAW_DMA: &[ParamRule] = dma_engine_rules![];

/// Parameters of a Fibre Channel HBA function.
pub const HBA: &[ParamRule] = dma_engine_rules![
    r(
        "command_bytes",
        Size,
        16.0,
        256.0,
        "I/O control block the HBA reads per command",
    ),
    r(
        "completion_bytes",
        Size,
        4.0,
        256.0,
        "completion entry the HBA writes per I/O",
    ),
    r(
        "rx_buffer_frames",
        Count,
        1.0,
        256.0,
        "receive buffers (buffer-to-buffer credit)",
    ),
    r(
        "tx_buffer_frames",
        Count,
        1.0,
        256.0,
        "transmit frame buffers",
    ),
];

/// Parameters of a test bed (the machines at the far end of the links).
pub const TESTBED: &[ParamRule] = &[
    r(
        "peer_turnaround",
        Time,
        0.0,
        1e7,
        "delay from the netperf peer finishing a segment to its ACK leaving",
    ),
    r(
        "peer_cpu_per_segment",
        Time,
        0.0,
        1e5,
        "netperf peer's receive processing per data segment (segments are processed one at a time)",
    ),
    r(
        "target_latency",
        Time,
        0.0,
        1e8,
        "disk array service time: read command to first data, last write data to response",
    ),
    r(
        "diskbench_outstanding",
        Count,
        1.0,
        256.0,
        "diskbench I/Os outstanding per direction",
    ),
];

/// The plausible range (base unit) of the parameter at dotted `path`, found
/// by its last component in every rule list.
pub fn range_of(path: &str) -> Option<(f64, f64)> {
    let key = path.rsplit('.').next()?;
    [
        BUS,
        ETHERNET,
        FIBRE_CHANNEL,
        SERVER,
        BRIDGE,
        NIC,
        HBA,
        RAW_DMA,
        TESTBED,
    ]
    .iter()
    .flat_map(|rules| rules.iter())
    .find(|r| r.key == key)
    .map(|r| (r.min, r.max))
}
