//! The model's structural error by mechanism family: how far, in log
//! space, figures held out of the fit fell from their predictions, grouped
//! by what bound their run (`models/spread.toml`, written by `iosim
//! validate --cross-validate --spread-out FILE`).

/// The mechanism family of a run: what its first-named bottleneck is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// A PCI, PCI-X or HSC bus segment.
    Bus,
    /// The host path above the buses: ropes, an I/O controller, memory.
    HostPath,
    /// A host CPU.
    Cpu,
    /// An adapter's own processor.
    CardProcessor,
    /// A link (wire) of an adapter.
    Link,
    /// No resource saturated: latency or a window bounds the run.
    Latency,
}

impl Family {
    /// Every family, in the order the spread file and the reports list them.
    pub const ALL: [Family; 6] = [
        Family::Bus,
        Family::HostPath,
        Family::Cpu,
        Family::CardProcessor,
        Family::Link,
        Family::Latency,
    ];

    /// Its name in files and reports.
    pub fn name(self) -> &'static str {
        match self {
            Family::Bus => "bus",
            Family::HostPath => "host-path",
            Family::Cpu => "cpu",
            Family::CardProcessor => "card-processor",
            Family::Link => "link",
            Family::Latency => "latency",
        }
    }

    /// The family of that name.
    pub fn named(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The family of a run's bottleneck as [`crate::sim::ExperimentResult`]
    /// names it: its first (busiest) resource.
    pub fn of_bottleneck(bottleneck: &str) -> Family {
        if bottleneck.starts_with("none saturated") {
            return Family::Latency;
        }
        let first = bottleneck.split("; ").next().unwrap_or("");
        if first.starts_with("bus ") {
            Family::Bus
        } else if first.starts_with("CPU ") {
            Family::Cpu
        } else if first.starts_with("processor of ") {
            Family::CardProcessor
        } else if first.starts_with("link ") {
            Family::Link
        } else if first.starts_with("ropes ")
            || first.starts_with("I/O controller ")
            || first.starts_with("memory")
        {
            Family::HostPath
        } else {
            Family::Latency
        }
    }
}

/// The structural spread of one family.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FamilySpread {
    /// The family.
    pub family: Family,
    /// The standard deviation of `ln(published / predicted)` over the
    /// held-out figures of the family.
    pub sigma: f64,
    /// Held-out figures it was estimated from.
    pub figures: usize,
}

/// The structural spread of every family the cross-validation pinned, and
/// the one taken for the others.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructuralSpread {
    /// Families with enough held-out figures, in [`Family::ALL`] order.
    pub families: Vec<FamilySpread>,
    /// The standard deviation (log space) of a family not listed: one
    /// the papers rarely pinned.
    pub default_sigma: f64,
    /// Where the values come from (the file, and what wrote it).
    pub basis: String,
}

impl StructuralSpread {
    /// The standard deviation (log space) of `family`, and whether the
    /// cross-validation pinned it (false: the default).
    pub fn sigma_of(&self, family: Family) -> (f64, bool) {
        match self.families.iter().find(|f| f.family == family) {
            Some(f) => (f.sigma, true),
            None => (self.default_sigma, false),
        }
    }
}
