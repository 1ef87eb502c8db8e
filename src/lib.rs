//! iosim: a discrete-event simulator and capacity model of server I/O
//! subsystems — PCI and PCI-X buses at transaction level, the bridges, ropes
//! and cells above them, host CPUs, and the adapters and links below.
//!
//! Three activities, three layers: **describing** hardware and experiments
//! ([`loader`] reads TOML into [`model`]), **assembling** a system from them
//! ([`sim::config`]), and **executing** it on the [`engine`], in batches
//! run by the application layer ([`app`]); [`validate`]
//! sets what came out beside the published figures, [`sections`] arranges it
//! into a report's sections and [`report`] renders them.
#![warn(missing_docs)]

pub mod app;
pub mod bench;
pub mod calibrate;
pub mod charts;
pub mod engine;
pub mod error;
pub mod html;
pub mod interval;
pub mod loader;
pub mod model;
pub mod napkin;
pub mod part;
pub mod place;
pub mod report;
pub mod sections;
pub mod sensitivity;
pub mod show;
pub mod sim;
pub mod stats;
pub mod suggest;
pub mod sweep;
pub mod units;
pub mod validate;
pub mod warnings;

pub use error::{Error, Result};
