//! The platform's side of the links: a frame at the end of a wire, through
//! a half-duplex segment or across a shared parallel bus, reaches the
//! function's engine, which may then put the next one on.

use super::ctx::{Ctx, Engines};
use super::event::Ev;
use super::state::Platform;
use crate::engine::Scheduler;
use crate::sim::csma::{Action, MediumEv};
use crate::sim::wire::Way;

impl<T: Copy> Platform<T> {
    /// The frame on wire `way` of `f` has arrived at the other end: the
    /// engine hears of it, then the wire takes the next frame.
    pub(crate) fn wire_done(
        &mut self,
        f: usize,
        way: Way,
        e: &mut impl Engines<T>,
        s: &mut Scheduler<Ev<T>>,
    ) {
        if let Some(bus) = &mut self.shared[f] {
            // A shared bus: the frame that wins arbitration takes it before
            // the engine hears of the one that arrived, then both stations
            // may offer their next.
            let Some((way, frame)) = bus.arrive(s.now()) else {
                return;
            };
            if let Some((next, t)) = bus.start_next(s.now()) {
                s.schedule_in(t, Ev::WireDone(f, next));
            }
            e.frame_arrived(f, way, frame, &mut Ctx::new(self, s, f));
            let other = match way {
                Way::Out => Way::In,
                Way::In => Way::Out,
            };
            e.kick(f, other, &mut Ctx::new(self, s, f));
            return;
        }
        let Some(frame) = self.wires[f][way as usize].arrive(s.now()) else {
            return;
        };
        e.frame_arrived(f, way, frame, &mut Ctx::new(self, s, f));
    }

    /// An event of the half-duplex segment of function `f`: a frame that
    /// got through reaches the engine (as at the end of a wire), then the
    /// engine may offer its station the next.
    pub(crate) fn medium_event(
        &mut self,
        f: usize,
        ev: MediumEv,
        e: &mut impl Engines<T>,
        s: &mut Scheduler<Ev<T>>,
    ) {
        let Some((m, _)) = &mut self.media[f] else {
            return;
        };
        let mut out = Vec::new();
        m.handle(ev, s.now(), &mut out);
        for a in out {
            match a {
                Action::Schedule(at, ev) => s.schedule_at(at, Ev::Medium(f, ev)),
                Action::Delivered(station, frame) => {
                    let way = if station == 0 { Way::Out } else { Way::In };
                    e.frame_arrived(f, way, frame, &mut Ctx::new(self, s, f));
                }
            }
        }
    }
}
