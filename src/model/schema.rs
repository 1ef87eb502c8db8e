//! The parameters each kind of model file must declare: unit dimension,
//! plausible range (in base units) and physical meaning, and for each kind a
//! typed struct of its values that the simulator reads (so a misspelt or
//! missing key is an error, never a silent zero). Defaults live nowhere
//! else: a model file states every parameter with its source, except a rule
//! marked `absent = "..."`, whose absence switches its mechanism off (the
//! text says what absence means), so a new mechanism's parameter does not
//! force an edit of every existing model file.

use super::ParamSet;
use crate::error::{Error, Location, Result};
use crate::units::Dimension;

/// One parameter a model kind declares.
#[derive(Debug, Clone, Copy, PartialEq)]
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
    /// For an optional parameter, what its absence means (its mechanism is
    /// off); `None` for a required one.
    pub absent: Option<&'static str>,
    /// True when the parameter counts whole things (slots, CPUs, clocks,
    /// bytes, frames): a value that is not a whole number in the base unit is
    /// refused, never rounded.
    pub whole: bool,
}

/// Defines a model kind: its rule list `$rules` and the typed struct `$ty` of
/// its values (base units; `Option<f64>` for an optional parameter). A rule
/// reads `key: Dimension, min, max, "meaning"`, with `whole` after the
/// dimension for a parameter that counts whole things (`Count whole`) and
/// `, absent = "..."` after the meaning for an optional one.
macro_rules! param_kind {
    (
        $(#[$doc:meta])*
        $rules:ident, $ty:ident {
            $( $field:ident : $dim:ident $($whole:ident)?, $min:expr, $max:expr, $meaning:literal
               $(, absent = $absent:literal)? ; )*
        }
    ) => {
        $(#[$doc])*
        pub const $rules: &[$crate::model::schema::ParamRule] = &[
            $( $crate::model::schema::ParamRule {
                key: stringify!($field),
                dim: $crate::units::Dimension::$dim,
                min: $min,
                max: $max,
                meaning: $meaning,
                absent: $crate::model::schema::param_kind!(@absent $($absent)?),
                whole: $crate::model::schema::param_kind!(@whole $($whole)?),
            } ),*
        ];

        $(#[$doc])*
        /// Values in base units, read from a checked parameter set.
        #[derive(Debug, Clone, PartialEq)]
        pub struct $ty {
            $( #[doc = $meaning] pub $field: $crate::model::schema::param_kind!(@ty $($absent)?), )*
        }

        impl $ty {
            /// The values of `set`; an error naming `at` when a required
            /// parameter is missing (the loader's checks make that a defect).
            pub fn from_set(
                set: &$crate::model::ParamSet,
                at: &$crate::error::Location,
            ) -> $crate::error::Result<Self> {
                Ok($ty {
                    $( $field: $crate::model::schema::param_kind!(@get set, at, stringify!($field) $(, $absent)?), )*
                })
            }
        }
    };
    (@whole) => { false };
    (@whole whole) => { true };
    (@absent) => { None };
    (@absent $a:literal) => { Some($a) };
    (@ty) => { f64 };
    (@ty $a:literal) => { Option<f64> };
    (@get $set:ident, $at:ident, $key:expr) => { $crate::model::schema::required($set, $at, $key)? };
    (@get $set:ident, $at:ident, $key:expr, $a:literal) => { $set.value($key) };
}
/// The rule-list macro, for the engine files that state their own rules.
pub(crate) use param_kind;

/// A model kind whose functions are DMA engines: the rules every DMA engine
/// shares, then its own.
macro_rules! dma_engine_kind {
    (
        $(#[$doc:meta])*
        $rules:ident, $ty:ident { $($body:tt)* }
    ) => {
        $crate::model::schema::param_kind! {
            $(#[$doc])*
            $rules, $ty {
                max_read: Size whole, 64.0, 4096.0,
                    "bytes per DMA read request (PCI-X Maximum Memory Read Byte Count)";
                max_outstanding_reads: Count whole, 1.0, 32.0,
                    "DMA read requests in flight at once";
                write_burst: Size whole, 64.0, 4096.0,
                    "bytes per DMA write burst";
                $($body)*
            }
        }
    };
}
/// The DMA engines' rule-list macro, for the engine files.
pub(crate) use dma_engine_kind;

/// The value of required parameter `key` of `set`; an error naming `at`
/// when it is missing.
pub(crate) fn required(set: &ParamSet, at: &Location, key: &str) -> Result<f64> {
    set.value(key).ok_or_else(|| Error::Invalid {
        at: at.clone(),
        message: format!("missing parameter `{key}`"),
    })
}

param_kind! {
    /// Parameters of a bus mode.
    BUS, BusParams {
        clock: Frequency, 10.0, 600.0,
            "bus clock frequency";
        transfers_per_clock: Count whole, 1.0, 4.0,
            "data transfers per clock (2 for DDR, 4 for QDR)";
        width: Size whole, 4.0, 8.0,
            "data path width";
        write_overhead_clocks: Count whole, 1.0, 20.0,
            "clocks of a posted write besides data: address, attribute, target response, turnaround";
        read_request_clocks: Count whole, 1.0, 20.0,
            "clocks of a read attempt answered with Retry (PCI) or Split Response (PCI-X)";
        completion_overhead_clocks: Count whole, 1.0, 20.0,
            "clocks of a read data transaction besides data (PCI retried read, PCI-X split completion)";
        latency_timer_clocks: Count whole, 8.0, 255.0,
            "a master must end its burst after this many clocks when another master waits";
        max_burst: Size whole, 64.0, 4096.0,
            "largest data burst of one transaction (buffer or disconnect boundary)";
    }
}

param_kind! {
    /// Parameters of an Ethernet link.
    ETHERNET, EthernetParams {
        line_rate: Rate, 1e5, 1e10,
            "signalling rate of data bits";
        mtu: Size whole, 576.0, 65536.0,
            "largest IP packet";
        header: Size whole, 14.0, 22.0,
            "MAC header";
        fcs: Size whole, 4.0, 4.0,
            "frame check sequence";
        preamble: Size whole, 8.0, 8.0,
            "preamble and start delimiter";
        gap: Size whole, 12.0, 12.0,
            "minimum inter-frame gap";
        min_frame: Size whole, 64.0, 64.0,
            "minimum frame (header to FCS)";
        tcp_ip_headers: Size whole, 40.0, 80.0,
            "IPv4 and TCP headers with options, per segment";
        slot_time: Size whole, 64.0, 512.0,
            "half duplex (CSMA/CD): the slot time, unit of the collision backoff (512 bit times at 10 and 100 Mbit/s)",
            absent = "full duplex: each direction is its own wire, no carrier sense, no collisions; jam, backoff_limit, attempt_limit and propagation are then not allowed, and all are required with slot_time";
        jam: Size whole, 4.0, 4.0,
            "half duplex: the jam a station sends once it detects a collision (32 bits)",
            absent = "full duplex (see slot_time)";
        backoff_limit: Count whole, 1.0, 16.0,
            "half duplex: collisions after which the backoff window stops doubling (10 in 802.3)",
            absent = "full duplex (see slot_time)";
        attempt_limit: Count whole, 1.0, 32.0,
            "half duplex: attempts after which a frame is dropped for excessive collisions (16 in 802.3)",
            absent = "full duplex (see slot_time)";
        propagation: Time, 0.0, 30000.0,
            "half duplex: one-way propagation delay between the stations of the segment (cable and repeater), the window in which two starts collide",
            absent = "full duplex (see slot_time)";
    }
}

param_kind! {
    /// Parameters of a Fibre Channel link.
    FIBRE_CHANNEL, FibreChannelParams {
        baud: SymbolRate, 1e8, 2e10,
            "line symbol rate";
        bits_per_byte: Count whole, 8.0, 10.0,
            "encoded bits per data byte (10 for 8b/10b)";
        frame_overhead: Size whole, 36.0, 36.0,
            "SOF, header, CRC and EOF per frame";
        idle_between_frames: Size whole, 24.0, 48.0,
            "primitive signals between frames";
        max_payload: Size whole, 256.0, 2112.0,
            "data payload per frame";
    }
}

param_kind! {
    /// Parameters of a parallel SCSI link: one half-duplex bus shared by the
    /// host adapter's channel and the devices on it.
    PARALLEL_SCSI, ParallelScsiParams {
        data_rate: Rate, 5e6, 1e9,
            "data phase rate of the bus (width times transfer rate), shared by both directions and every device on the bus";
        connection: Time, 0.0, 50000.0,
            "time a bus tenure takes before its data (bus free, arbitration, selection or reselection): paid by each frame but a data frame continuing its I/O's connection";
        iu_overhead: Size whole, 0.0, 256.0,
            "bytes besides data per information unit (packetized SCSI: the L_Q header and CRC)";
        max_payload: Size whole, 256.0, 65536.0,
            "data bytes per data information unit (per frame of the HBA engine)";
    }
}

param_kind! {
    /// Parameters of an ATM link: AAL5 frames in cells on a SONET payload.
    ATM, AtmParams {
        payload_rate: Rate, 1e6, 1e10,
            "SONET synchronous payload envelope rate: the bits per second left for cells after section, line and path overhead";
        cell: Size whole, 53.0, 53.0,
            "bytes of one ATM cell on the wire (5-byte header and payload)";
        cell_payload: Size whole, 48.0, 48.0,
            "payload bytes of one cell";
        aal5_trailer: Size whole, 8.0, 8.0,
            "AAL5 CPCS trailer per frame; the frame and trailer are padded to a whole number of cell payloads";
        encapsulation: Size whole, 0.0, 64.0,
            "bytes before the IP packet in the AAL5 frame: LAN Emulation's 2-byte LE header and 14-byte Ethernet header, or Classical IP's 8-byte LLC/SNAP header";
        mtu: Size whole, 576.0, 65536.0,
            "largest IP packet of the interface";
        tcp_ip_headers: Size whole, 40.0, 80.0,
            "IPv4 and TCP headers with options, per segment";
    }
}

param_kind! {
    /// Parameters of a server (memory, I/O path, CPUs, stack costs).
    SERVER, ServerParams {
        cells_max: Count whole, 1.0, 16.0,
            "cells a partition can have";
        cpus_per_cell: Count whole, 1.0, 64.0,
            "CPUs in a cell";
        memory_local_latency: Time, 50.0, 2000.0,
            "latency of a cache line from the cell's own memory";
        memory_bandwidth: Rate, 1e8, 1e11,
            "sustained bandwidth of one cell's memory (of the single memory in a server of one cell), shared by every DMA read and write to it; memory is interleaved by line, so a partition's DMA sees the sum over its cells",
            absent = "memory bandwidth is not modelled: DMA sees the memory's latency only and no memory utilisation is reported";
        memory_remote_latency: Time, 50.0, 5000.0,
            "latency of a cache line from another cell's memory, for DMA",
            absent = "a single memory (a server of one cell): no remote memory; required when cells_max is above 1";
        cache_line: Size whole, 32.0, 256.0,
            "coherency unit; memory is interleaved over cells by line";
        line_fetches_in_flight: Count whole, 1.0, 64.0,
            "cache-line fetches a DMA read keeps in flight";
        io_read_latency: Time, 100.0, 20000.0,
            "fixed round trip of a DMA read through bus adapter, ropes, SBA and cell controller (memory and data time excluded)";
        rope_bandwidth: Rate, 5e7, 4e9,
            "data rate of one rope in each direction",
            absent = "no ropes: every slot's bus converter sits on an I/O controller (a system bus) with `ropes = 0`; required when a slot has ropes";
        rope_packet_overhead: Size whole, 0.0, 64.0,
            "header bytes per rope packet",
            absent = "no ropes (see rope_bandwidth); required with it";
        cpu_per_packet: Time, 100.0, 200000.0,
            "CPU time per packet received and per ACK sent (interrupt, driver, TCP/IP), memory stalls excluded",
            absent = "scaled from the `costs_from` server's value by the ratio of the two CPUs' ratings; required when the server names no `costs_from`";
        cpu_per_segment_sent: Time, 100.0, 200000.0,
            "CPU time to build and send one data segment (socket copy, TCP output, driver), memory stalls excluded",
            absent = "scaled from the `costs_from` server's value by the ratio of the two CPUs' ratings; required when the server names no `costs_from`";
        cpu_misses_per_packet: Count, 0.0, 500.0,
            "cache misses to memory per packet handled; each stalls the CPU for the partition's mean load-to-use latency";
        cpu_remote_memory_latency: Time, 50.0, 5000.0,
            "CPU load-to-use latency of a line held by another cell",
            absent = "a single memory (a server of one cell): no remote memory; required when cells_max is above 1";
        cpu_per_kb: Time, 0.0, 100000.0,
            "CPU time per KiB of network payload received: the copy to the application (its read(), on the reading process's CPU), and the checksum unless the server states it apart (`cpu_checksum_per_kb`)",
            absent = "scaled from the `costs_from` server's value by the ratio of the two CPUs' ratings; required when the server names no `costs_from`";
        cpu_per_kb_sent: Time, 0.0, 100000.0,
            "CPU time per KiB of network payload sent (copy from the application, checksum): below `cpu_per_kb` where the sending application's buffer is warm in the cache while received data arrives by DMA, so every line of it misses",
            absent = "as `cpu_per_kb` (with `costs_from`, that server's value scaled, if it has one)";
        cpu_checksum_per_kb: Time, 0.0, 100000.0,
            "CPU time per KiB to compute the TCP checksum in software, on top of `cpu_per_kb` and `cpu_per_kb_sent` (the copies alone), paid for each KiB received or sent through a NIC that does not offload the checksum that way (`rx_checksum_offload`, `tx_checksum_offload`)",
            absent = "scaled from the `costs_from` server's value, if it has one; else none: the per-KiB costs are the whole cost, whatever the card";
        cpu_per_io: Time, 1000.0, 1000000.0,
            "CPU time per disk I/O (issue, interrupt, completion)",
            absent = "scaled from the `costs_from` server's value by the ratio of the two CPUs' ratings; required when the server names no `costs_from`";
        tcp_ack_every: Count whole, 1.0, 8.0,
            "segments acknowledged by one ACK";
        cpu_per_send_call: Time, 0.0, 1000000.0,
            "CPU time of one send() call of a sending application (system call entry and exit, socket locking), beyond the segments it fills; one call per message (netperf's send size)",
            absent = "send calls cost nothing beyond the segments they fill, whose cost includes the socket copy, so the send size does not matter (with `costs_from`, that server's value scaled, if it has one)";
        interrupt_lines: Count whole, 1.0, 256.0,
            "interrupt lines the adapter functions share (a PC chipset's PIRQ lines): function g of an experiment is on line g mod this, and every interrupt runs the handler of each function on its line, which reads that function's status register across the bus",
            absent = "every function has an interrupt line of its own: no handler runs for another function's interrupt";
    }
}

param_kind! {
    /// Parameters of the bus adapter (bridge) above a slot.
    BRIDGE, BridgeParams {
        posted_write_buffer: Size whole, 64.0, 1048576.0,
            "posted-write data the bridge holds before it stalls the bus";
        delayed_read_slots: Count whole, 1.0, 8.0,
            "delayed reads the bridge queues at once (PCI mode)";
        delayed_read_prefetch: Size whole, 64.0, 8192.0,
            "bytes the bridge fetches for one delayed read (PCI mode)";
        retry_interval: Time, 0.0, 20000.0,
            "time a retried master waits before it asks for the bus again";
        register_reads_use_delayed_slots: Count whole, 0.0, 1.0,
            "1 if a CPU's register read in PCI mode waits for a free delayed-read slot, as a DMA read does; 0 if the bridge tracks it apart";
        posted_writes_cut_through: Count whole, 0.0, 1.0,
            "1 if the bridge starts a posted write up its ropes once the write's first cache line is in (it frees the buffer about a line after the burst when the ropes keep up); 0 if it stores each burst whole before sending it (a server's `[bridge]` only: a card's own bridge forwards a write once it is whole)",
            absent = "0: each burst is stored whole, then sent up the ropes";
    }
}

/// The rules of a card's own bridge's secondary side: a server bridge's,
/// less the cut-through onto ropes it does not have (the last rule).
pub const CARD_SECONDARY_BRIDGE: &[ParamRule] = BRIDGE.split_at(BRIDGE.len() - 1).0;

dma_engine_kind! {
    /// Parameters of an adapter's on-card PCI-to-PCI bridge as a master on
    /// the slot's bus: it forwards its secondary bus's posted writes in
    /// bursts and its reads as read requests there.
    CARD_BRIDGE, CardBridgeParams {

    }
}

param_kind! {
    /// Parameters of a CPU model.
    CPU, CpuParams {
        clock: Frequency, 10.0, 10000.0,
            "clock frequency";
        rating: Count, 0.1, 1e6,
            "published speed rating on the model's `benchmark` (an index: higher is faster); a CPU cost scales by the inverse ratio of two ratings on the same benchmark";
    }
}

param_kind! {
    /// Parameters of a test bed (the machines at the far end of the links).
    TESTBED, TestbedParams {
        peer_turnaround: Time, 0.0, 1e7,
            "delay from the netperf peer finishing a segment to its ACK leaving";
        peer_cpu_per_segment: Time, 0.0, 1e6,
            "netperf peer's receive processing per data segment (segments are processed one at a time)";
        peer_cpu_per_kib: Time, 0.0, 1e5,
            "netperf peer's receive processing per KiB of a data segment's payload, on top of `peer_cpu_per_segment`",
            absent = "the peer's time per segment does not depend on its size";
        peer_cpu_per_ack: Time, 0.0, 1e6,
            "netperf peer's time to build each ACK it sends, on the CPU that processes its segments",
            absent = "the peer's ACKs cost it nothing";
        peer_processor_per_frame: Time, 0.0, 1e6,
            "time the peer's adapter's own processor (its firmware) spends on each frame, one at a time: every data segment it receives, before the peer's CPU sees it, and every ACK the peer sends",
            absent = "the peer's adapter passes frames with no firmware time of its own";
        target_latency: Time, 0.0, 1e8,
            "disk array service time besides transfer (with `target_per_kib`): read command to first data, last write data to response";
        target_per_kib: Time, 0.0, 1e6,
            "disk array service time per KiB of the I/O, on top of `target_latency` (its transfer inside the array)",
            absent = "the array's service time does not depend on the I/O size: `target_latency` whatever the block";
        diskbench_outstanding: Count whole, 1.0, 256.0,
            "diskbench I/Os outstanding per direction";
    }
}

param_kind! {
    /// Parameters of an I/O controller (a system bus adapter): the link
    /// between the ropes of the slots under it and memory, shared by them.
    IO_CONTROLLER, IoControllerParams {
        bandwidth: Rate, 5e7, 1e11,
            "bytes per second each way on the controller's link to memory, shared by every slot under it";
        packet_overhead: Size whole, 0.0, 256.0,
            "header bytes per packet on that link";
        bandwidth_both_ways: Rate, 5e7, 2e11,
            "bytes per second the link sustains both ways together (a link whose two directions share its protocol's capacity: one way gets `bandwidth`, a mix of both at most this in all)",
            absent = "each direction has its `bandwidth`, whatever the other carries";
    }
}

/// The server CPU costs that, when absent, are scaled from the server named
/// in `costs_from` by the ratio of the two CPUs' ratings.
pub const SCALED_COSTS: [&str; 7] = [
    "cpu_per_packet",
    "cpu_per_segment_sent",
    "cpu_per_kb",
    "cpu_per_kb_sent",
    "cpu_checksum_per_kb",
    "cpu_per_io",
    "cpu_per_send_call",
];

/// The scaled costs a server without `costs_from` may leave out (each has
/// a stated meaning when absent).
pub const OPTIONAL_COSTS: [&str; 3] = [
    "cpu_per_kb_sent",
    "cpu_per_send_call",
    "cpu_checksum_per_kb",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::load_registry;
    use crate::units::Dimension::*;

    #[test]
    fn a_missing_required_parameter_is_an_error_naming_it_never_a_zero() {
        let reg = load_registry(&[]).expect("bundled models load");
        let bus = &reg.buses["pcix66"];
        let mut set = bus.params.clone();
        assert!(BusParams::from_set(&set, &bus.at).is_ok());
        set.map.remove("clock");
        let err = BusParams::from_set(&set, &bus.at).expect_err("clock is required");
        assert!(err.to_string().contains("`clock`"), "{err}");
    }

    #[test]
    fn an_optional_parameter_may_be_absent_and_says_what_absence_means() {
        let reg = load_registry(&[]).expect("bundled models load");
        let s = &reg.servers["rp8400-seu"];
        let v = ServerParams::from_set(&s.params, &s.at).expect("complete");
        assert_eq!(v.cpu_per_send_call, None);
        let rule = SERVER
            .iter()
            .find(|r| r.key == "cpu_per_send_call")
            .expect("the rule");
        assert!(rule.absent.is_some_and(|a| !a.is_empty()));

        assert!(SERVER
            .iter()
            .filter(|r| r.absent.is_some())
            .all(|r| SCALED_COSTS.contains(&r.key)
                || r.key.contains("remote")
                || r.key.starts_with("rope_")
                || r.key == "interrupt_lines"
                || r.key == "memory_bandwidth"));
        // Every optional parameter says what its absence means.
        let engines = crate::sim::engines::kinds();
        for rules in [SERVER, TESTBED]
            .into_iter()
            .chain(engines.iter().map(|k| k.rules()))
        {
            assert!(rules.iter().all(|r| r.absent.is_none_or(|a| !a.is_empty())));
        }
    }

    #[test]
    fn every_count_and_size_is_whole_but_a_mean_and_whole_ranges_have_whole_ends() {
        // A count or size that may be fractional (a mean, a benchmark
        // index) must say so here: the simulator rounds none of them.
        const MEANS: [&str; 5] = [
            "cpu_misses_per_packet",
            "rating",
            "processor_tx_clocks_per_frame",
            "processor_rx_clocks_per_frame",
            "processor_clocks_per_cell",
        ];
        let engines = crate::sim::engines::kinds();
        for rules in [
            BUS,
            ETHERNET,
            FIBRE_CHANNEL,
            PARALLEL_SCSI,
            ATM,
            SERVER,
            BRIDGE,
            TESTBED,
            CPU,
            CARD_BRIDGE,
        ]
        .into_iter()
        .chain(engines.iter().map(|k| k.rules()))
        {
            for r in rules {
                let countable = matches!(r.dim, Count | Size);
                assert_eq!(
                    r.whole,
                    countable && !MEANS.contains(&r.key),
                    "`{}`: whole is {}",
                    r.key,
                    r.whole
                );
                if r.whole {
                    assert!(r.min.fract() == 0.0 && r.max.fract() == 0.0, "{}", r.key);
                }
            }
        }
    }

    #[test]
    fn ranges_are_found_by_the_kind_of_the_path_not_its_last_component() {
        let reg = load_registry(&[]).expect("bundled models load");
        assert_eq!(reg.range_of("bus.pcix66.clock"), Some((10.0, 600.0)));
        assert_eq!(
            reg.range_of("server.rp8400-seu.bridge.retry_interval"),
            Some((0.0, 20000.0))
        );
        assert_eq!(
            reg.range_of("adapter.a9782a.gige.pio_reads_per_interrupt"),
            Some((0.0, 16.0))
        );
        // A key of another kind, or of another engine, is not a parameter here.
        assert_eq!(reg.range_of("testbed.hp-2004-lab.clock"), None);
        assert_eq!(reg.range_of("adapter.a9782a.fc.tx_fifo"), None);
        assert_eq!(
            reg.range_of("server.rp8400-seu.bridge.io_read_latency"),
            None
        );
        assert_eq!(reg.range_of("bus.no-such-bus.clock"), None);
    }
}
