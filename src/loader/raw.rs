//! Serde structures that mirror the TOML files exactly (parse, then validate).

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// `key = { value = 133.33, unit = "MHz", source = "..." }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawParam {
    pub value: Spanned<f64>,
    pub unit: Spanned<String>,
    pub source: String,
    /// `range = [low, high]`: how far the value may be off, in its unit.
    #[serde(default)]
    pub range: Option<Spanned<Vec<f64>>>,
    #[serde(default)]
    #[allow(dead_code)]
    pub note: String,
}

pub type RawParams = BTreeMap<Spanned<String>, Spanned<RawParam>>;

/// The keys a file layout allows, beside the serde structs below (which
/// deny any other): checked first, so that every unknown key of a file is
/// reported at once and in file order.
pub enum Shape {
    /// Any value.
    Any,
    /// A table with these keys, each value of its shape.
    Table(&'static [(&'static str, Shape)]),
    /// A table of any keys (checked elsewhere), each value of this shape.
    Map(&'static Shape),
    /// An array of tables of this shape (`[[slot]]`).
    Tables(&'static Shape),
}

use Shape::{Any, Map, Table, Tables};

const PARAMS: Shape = Map(&Table(&[
    ("value", Any),
    ("unit", Any),
    ("source", Any),
    ("range", Any),
    ("note", Any),
]));

/// A file's `kind`, whatever its layout.
pub const KIND: Shape = Any;

/// [`RawBus`].
pub const BUS: Shape = Table(&[
    ("kind", Any),
    ("name", Any),
    ("description", Any),
    ("protocol", Any),
    ("param", PARAMS),
]);

/// [`RawLink`].
pub const LINK: Shape = Table(&[
    ("kind", Any),
    ("name", Any),
    ("description", Any),
    ("framing", Any),
    ("param", PARAMS),
]);

/// [`RawServer`] with its [`RawSlot`]s.
pub const SERVER: Shape = Table(&[
    ("kind", Any),
    ("name", Any),
    ("description", Any),
    ("extends", Any),
    ("cpu", Any),
    ("costs_from", Any),
    ("param", PARAMS),
    ("bridge", PARAMS),
    ("io_controller", Tables(&IO_CONTROLLER)),
    ("slot", Tables(&SLOT)),
    (
        "chassis",
        Tables(&Table(&[
            ("count", Any),
            ("per_cell", Any),
            ("note", Any),
            ("io_controller", IO_CONTROLLER),
            ("slot", Tables(&SLOT)),
        ])),
    ),
]);

const IO_CONTROLLER: Shape = Table(&[
    ("name", Any),
    ("note", Any),
    ("cell", Any),
    ("param", PARAMS),
]);

const SLOT: Shape = Table(&[
    ("name", Any),
    ("modes", Any),
    ("ropes", Any),
    ("segment", Any),
    ("controller", Any),
    ("note", Any),
]);

/// [`RawAdapter`] with its [`RawFunction`]s.
pub const ADAPTER: Shape = Table(&[
    ("kind", Any),
    ("name", Any),
    ("description", Any),
    ("extends", Any),
    ("modes", Any),
    (
        "bridge",
        Table(&[
            ("secondary_mode", Any),
            ("note", Any),
            ("secondary", PARAMS),
            ("primary", PARAMS),
        ]),
    ),
    (
        "function",
        Tables(&Table(&[
            ("name", Any),
            ("engine", Any),
            ("link", Any),
            ("param", PARAMS),
        ])),
    ),
]);

/// [`RawCpu`].
pub const CPU: Shape = Table(&[
    ("kind", Any),
    ("name", Any),
    ("description", Any),
    ("benchmark", Any),
    ("param", PARAMS),
]);

/// [`RawTestbed`].
pub const TESTBED: Shape = Table(&[
    ("kind", Any),
    ("name", Any),
    ("description", Any),
    ("param", PARAMS),
]);

/// The keys of a `[run]` table, in scenarios and place requests alike.
pub const RUN: Shape = Table(&[
    ("duration_ms", Any),
    ("warmup_ms", Any),
    ("max_events", Any),
    ("precision_pct", Any),
    ("min_ms", Any),
    ("batch_ms", Any),
]);

/// The keys of a workload: a scenario's `[[experiment.workload]]` and a
/// place request's `[[workload]]`.
pub const WORKLOAD: Shape = Table(&[
    ("card", Any),
    ("function", Any),
    ("kind", Any),
    ("direction", Any),
    ("socket_kib", Any),
    ("message_kib", Any),
    ("block_kib", Any),
    ("outstanding", Any),
    ("interrupt_cpu", Any),
    ("process_cpu", Any),
    ("to", Any),
]);

/// [`RawScenario`].
pub const SCENARIO: Shape = Table(&[
    (
        "scenario",
        Table(&[("name", Any), ("title", Any), ("source", Any), ("fit", Any)]),
    ),
    ("run", RUN),
    (
        "experiment",
        Tables(&Table(&[
            ("id", Any),
            ("server", Any),
            ("testbed", Any),
            ("cells", Any),
            ("cpus_per_cell", Any),
            ("note", Any),
            (
                "card",
                Tables(&Table(&[
                    ("name", Any),
                    ("adapter", Any),
                    ("slot", Any),
                    ("link", Any),
                ])),
            ),
            ("workload", Tables(&WORKLOAD)),
            (
                "figure",
                Tables(&Table(&[
                    ("id", Any),
                    ("card", Any),
                    ("function", Any),
                    ("published", Any),
                    ("unit", Any),
                    ("source", Any),
                ])),
            ),
        ])),
    ),
]);

/// Only the `kind` key, read first to choose the layout.
#[derive(Debug, Deserialize)]
pub struct RawKind {
    pub kind: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBus {
    #[allow(dead_code)]
    pub kind: String,
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    pub protocol: Spanned<String>,
    pub param: Spanned<RawParams>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLink {
    #[allow(dead_code)]
    pub kind: String,
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    pub framing: Spanned<String>,
    pub param: Spanned<RawParams>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSlot {
    pub name: Spanned<String>,
    pub modes: Spanned<Vec<Spanned<String>>>,
    pub ropes: Spanned<f64>,
    #[serde(default)]
    pub segment: Option<Spanned<String>>,
    #[serde(default)]
    pub controller: Option<Spanned<String>>,
    #[serde(default)]
    #[allow(dead_code)]
    pub note: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    #[allow(dead_code)]
    pub kind: String,
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    /// The server whose every parameter, I/O tree and CPU this one takes,
    /// overriding only what it states.
    #[serde(default)]
    pub extends: Option<Spanned<String>>,
    #[serde(default)]
    pub cpu: Option<Spanned<String>>,
    #[serde(default)]
    pub costs_from: Option<Spanned<String>>,
    /// Required unless the server `extends` another.
    #[serde(default)]
    pub param: Option<Spanned<RawParams>>,
    /// Required unless the server `extends` another.
    #[serde(default)]
    pub bridge: Option<Spanned<RawParams>>,
    #[serde(default)]
    pub io_controller: Vec<RawIoController>,
    #[serde(default)]
    pub slot: Option<Spanned<Vec<RawSlot>>>,
    #[serde(default)]
    pub chassis: Vec<RawChassis>,
}

/// `[[chassis]]`: an I/O chassis declared once (its controller and its
/// slots) and copied `count` times, or `per_cell` times per cell of the
/// server's `cells_max`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawChassis {
    #[serde(default)]
    pub count: Option<Spanned<f64>>,
    #[serde(default)]
    pub per_cell: Option<Spanned<f64>>,
    #[serde(default)]
    #[allow(dead_code)]
    pub note: String,
    pub io_controller: Spanned<RawIoController>,
    pub slot: Spanned<Vec<RawSlot>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIoController {
    pub name: Spanned<String>,
    #[serde(default)]
    #[allow(dead_code)]
    pub note: String,
    pub cell: Option<Spanned<f64>>,
    pub param: Spanned<RawParams>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFunction {
    pub name: Spanned<String>,
    pub engine: Spanned<String>,
    pub link: Option<Spanned<String>>,
    #[serde(default)]
    pub param: Option<Spanned<RawParams>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAdapter {
    #[allow(dead_code)]
    pub kind: String,
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    /// The adapter whose modes, bridge and functions this one takes,
    /// overriding only what it states.
    #[serde(default)]
    pub extends: Option<Spanned<String>>,
    /// Required unless the adapter `extends` another.
    #[serde(default)]
    pub modes: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    pub bridge: Option<Spanned<RawCardBridge>>,
    /// Required unless the adapter `extends` another.
    #[serde(default)]
    pub function: Option<Spanned<Vec<RawFunction>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCardBridge {
    pub secondary_mode: Spanned<String>,
    #[serde(default)]
    #[allow(dead_code)]
    pub note: String,
    pub secondary: Spanned<RawParams>,
    pub primary: Spanned<RawParams>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCpu {
    #[allow(dead_code)]
    pub kind: String,
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    pub benchmark: Spanned<String>,
    pub param: Spanned<RawParams>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTestbed {
    #[allow(dead_code)]
    pub kind: String,
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    pub param: Spanned<RawParams>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenarioHead {
    pub name: Spanned<String>,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub source: String,
    /// Whether the fit sees the scenario's figures (true when absent).
    #[serde(default)]
    pub fit: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRun {
    pub duration_ms: Option<Spanned<f64>>,
    pub warmup_ms: Option<Spanned<f64>>,
    pub max_events: Option<Spanned<f64>>,
    pub precision_pct: Option<Spanned<f64>>,
    pub min_ms: Option<Spanned<f64>>,
    pub batch_ms: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCard {
    pub name: Option<Spanned<String>>,
    pub adapter: Spanned<String>,
    pub slot: Spanned<String>,
    /// The link every function of the card drives in this experiment, in
    /// place of the adapter file's (a port set to another speed or duplex).
    pub link: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    pub card: Spanned<String>,
    pub function: Spanned<String>,
    pub kind: Spanned<String>,
    pub direction: Spanned<String>,
    pub socket_kib: Option<Spanned<f64>>,
    pub message_kib: Option<Spanned<f64>>,
    pub block_kib: Option<Spanned<f64>>,
    pub outstanding: Option<Spanned<f64>>,
    pub interrupt_cpu: Option<Spanned<f64>>,
    pub process_cpu: Option<Spanned<f64>>,
    /// ip-forward: the function of the same card the packets leave by.
    pub to: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFigure {
    pub id: Spanned<String>,
    pub card: Spanned<String>,
    pub function: Spanned<String>,
    pub published: Spanned<f64>,
    pub unit: Spanned<String>,
    #[serde(default)]
    pub source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExperiment {
    pub id: Spanned<String>,
    pub server: Spanned<String>,
    pub testbed: Spanned<String>,
    pub cells: Spanned<f64>,
    pub cpus_per_cell: Option<Spanned<f64>>,
    #[serde(default)]
    #[allow(dead_code)]
    pub note: String,
    pub card: Spanned<Vec<RawCard>>,
    #[serde(default)]
    pub workload: Vec<RawWorkload>,
    #[serde(default)]
    pub figure: Vec<RawFigure>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub scenario: RawScenarioHead,
    pub run: Option<RawRun>,
    pub experiment: Spanned<Vec<RawExperiment>>,
}
