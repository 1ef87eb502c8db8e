//! Link framings as the engines that drive them see them: Ethernet frames
//! (with the half-duplex medium's timing, where the link has one), AAL5
//! frames in ATM cells on a SONET payload, Fibre Channel frames, and the
//! information units of a parallel SCSI bus (framed as Fibre Channel's, on
//! one shared half-duplex bus). Each is
//! built once from its link's checked parameters; on the hot path it is
//! plain arithmetic (bytes on the wire per frame, the goodput ceiling). Line
//! rate and frame format come from the link's description, never a fitted
//! efficiency.

use crate::error::{Error, Location, Result};
use crate::model::schema::{AtmParams, EthernetParams, FibreChannelParams, ParallelScsiParams};
use crate::model::{Framing, LinkSpec, ParamSet};
use crate::sim::csma::CsmaCfg;
use crate::units::round_u64 as whole;
use crate::units::{BytesPerSec, Picos};

/// ATM cells under a frame: AAL5 pads the frame and its trailer to a whole
/// number of cell payloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellCfg {
    /// Bytes of a cell on the wire.
    pub cell: u64,
    /// Payload bytes of a cell.
    pub payload: u64,
    /// AAL5 trailer per frame.
    pub trailer: u64,
}

impl CellCfg {
    /// Cells carrying an AAL5 frame of `frame` bytes (its trailer and
    /// padding included).
    pub fn cells(&self, frame: u64) -> u64 {
        (frame + self.trailer).div_ceil(self.payload.max(1))
    }
}

/// A NIC's link framing: Ethernet frames, or frames in ATM cells (an
/// `Atm` link: `cells` is set, `rate` is the SONET payload rate and
/// `frame` the AAL5 frame, encapsulation to IP packet).
#[derive(Debug, Clone)]
pub struct EthCfg {
    /// Line rate.
    pub rate: BytesPerSec,
    /// TCP payload per full segment.
    pub mss: u64,
    /// Frame bytes (MAC header to FCS) of a full segment.
    pub frame: u64,
    /// Wire bytes of a full segment (frame + preamble + gap).
    pub wire_overhead: u64,
    /// Frame bytes of a pure ACK (at least the minimum frame).
    pub ack_frame: u64,
    /// ATM cells, for a link of ATM framing (None: Ethernet).
    pub cells: Option<CellCfg>,
    /// Preamble and start delimiter, on the medium before each frame.
    pub preamble: u64,
    /// Half duplex: the shared medium's timing (`None`: full duplex).
    pub csma: Option<CsmaCfg>,
}

impl EthCfg {
    /// Wire bytes of a frame of `frame` bytes: the frame and its framing
    /// (preamble and gap), or the cells that carry it.
    pub fn wire_bytes(&self, frame: u64) -> u64 {
        match self.cells {
            Some(c) => c.cells(frame) * c.cell,
            None => frame + self.wire_overhead,
        }
    }
    /// Cells of a frame of `frame` bytes (zero on Ethernet).
    pub fn cells_of(&self, frame: u64) -> u64 {
        self.cells.map_or(0, |c| c.cells(frame))
    }
    /// TCP payload ceiling of the line.
    pub fn goodput_ceiling(&self) -> BytesPerSec {
        BytesPerSec(self.rate.0 * self.mss as f64 / self.wire_bytes(self.frame) as f64)
    }
}

/// Fibre Channel framing, or a parallel SCSI bus's information units.
#[derive(Debug, Clone)]
pub struct FcCfg {
    /// Encoded byte rate (baud / bits per byte), or a SCSI bus's data rate.
    pub byte_rate: BytesPerSec,
    /// Header, SOF, CRC, EOF (SCSI: the L_Q header and CRC).
    pub frame_overhead: u64,
    /// Idles between frames (SCSI: none; its connections take time).
    pub idle: u64,
    /// Data payload per frame.
    pub max_payload: u64,
    /// A parallel SCSI bus: one half-duplex bus for both directions, whose
    /// connections take this long (arbitration and selection); `None`:
    /// Fibre Channel, full duplex.
    pub shared_bus: Option<Picos>,
}

impl FcCfg {
    /// Wire bytes of a frame with `payload` bytes.
    pub fn wire_bytes(&self, payload: u64) -> u64 {
        payload + self.frame_overhead + self.idle
    }
    /// Payload ceiling of the link per direction.
    pub fn goodput_ceiling(&self) -> BytesPerSec {
        BytesPerSec(
            self.byte_rate.0 * self.max_payload as f64 / self.wire_bytes(self.max_payload) as f64,
        )
    }
}

/// A NIC's framing from its link (`set`, its parameters): Ethernet, or
/// AAL5 frames in ATM cells.
pub fn eth_cfg(link: Option<&LinkSpec>, set: &ParamSet, at: &Location) -> Result<EthCfg> {
    if link.is_some_and(|l| l.framing == Framing::Atm) {
        let lp = AtmParams::from_set(set, at)?;
        let mtu = whole(lp.mtu);
        let hdrs = whole(lp.tcp_ip_headers);
        let encap = whole(lp.encapsulation);
        return Ok(EthCfg {
            rate: BytesPerSec(lp.payload_rate),
            mss: mtu.saturating_sub(hdrs).max(1),
            frame: mtu + encap,
            wire_overhead: 0,
            // AAL5 has no minimum frame: an ACK is its headers alone.
            ack_frame: encap + hdrs,
            preamble: 0,
            csma: None,
            cells: Some(CellCfg {
                cell: whole(lp.cell),
                payload: whole(lp.cell_payload).max(1),
                trailer: whole(lp.aal5_trailer),
            }),
        });
    }
    let lp = EthernetParams::from_set(set, at)?;
    let mtu = whole(lp.mtu);
    let hdrs = whole(lp.tcp_ip_headers);
    Ok(EthCfg {
        rate: BytesPerSec(lp.line_rate),
        mss: mtu.saturating_sub(hdrs).max(1),
        frame: mtu + whole(lp.header) + whole(lp.fcs),
        wire_overhead: whole(lp.preamble) + whole(lp.gap),
        ack_frame: (whole(lp.header) + hdrs + whole(lp.fcs)).max(whole(lp.min_frame)),
        preamble: whole(lp.preamble),
        csma: csma_cfg(&lp, link.map_or("", |l| l.name.as_str()), at)?,
        cells: None,
    })
}

/// A storage link's framing from its link: Fibre Channel, or a parallel
/// SCSI bus (`set`, the link's parameters).
pub fn fc_cfg(link: Option<&LinkSpec>, set: &ParamSet, at: &Location) -> Result<FcCfg> {
    if link.is_some_and(|l| l.framing == Framing::ParallelScsi) {
        let lp = ParallelScsiParams::from_set(set, at)?;
        return Ok(FcCfg {
            byte_rate: BytesPerSec(lp.data_rate),
            frame_overhead: whole(lp.iu_overhead),
            idle: 0,
            max_payload: whole(lp.max_payload).max(1),
            shared_bus: Some(Picos::from_ns(lp.connection)),
        });
    }
    let lp = FibreChannelParams::from_set(set, at)?;
    Ok(FcCfg {
        byte_rate: BytesPerSec(lp.baud / lp.bits_per_byte),
        frame_overhead: whole(lp.frame_overhead),
        idle: whole(lp.idle_between_frames),
        max_payload: whole(lp.max_payload),
        shared_bus: None,
    })
}

/// The half-duplex timing of an Ethernet link, if it is half duplex: all of
/// `slot_time`, `jam`, `backoff_limit`, `attempt_limit` and `propagation`, or
/// none of them (full duplex).
pub fn csma_cfg(lp: &EthernetParams, link: &str, at: &Location) -> Result<Option<CsmaCfg>> {
    let keys = [
        lp.slot_time,
        lp.jam,
        lp.backoff_limit,
        lp.attempt_limit,
        lp.propagation,
    ];
    match keys {
        [None, None, None, None, None] => Ok(None),
        [Some(slot), Some(jam), Some(backoff), Some(attempts), Some(prop)] => {
            let rate = BytesPerSec(lp.line_rate);
            Ok(Some(CsmaCfg {
                slot: Picos::to_move(whole(slot), rate),
                jam: Picos::to_move(whole(jam), rate),
                ifg: Picos::to_move(whole(lp.gap), rate),
                propagation: Picos::from_ns(prop),
                backoff_limit: whole(backoff) as u32,
                attempt_limit: whole(attempts).max(1) as u32,
                rate,
            }))
        }
        _ => Err(Error::Invalid {
            at: at.clone(),
            message: format!(
                "link `{link}`: a half-duplex link needs all of slot_time, jam, backoff_limit, attempt_limit and propagation, a full-duplex one none"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::load_registry;

    /// The framing of a bundled link, as a NIC on it sees it.
    fn framing(link: &str) -> EthCfg {
        let reg = load_registry(&[]).expect("bundled models load");
        let l = &reg.links[link];
        eth_cfg(Some(l), &l.params, &l.at).expect("a complete link")
    }

    #[test]
    fn an_aal5_frame_is_padded_to_whole_cells_with_its_trailer() {
        let c = CellCfg {
            cell: 53,
            payload: 48,
            trailer: 8,
        };
        // 40 bytes + 8 = 48: one cell; one byte more needs a second.
        assert_eq!(c.cells(40), 1);
        assert_eq!(c.cells(41), 2);
        // LANE MTU 9218: 9234-byte frame + 8 = 9242 bytes, 193 cells.
        assert_eq!(c.cells(9234), 193);
        // LANE MTU 1500: 1516 + 8 = 1524 bytes, 32 cells.
        assert_eq!(c.cells(1516), 32);
    }

    #[test]
    fn atm_goodput_comes_from_the_cell_arithmetic() {
        let lane = framing("atm155-lane9218");
        assert_eq!((lane.frame, lane.mss), (9234, 9178));
        assert_eq!(lane.wire_bytes(lane.frame), 193 * 53);
        // 149.76 Mbit/s x 9178 / (193 x 53) = 134.37 Mbit/s of TCP payload
        // (the paper's four adapters: 538 outbound, 134.5 each).
        let g = lane.goodput_ceiling().0 * 8.0 / 1e6;
        assert!((g - 134.37).abs() < 0.01, "{g}");
        // The ACK: LE and Ethernet headers + TCP/IP, 56 bytes, two cells.
        assert_eq!(lane.wire_bytes(lane.ack_frame), 2 * 53);
        let small = framing("atm155-lane1516");
        let g = small.goodput_ceiling().0 * 8.0 / 1e6;
        // 149.76 x 1460 / (32 x 53) = 128.92 Mbit/s.
        assert!((g - 128.92).abs() < 0.01, "{g}");
        let clip = framing("atm622-clip9180");
        // 9180 + 8 LLC/SNAP + 8 trailer = 9196 bytes: 192 cells (9216).
        assert_eq!(clip.wire_bytes(clip.frame), 192 * 53);
        let g = clip.goodput_ceiling().0 * 8.0 / 1e6;
        assert!((g - 599.04 * 9140.0 / (192.0 * 53.0)).abs() < 0.01, "{g}");
        // Ethernet is unchanged: frame plus preamble and gap.
        let gige = framing("gige");
        assert_eq!(gige.wire_bytes(gige.frame), 1518 + 20);
        assert_eq!(gige.cells_of(gige.frame), 0);
    }
}
