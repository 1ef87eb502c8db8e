//! Validated descriptions of hardware and experiments: what the loader produces
//! from TOML and what the simulator assembles into components. No file access here.

mod calibration;
mod card;
mod params;
mod place;
mod scenario;
pub mod schema;
mod spec;
mod spread;
mod workload;

pub use calibration::{
    id_matches, CalibrationSpec, Choice, FittedValue, FreeParam, PaperDef, SameMeasurement,
};
pub use card::{
    fit_card, fit_cards, fit_link, fit_segments, CardFit, CardKey, CardProblem, CardRequest,
    SegmentFit,
};
pub use params::{ParamSet, ParamValue};
pub use place::{Apart, Domain, Objective, PlaceCard, PlaceRequest};
pub use scenario::{Experiment, FigureScope, FigureSpec, RunSpec, Scenario, Workload};
pub use spec::{
    negotiate_mode, AdapterSpec, BusSpec, CardBridgeSpec, CpuSpec, EngineDef, EngineKind, Extends,
    Framing, FunctionSpec, IoControllerSpec, LinkSpec, OwnParts, Protocol, Registry, ServerSpec,
    SlotSpec, TestbedSpec,
};
pub use spread::{Family, FamilySpread, StructuralSpread};
pub use workload::{usual_direction, Demand, Direction, Shape, WorkloadArgs, WorkloadDef};
