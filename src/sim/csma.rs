//! A half-duplex Ethernet segment: one medium shared by every station on it
//! (IEEE 802.3 CSMA/CD), as a discrete-event model.
//!
//! A station with a frame senses the carrier. On an idle medium it waits
//! the interframe gap after the carrier dropped (`ifg`, 96 bit times), then
//! transmits; on a busy one it defers until the carrier drops and then waits
//! the gap (1-persistent). Two stations that start within one propagation
//! delay of each other do not hear each other: they collide. Each collider
//! detects the other one propagation delay after its start, sends the jam
//! (32 bits) and stops; the medium is free when the last jam ends. After
//! its n-th collision a station waits k slot times (512 bit times), k drawn
//! uniformly from 0 to 2^min(n, `backoff_limit`) - 1 (truncated binary
//! exponential backoff), then tries again; after `attempt_limit` attempts
//! the frame is dropped (excessive collisions, counted) and, standing for
//! the upper layer's retransmission, offered again at once with a fresh
//! count. A frame that gets through resets the station's count: the winner
//! of a collision sends its next frame with a short backoff window while
//! the loser keeps its long one, which is the capture effect.
//!
//! A station holds one frame at a time (its MAC's transmit FIFO head); its
//! owner offers the next when [`Medium::free`] says so. The medium reports
//! what it needs done as [`Action`]s: schedule one of its events, or a frame
//! delivered (at the end of its transmission; the propagation to the far
//! end is not added, as on the full-duplex wires). Backoff draws come from
//! the medium's own [`RngStream`], so a run is deterministic for a seed.
//! Left out: late collisions (a segment within the 802.3 diameter has none),
//! the receivers' side of a collision (fragments are discarded unseen),
//! frame bursting.
//!
//! The component's interface: [`Medium`] takes its events ([`MediumEv`])
//! and offered frames and answers with [`Action`]s (events to schedule,
//! frames delivered), which the platform carries out.
//!
//! A hardware file: it uses only other hardware (the meters), the engine's
//! random stream and the units; never the platform, an engine, a workload,
//! the assembly or the top-level event.

use super::meter::BusyMeter;
use crate::engine::RngStream;
use crate::units::{BytesPerSec, Picos};

/// The timing of a half-duplex segment.
#[derive(Debug, Clone, PartialEq)]
pub struct CsmaCfg {
    /// Signalling rate, bytes per second.
    pub rate: BytesPerSec,
    /// The slot time, the unit of backoff (512 bit times).
    pub slot: Picos,
    /// The jam after a collision is detected (32 bit times).
    pub jam: Picos,
    /// The interframe gap a station waits after the carrier drops (96 bit times).
    pub ifg: Picos,
    /// One-way propagation delay between the stations.
    pub propagation: Picos,
    /// Collisions after which the backoff window stops doubling (10).
    pub backoff_limit: u32,
    /// Attempts after which a frame is dropped (16).
    pub attempt_limit: u32,
}

/// An event of the medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediumEv {
    /// Station `s` tries to transmit (its backoff or deferral is over); the
    /// token drops an attempt made stale since.
    Attempt(usize, u64),
    /// The transmission or collision of the given epoch ends.
    End(u64),
}

/// What the medium asks its owner to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action<F> {
    /// Schedule `MediumEv` at this time.
    Schedule(Picos, MediumEv),
    /// Station `s`'s frame has been transmitted whole; the station is free.
    Delivered(usize, F),
}

#[derive(Debug, Clone)]
struct Station<F> {
    /// The frame and its time on the medium.
    frame: Option<(F, Picos)>,
    attempts: u32,
    token: u64,
    waiting: bool,
}

#[derive(Debug, Clone)]
enum State {
    Idle {
        since: Picos,
    },
    Busy {
        start: Picos,
        tx: Vec<usize>,
        collided: bool,
    },
}

/// One half-duplex segment and its stations.
#[derive(Debug, Clone)]
pub struct Medium<F> {
    cfg: CsmaCfg,
    stations: Vec<Station<F>>,
    state: State,
    epoch: u64,
    rng: RngStream,
    /// Time the medium carries a signal (frames and collisions).
    pub meter: BusyMeter,
    /// Collisions since the last reset (one per collision, whatever the
    /// number of stations in it).
    pub collisions: u64,
    /// Frames dropped after `attempt_limit` attempts since the last reset.
    pub drops: u64,
    /// Frames delivered since the last reset.
    pub frames: u64,
}

impl<F: Copy> Medium<F> {
    /// An idle segment of `stations` stations drawing its backoffs from `rng`.
    pub fn new(cfg: CsmaCfg, stations: usize, rng: RngStream) -> Medium<F> {
        Medium {
            cfg,
            stations: (0..stations)
                .map(|_| Station {
                    frame: None,
                    attempts: 0,
                    token: 0,
                    waiting: false,
                })
                .collect(),
            state: State::Idle { since: Picos(0) },
            epoch: 0,
            rng,
            meter: BusyMeter::default(),
            collisions: 0,
            drops: 0,
            frames: 0,
        }
    }

    /// Whether station `s` can take a frame.
    pub fn free(&self, s: usize) -> bool {
        self.stations.get(s).is_some_and(|st| st.frame.is_none())
    }

    /// Forgets the counters (end of warm-up).
    pub fn reset(&mut self, now: Picos) {
        self.meter.reset(now);
        self.collisions = 0;
        self.drops = 0;
        self.frames = 0;
    }

    /// Station `s` (which must be free) gets `frame`, `bytes` long on the
    /// medium (preamble to FCS), at `now`, and tries to send it.
    pub fn offer(&mut self, s: usize, frame: F, bytes: u64, now: Picos, out: &mut Vec<Action<F>>) {
        let Some(st) = self.stations.get_mut(s) else {
            return;
        };
        st.frame = Some((frame, Picos::to_move(bytes, self.cfg.rate)));
        st.attempts = 0;
        self.attempt(s, now, out);
    }

    /// Handles one of the medium's events at `now`.
    pub fn handle(&mut self, ev: MediumEv, now: Picos, out: &mut Vec<Action<F>>) {
        match ev {
            MediumEv::Attempt(s, token) => {
                let live = self
                    .stations
                    .get(s)
                    .is_some_and(|st| st.token == token && st.frame.is_some());
                if live {
                    self.attempt(s, now, out);
                }
            }
            MediumEv::End(epoch) if epoch == self.epoch => self.end(now, out),
            MediumEv::End(_) => {}
        }
    }

    fn schedule_attempt(&mut self, s: usize, at: Picos, out: &mut Vec<Action<F>>) {
        let st = &mut self.stations[s];
        st.token += 1;
        out.push(Action::Schedule(at, MediumEv::Attempt(s, st.token)));
    }

    /// Station `s` senses the carrier at `now`.
    fn attempt(&mut self, s: usize, now: Picos, out: &mut Vec<Action<F>>) {
        let prop = self.cfg.propagation;
        let jam = self.cfg.jam;
        if let State::Idle { since } = self.state {
            let ready = since + self.cfg.ifg;
            if now >= ready {
                let len = self.stations[s].frame.map(|f| f.1).unwrap_or(Picos(0));
                self.state = State::Busy {
                    start: now,
                    tx: vec![s],
                    collided: false,
                };
                self.meter.start(now);
                self.epoch += 1;
                out.push(Action::Schedule(now + len, MediumEv::End(self.epoch)));
            } else {
                self.schedule_attempt(s, ready, out);
            }
            return;
        }
        let State::Busy {
            start,
            tx,
            collided,
        } = &mut self.state
        else {
            return;
        };
        if now < *start + prop && !tx.contains(&s) {
            // The carrier has not reached this station yet: it transmits
            // too, and the signals collide.
            if !*collided {
                self.collisions += 1;
            }
            *collided = true;
            tx.push(s);
            self.epoch += 1;
            out.push(Action::Schedule(
                now + prop + jam,
                MediumEv::End(self.epoch),
            ));
        } else {
            self.stations[s].waiting = true;
        }
    }

    /// The transmission or collision on the medium ends at `now`.
    fn end(&mut self, now: Picos, out: &mut Vec<Action<F>>) {
        let State::Busy { tx, collided, .. } =
            std::mem::replace(&mut self.state, State::Idle { since: now })
        else {
            return;
        };
        self.meter.stop(now);
        if collided {
            for s in tx {
                let st = &mut self.stations[s];
                st.attempts += 1;
                if st.attempts >= self.cfg.attempt_limit {
                    self.drops += 1;
                    st.attempts = 0;
                }
                let n = st.attempts.min(self.cfg.backoff_limit);
                let k = if n == 0 {
                    0
                } else {
                    self.rng.next_u64() % (1u64 << n)
                };
                let at = now + self.cfg.slot * k;
                self.schedule_attempt(s, at, out);
            }
        } else if let Some(&s) = tx.first() {
            let st = &mut self.stations[s];
            if let Some((frame, _)) = st.frame.take() {
                st.attempts = 0;
                self.frames += 1;
                out.push(Action::Delivered(s, frame));
            }
        }
        // The stations that deferred go when the gap has passed.
        let ready = now + self.cfg.ifg;
        for s in 0..self.stations.len() {
            if std::mem::take(&mut self.stations[s].waiting) {
                self.schedule_attempt(s, ready, out);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::{run_until, Limits, Model, Scheduler};

    /// The 802.3 timing of a segment at `mbit` Mbit/s with `prop_ns` of
    /// one-way propagation.
    pub(crate) fn cfg(mbit: f64, prop_ns: f64) -> CsmaCfg {
        let rate = BytesPerSec(mbit * 1e6 / 8.0);
        let bits = |n: u64| Picos::to_move(n, BytesPerSec(mbit * 1e6));
        CsmaCfg {
            rate,
            slot: bits(512),
            jam: bits(32),
            ifg: bits(96),
            propagation: Picos::from_ns(prop_ns),
            backoff_limit: 10,
            attempt_limit: 16,
        }
    }

    /// Stations that always have a frame of `bytes` to send.
    struct Saturated {
        m: Medium<u32>,
        bytes: u64,
        delivered: Vec<u64>,
    }

    impl Model for Saturated {
        type Event = MediumEv;
        fn handle(&mut self, ev: MediumEv, s: &mut Scheduler<MediumEv>) {
            let mut out = Vec::new();
            self.m.handle(ev, s.now(), &mut out);
            self.apply(out, s);
        }
    }

    impl Saturated {
        fn apply(&mut self, mut out: Vec<Action<u32>>, s: &mut Scheduler<MediumEv>) {
            while !out.is_empty() {
                let mut next = Vec::new();
                for a in out {
                    match a {
                        Action::Schedule(at, ev) => s.schedule_at(at, ev),
                        Action::Delivered(st, _) => {
                            self.delivered[st] += 1;
                            self.m.offer(st, 0, self.bytes, s.now(), &mut next);
                        }
                    }
                }
                out = next;
            }
        }
    }

    /// Runs `n` saturated stations for `ms` and gives the medium and the
    /// frames each delivered.
    fn saturate(n: usize, bytes: u64, mbit: f64, ms: f64, seed: u64) -> (Medium<u32>, Vec<u64>) {
        let mut sys = Saturated {
            m: Medium::new(cfg(mbit, 500.0), n, RngStream::new(seed, 7)),
            bytes,
            delivered: vec![0; n],
        };
        let mut s = Scheduler::new();
        let mut out = Vec::new();
        for st in 0..n {
            sys.m.offer(st, 0, bytes, Picos(0), &mut out);
        }
        sys.apply(out, &mut s);
        let end = Picos::from_secs(ms / 1e3);
        run_until(
            &mut sys,
            &mut s,
            end,
            Limits {
                max_time: end,
                max_events: 50_000_000,
            },
        );
        (sys.m, sys.delivered)
    }

    #[test]
    fn a_lone_station_sends_back_to_back_with_the_gap_and_never_collides() {
        // 1526 bytes (preamble to FCS) + 12 of gap at 100 Mbit/s: 123.04 us a frame.
        let (m, d) = saturate(1, 1526, 100.0, 10.0, 1);
        assert_eq!(m.collisions, 0);
        assert_eq!(d[0], 81, "10 ms / 123.04 us");
    }

    #[test]
    fn two_stations_collide_back_off_and_share_the_medium() {
        let (m, d) = saturate(2, 1526, 100.0, 200.0, 3);
        assert!(m.collisions > 0);
        assert!(d[0] > 0 && d[1] > 0, "{d:?}");
        // The capture effect: shares are unequal over short spans, but
        // neither station starves for the whole run.
        let total: u64 = d.iter().sum();
        assert!(
            total <= 1626,
            "{total} frames cannot beat one station alone"
        );
    }

    #[test]
    fn goodput_never_exceeds_the_line_rate_and_falls_as_more_stations_contend() {
        let bytes = 1526;
        let mut last = f64::INFINITY;
        for n in [1usize, 2, 4, 8, 16] {
            let (m, d) = saturate(n, bytes, 10.0, 500.0, 11);
            let bits: f64 = d.iter().sum::<u64>() as f64 * 1500.0 * 8.0;
            let rate = bits / 0.5;
            assert!(rate <= 10e6, "{n} stations: {rate} bit/s of payload");
            assert!(rate < last + 1.0, "{n} stations: {rate} after {last}");
            if n > 1 {
                assert!(m.collisions > 0);
            }
            last = rate;
        }
    }

    #[test]
    fn a_run_is_the_same_for_the_same_seed() {
        let a = saturate(4, 64, 10.0, 50.0, 5);
        let b = saturate(4, 64, 10.0, 50.0, 5);
        assert_eq!(a.1, b.1);
        assert_eq!(a.0.collisions, b.0.collisions);
    }

    #[test]
    fn full_duplex_has_no_medium_and_half_duplex_collides_data_with_acks() {
        use crate::sim::config::FunctionCfg;
        for (id, half) in [("netperf.100full", false), ("netperf.100half", true)] {
            let cfg = crate::sim::system::tests::config_of("matrox-table2-netperf", id);
            let FunctionCfg::Nic(crate::sim::config::NicFunction { eth, .. }) =
                &cfg.functions[0].cfg
            else {
                panic!("a NIC");
            };
            assert_eq!(eth.csma.is_some(), half, "{id}");
            let mut sys = crate::sim::System::new(cfg, 1);
            let mut s = Scheduler::new();
            sys.start(&mut s);
            let end = Picos::from_ns(20e6);
            let limits = Limits {
                max_time: end,
                max_events: 10_000_000,
            };
            run_until(&mut sys, &mut s, end, limits);
            let collisions: u64 = sys
                .p
                .media
                .iter()
                .flatten()
                .map(|(m, _)| m.collisions)
                .sum();
            let frames: u64 = sys.p.media.iter().flatten().map(|(m, _)| m.frames).sum();
            if half {
                assert!(collisions > 0 && frames > 0, "{collisions} {frames}");
            } else {
                assert!(sys.p.media.iter().all(Option::is_none));
                assert_eq!(collisions, 0);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 48,
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(7),
            ..proptest::test_runner::Config::default()
        })]

        /// Whatever the stations, frame size and seed: the medium carries no
        /// more than its line rate (preamble, frame and gap of every frame
        /// delivered fit in the run), and a lone station never collides.
        #[test]
        fn the_medium_never_carries_more_than_its_line_rate(
            n in 1usize..6,
            bytes in 72u64..1527,
            fast in proptest::bool::ANY,
            seed in 0u64..1_000_000,
        ) {
            let mbit = if fast { 100.0 } else { 10.0 };
            let ms = 20.0;
            let (m, d) = saturate(n, bytes, mbit, ms, seed);
            let frames: u64 = d.iter().sum();
            let bits = frames as f64 * (bytes + 12) as f64 * 8.0;
            proptest::prop_assert!(bits <= mbit * 1e6 * ms / 1e3 + (bytes + 12) as f64 * 8.0,
                "{n} stations carried {bits} bits in {ms} ms");
            proptest::prop_assert!(frames > 0);
            if n == 1 {
                proptest::prop_assert_eq!(m.collisions, 0);
            }
        }
    }
}
