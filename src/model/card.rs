//! The one check of a card in a slot: the adapter and the slot exist, the
//! card runs in the slot (a bus mode both have), the partition owns the
//! slot's chassis, no earlier card holds the slot, and the link the card is
//! told to run over exists and can replace its own. The scenario loader, the
//! placement request loader, the sweep's points and assembly all ask
//! [`fit_card`]; each words the [`CardProblem`]s in its own terms (a file,
//! key and line for the loaders, the point for a sweep).

use std::fmt;

use super::{AdapterSpec, Experiment, LinkSpec, Registry, ServerSpec, SlotSpec};

/// A card resolved against its server: its adapter, its slot, the bus mode
/// the two negotiate, and the link it runs over instead of its own, if any.
#[derive(Debug, Clone, Copy)]
pub struct CardFit<'a> {
    /// The adapter.
    pub adapter: &'a AdapterSpec,
    /// Its slot.
    pub slot: &'a SlotSpec,
    /// The bus mode the card runs in the slot (alone on its segment).
    pub mode: &'a str,
    /// The link the card runs over instead of its functions' own.
    pub link: Option<&'a LinkSpec>,
}

/// Why a card cannot be where it is asked to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CardProblem {
    /// No adapter of this name.
    UnknownAdapter(String),
    /// The server has no slot of this name.
    UnknownSlot(String),
    /// The card and the slot share no bus mode (why, in words).
    NoMode(String),
    /// The partition does not own the slot's chassis (why, in words).
    NotOwned(String),
    /// The card of this index among the earlier ones holds the slot.
    SlotTaken(usize),
    /// No link of this name.
    UnknownLink(String),
    /// The link cannot replace the card's (why, in words).
    LinkMismatch(String),
}

/// Which key of a card a problem is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardKey {
    /// `adapter`.
    Adapter,
    /// `slot`.
    Slot,
    /// `link`.
    Link,
}

impl CardProblem {
    /// The key the problem is about.
    pub fn key(&self) -> CardKey {
        match self {
            CardProblem::UnknownAdapter(_) => CardKey::Adapter,
            CardProblem::UnknownSlot(_)
            | CardProblem::NoMode(_)
            | CardProblem::NotOwned(_)
            | CardProblem::SlotTaken(_) => CardKey::Slot,
            CardProblem::UnknownLink(_) | CardProblem::LinkMismatch(_) => CardKey::Link,
        }
    }
}

/// The problem in words, without the card's name or where it is written.
impl fmt::Display for CardProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CardProblem::UnknownAdapter(a) => write!(f, "unknown adapter `{a}`"),
            CardProblem::UnknownSlot(s) => write!(f, "unknown slot `{s}`"),
            CardProblem::SlotTaken(_) => f.write_str("the slot already holds a card"),
            CardProblem::UnknownLink(l) => write!(f, "unknown link `{l}`"),
            CardProblem::NotOwned(why)
            | CardProblem::NoMode(why)
            | CardProblem::LinkMismatch(why) => f.write_str(why),
        }
    }
}

/// Where a card is asked to be: its adapter and slot by name, the link it
/// runs over instead of its own (if any), and the partition's cells (when
/// known: the slot's chassis must be one of the partition's).
#[derive(Debug, Clone, Copy)]
pub struct CardRequest<'r> {
    /// Adapter name.
    pub adapter: &'r str,
    /// Slot name.
    pub slot: &'r str,
    /// Link name, if the card runs over another link than its own.
    pub link: Option<&'r str>,
    /// Cells of the partition, if known.
    pub cells: Option<u32>,
}

/// Checks one card of `server` against the registry and the slots the
/// earlier cards hold (`earlier`, in order): the card resolved, or every
/// problem found, in the order of [`CardProblem`]'s variants.
pub fn fit_card<'a>(
    reg: &'a Registry,
    server: &'a ServerSpec,
    card: CardRequest,
    earlier: &[&str],
) -> Result<CardFit<'a>, Vec<CardProblem>> {
    let mut problems = Vec::new();
    let adapter = reg.adapters.get(card.adapter);
    if adapter.is_none() {
        problems.push(CardProblem::UnknownAdapter(card.adapter.to_string()));
    }
    let slot = server.slots.iter().find(|s| s.name == card.slot);
    if slot.is_none() {
        problems.push(CardProblem::UnknownSlot(card.slot.to_string()));
    }
    let mut mode = None;
    if let Some(slot) = slot {
        if let Some(adapter) = adapter {
            mode = adapter.modes.iter().find(|m| slot.modes.contains(m));
            if mode.is_none() {
                problems.push(CardProblem::NoMode(format!(
                    "adapter `{}` (modes {}) cannot run in slot `{}` (modes {})",
                    adapter.name,
                    adapter.modes.join(", "),
                    slot.name,
                    slot.modes.join(", ")
                )));
            }
        }
        if let Some(why) = card.cells.and_then(|cells| server.not_owned(slot, cells)) {
            problems.push(CardProblem::NotOwned(why));
        }
        if let Some(j) = earlier.iter().position(|s| *s == slot.name) {
            problems.push(CardProblem::SlotTaken(j));
        }
    }
    let mut link = None;
    if let (Some(name), Some(adapter)) = (card.link, adapter) {
        match fit_link(reg, adapter, name) {
            Ok(l) => link = Some(l),
            Err(p) => problems.push(p),
        }
    }
    match (adapter, slot, mode, problems.is_empty()) {
        (Some(adapter), Some(slot), Some(mode), true) => Ok(CardFit {
            adapter,
            slot,
            mode,
            link,
        }),
        _ => Err(problems),
    }
}

/// Every card of `exp` on `server`, in order, each checked by [`fit_card`]
/// against the slots of the cards before it, the partition judged when
/// `cells` is given: the cards resolved, or the first that does not fit
/// (its index) with its problems.
pub fn fit_cards<'a>(
    reg: &'a Registry,
    server: &'a ServerSpec,
    exp: &Experiment,
    cells: Option<u32>,
) -> Result<Vec<CardFit<'a>>, (usize, Vec<CardProblem>)> {
    let mut fits = Vec::new();
    for (j, (_, adapter, slot)) in exp.cards.iter().enumerate() {
        let request = CardRequest {
            adapter,
            slot,
            link: exp.links.get(j).and_then(|l| l.as_deref()),
            cells,
        };
        let earlier: Vec<&str> = exp.cards[..j].iter().map(|c| c.2.as_str()).collect();
        fits.push(fit_card(reg, server, request, &earlier).map_err(|p| (j, p))?);
    }
    Ok(fits)
}

/// The link named `name` that a card of `adapter` runs over instead of its
/// functions' own: one of the same framing as each function's own link (an
/// interface setting such as the MTU or the duplex).
pub fn fit_link<'a>(
    reg: &'a Registry,
    adapter: &AdapterSpec,
    name: &str,
) -> Result<&'a LinkSpec, CardProblem> {
    let link = reg
        .links
        .get(name)
        .ok_or_else(|| CardProblem::UnknownLink(name.to_string()))?;
    match reg.link_mismatch(adapter, link) {
        Some(why) => Err(CardProblem::LinkMismatch(why)),
        None => Ok(link),
    }
}

/// A bus segment of an experiment: the cards on it (their indices, in
/// order) and the bus mode it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentFit<'a> {
    /// The cards on it.
    pub cards: Vec<usize>,
    /// Its bus mode: the fastest every card on it and every slot of it can
    /// run (one conventional PCI card slows them all).
    pub mode: &'a str,
}

/// The bus segments the cards `fits` are on, in order of first appearance
/// (a slot naming a `segment` shares it with every other slot naming it),
/// each with its mode; the problem in words when the cards of one segment
/// share no mode.
pub fn fit_segments<'a>(fits: &[CardFit<'a>]) -> Result<Vec<SegmentFit<'a>>, String> {
    let mut keys: Vec<(bool, &str)> = Vec::new();
    let mut cards: Vec<Vec<usize>> = Vec::new();
    for (c, fit) in fits.iter().enumerate() {
        let key = match &fit.slot.segment {
            Some(seg) => (true, seg.as_str()),
            None => (false, fit.slot.name.as_str()),
        };
        match keys.iter().position(|k| *k == key) {
            Some(g) => cards[g].push(c),
            None => {
                keys.push(key);
                cards.push(vec![c]);
            }
        }
    }
    cards
        .into_iter()
        .map(|on| {
            let first = fits[on[0]].adapter;
            let mode = first.modes.iter().find(|m| {
                on.iter()
                    .all(|&c| fits[c].adapter.modes.contains(m) && fits[c].slot.modes.contains(m))
            });
            match mode {
                Some(mode) => Ok(SegmentFit { cards: on, mode }),
                None => {
                    let named: Vec<String> = on
                        .iter()
                        .map(|&c| format!("`{}` in `{}`", fits[c].adapter.name, fits[c].slot.name))
                        .collect();
                    Err(format!(
                        "the cards on one bus segment share no bus mode: {}",
                        named.join(", ")
                    ))
                }
            }
        })
        .collect()
}
