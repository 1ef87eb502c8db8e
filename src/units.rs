//! Units as newtypes at the boundary, and the unit strings of model files.
//!
//! Base units: simulated time in integer picoseconds; sizes in bytes; rates in
//! bytes per second. Published throughputs use decimal prefixes:
//! MB/s = 10^6 bytes/s, Mbit/s = 10^6 bit/s (never MiB).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Simulated time or a duration, in picoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Picos(pub u64);

/// 2^63: below it, converting between `f64` and `i64` gives the values the
/// conversions between `f64` and `u64` give.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// `x.round()` as a `u64` for the hot path (0 for negative or NaN, saturating
/// above `u64::MAX`), bit for bit what `x.round().max(0.0) as u64` gives, but
/// without a call to libm's `round` (not an instruction on baseline x86-64):
/// below 2^53, `x - trunc(x)` is exact.
#[inline]
pub fn round_u64(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    if x < TWO_POW_63 {
        // The signed conversions: cheaper on x86-64, where the unsigned ones
        // branch; below 2^63 they give the same values. The half is added
        // as a 0 or 1, not by a branch: a random duration's fraction is
        // above a half as often as below, so a branch would be mispredicted
        // half the time.
        let t = x as i64;
        return t as u64 + u64::from(x - t as f64 >= 0.5);
    }
    let t = x as u64;
    if x - t as f64 >= 0.5 {
        t.saturating_add(1)
    } else {
        t
    }
}

/// `x.ceil()` as a `u64` for the hot path (0 for negative or NaN,
/// saturating), bit for bit what `x.ceil() as u64` gives, without libm.
#[inline]
pub fn ceil_u64(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    if x < TWO_POW_63 {
        // As in `round_u64`: the signed conversions, exact below 2^63, and
        // the step up added without a branch.
        let t = x as i64;
        return t as u64 + u64::from((t as f64) < x);
    }
    let t = x as u64;
    if (t as f64) < x {
        t.saturating_add(1)
    } else {
        t
    }
}

impl Picos {
    /// Picoseconds in one second.
    pub const PER_SECOND: u64 = 1_000_000_000_000;
    /// From nanoseconds (rounded to the nearest picosecond).
    pub fn from_ns(ns: f64) -> Picos {
        Picos(round_u64(ns * 1e3))
    }
    /// From microseconds.
    pub fn from_us(us: f64) -> Picos {
        Picos(round_u64(us * 1e6))
    }
    /// From seconds.
    pub fn from_secs(s: f64) -> Picos {
        Picos(round_u64(s * 1e12))
    }
    /// As seconds.
    pub fn secs(self) -> f64 {
        self.0 as f64 / 1e12
    }
    /// Time to move `bytes` at `rate` (rounded up to a whole picosecond).
    pub fn to_move(bytes: u64, rate: BytesPerSec) -> Picos {
        Picos(ceil_u64((bytes as f64) * 1e12 / rate.0))
    }
}

impl Add for Picos {
    type Output = Picos;
    fn add(self, o: Picos) -> Picos {
        Picos(self.0.saturating_add(o.0))
    }
}
impl AddAssign for Picos {
    fn add_assign(&mut self, o: Picos) {
        self.0 = self.0.saturating_add(o.0);
    }
}
impl Sub for Picos {
    type Output = Picos;
    fn sub(self, o: Picos) -> Picos {
        Picos(self.0.saturating_sub(o.0))
    }
}
impl std::ops::Mul<u64> for Picos {
    type Output = Picos;
    fn mul(self, n: u64) -> Picos {
        Picos(self.0 * n)
    }
}

impl fmt::Display for Picos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ps", self.0)
    }
}

/// A data rate in bytes per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct BytesPerSec(pub f64);

/// A rate with its time per byte worked out once, for the hot path:
/// [`MoveRate::time`] is bit for bit [`Picos::to_move`] at the rate, without
/// a division when the rate is a whole number of bytes per second, at least
/// 10^6, that divides 10^12 (a whole number of picoseconds per byte, as the
/// ropes', the I/O controllers' and a gigabit link's).
///
/// Why it is exact: 10^12 = 2^12 * 5^12, so `bytes * 10^12` is a float
/// exactly when `bytes * 5^12 <= 2^53`, that is for `bytes` up to
/// [`MoveRate::EXACT_BYTES`]; the division of that by the rate is then an
/// exact quotient, `bytes` times the picoseconds per byte (below 2^53 with
/// at most 10^6 of them per byte), and IEEE division returns an exact
/// quotient exactly, which `ceil` leaves as it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoveRate {
    rate: BytesPerSec,
    /// Picoseconds per byte when whole (see above), else 0.
    ps_per_byte: u64,
}

impl MoveRate {
    /// The most bytes `bytes * 10^12` is exact for as a float.
    pub const EXACT_BYTES: u64 = 36_893_488;

    /// `rate`, with its picoseconds per byte if whole.
    pub fn new(rate: BytesPerSec) -> MoveRate {
        let r = rate.0;
        let whole = (1e6..=1e12).contains(&r) && r.fract() == 0.0;
        let ps_per_byte = match whole {
            true if Picos::PER_SECOND.is_multiple_of(r as u64) => Picos::PER_SECOND / r as u64,
            _ => 0,
        };
        MoveRate { rate, ps_per_byte }
    }

    /// The rate.
    pub fn rate(&self) -> BytesPerSec {
        self.rate
    }

    /// Time to move `bytes`: [`Picos::to_move`] at the rate.
    #[inline]
    pub fn time(&self, bytes: u64) -> Picos {
        if self.ps_per_byte != 0 && bytes <= Self::EXACT_BYTES {
            Picos(bytes * self.ps_per_byte)
        } else {
            Picos::to_move(bytes, self.rate)
        }
    }
}

impl BytesPerSec {
    /// As MB/s (10^6 bytes/s).
    pub fn mb_s(self) -> f64 {
        self.0 / 1e6
    }
    /// As Mbit/s (10^6 bit/s).
    ///
    /// ```
    /// use iosim::units::BytesPerSec;
    /// assert_eq!(BytesPerSec(125e6).mbit_s(), 1000.0);
    /// ```
    pub fn mbit_s(self) -> f64 {
        self.0 * 8.0 / 1e6
    }
}

/// The physical dimension a unit string measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    /// Durations, stored as nanoseconds.
    Time,
    /// Frequencies, stored as MHz.
    Frequency,
    /// Sizes, stored as bytes.
    Size,
    /// Rates, stored as bytes per second.
    Rate,
    /// Symbol rates, stored as baud.
    SymbolRate,
    /// Plain counts and ratios.
    Count,
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Every word of the dimension that `to_base` knows.
        write!(f, "{} ({})", self.noun(), self.words().join(", "))
    }
}

impl Dimension {
    /// The dimension in words, with its article (`a time`).
    pub fn noun(self) -> &'static str {
        match self {
            Dimension::Time => "a time",
            Dimension::Frequency => "a frequency",
            Dimension::Size => "a size",
            Dimension::Rate => "a rate",
            Dimension::SymbolRate => "a symbol rate",
            Dimension::Count => "a count",
        }
    }

    /// The base unit values of this dimension are stored in, for messages
    /// (empty for counts).
    pub fn base_unit(self) -> &'static str {
        match self {
            Dimension::Time => "ns",
            Dimension::Frequency => "MHz",
            Dimension::Size => "bytes",
            Dimension::Rate => "bytes/s",
            Dimension::SymbolRate => "baud",
            Dimension::Count => "",
        }
    }

    /// The unit values of this dimension are usually written in (ns, MHz,
    /// bytes, MB/s, Mbaud, count), which [`to_base`] knows.
    pub fn usual_unit(self) -> &'static str {
        match self {
            Dimension::Time => "ns",
            Dimension::Frequency => "MHz",
            Dimension::Size => "bytes",
            Dimension::Rate => "MB/s",
            Dimension::SymbolRate => "Mbaud",
            Dimension::Count => "count",
        }
    }
}

/// A number for a message: as Rust writes it, but in scientific notation
/// from 10^15 up and below 10^-6, so that 1e300 does not print in 301 digits.
///
/// ```
/// use iosim::units::readable;
/// assert_eq!(readable(1e300), "1e300");
/// assert_eq!(readable(66.67), "66.67");
/// ```
pub fn readable(v: f64) -> String {
    if v.is_finite() && v != 0.0 && (v.abs() >= 1e15 || v.abs() < 1e-6) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A range of base values for a message, in `unit`, the unit the user
/// wrote (`50 to 100000 MB/s`); in the base unit when `unit` is not one of
/// `dim` that [`to_base`] knows (`10 to 600 MHz`). A plain `count` is not
/// written.
///
/// ```
/// use iosim::units::{range_text, Dimension};
/// assert_eq!(range_text(5e7, 1e11, Dimension::Rate, "MB/s"), "50 to 100000 MB/s");
/// assert_eq!(range_text(0.0, 1.0, Dimension::Count, "percent"), "0 to 100 percent");
/// assert_eq!(range_text(10.0, 600.0, Dimension::Frequency, "?"), "10 to 600 MHz");
/// ```
pub fn range_text(lo: f64, hi: f64, dim: Dimension, unit: &str) -> String {
    let (unit, k) = match to_base(1.0, unit) {
        Some((d, k)) if d == dim && k > 0.0 => (unit, k),
        _ => (dim.base_unit(), 1.0),
    };
    // Twelve significant digits: 10 ns in ps is 10000, not 10000.000000000002.
    let tidy = |x: f64| {
        format!("{:.11e}", x / k)
            .parse::<f64>()
            .map_or_else(|_| readable(x / k), readable)
    };
    let sep = if unit.is_empty() || unit == "count" {
        String::new()
    } else {
        format!(" {unit}")
    };
    format!("{} to {}{sep}", tidy(lo), tidy(hi))
}

/// `n` things in words, the noun agreeing with the number: `1 slot`,
/// `2 slots` (`many` for any number but one).
///
/// ```
/// use iosim::units::count_text;
/// assert_eq!(count_text(1, "rope", "ropes"), "1 rope");
/// assert_eq!(count_text(0, "chassis", "chassis"), "0 chassis");
/// ```
pub fn count_text(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Every unit word [`to_base`] knows, in its order.
const UNIT_WORDS: &[&str] = &[
    "ps", "ns", "us", "ms", "s", "MHz", "GHz", "bit", "byte", "bytes", "B", "KB", "KiB", "MB/s",
    "GB/s", "Mbit/s", "Gbit/s", "Mbaud", "Gbaud", "count", "ratio", "clocks", "lines", "frames",
    "cpus", "cells", "index", "percent",
];

impl Dimension {
    /// Every unit word of this dimension that [`to_base`] knows.
    pub fn words(self) -> Vec<&'static str> {
        UNIT_WORDS
            .iter()
            .copied()
            .filter(|w| to_base(1.0, w).is_some_and(|(d, _)| d == self))
            .collect()
    }
}

/// What to say of unknown unit `unit` where a unit of `expected` (or, if
/// none is known, any unit) is wanted: the nearest known word, and every
/// accepted word.
///
/// ```
/// use iosim::units::{unknown_unit, Dimension};
/// assert_eq!(
///     unknown_unit("MHZ", Some(Dimension::Frequency)),
///     "unknown unit `MHZ` (did you mean `MHz`?); a frequency is in MHz or GHz"
/// );
/// ```
pub fn unknown_unit(unit: &str, expected: Option<Dimension>) -> String {
    let words = expected.map_or_else(|| UNIT_WORDS.to_vec(), Dimension::words);
    let list = match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => (*last).to_string(),
        None => String::new(),
    };
    let hint = crate::suggest::did_you_mean(unit, words.iter().copied());
    match expected {
        Some(d) => format!("unknown unit `{unit}`{hint}; {} is in {list}", d.noun()),
        None => format!("unknown unit `{unit}`{hint}; known units: {list}"),
    }
}

/// Converts `value` in `unit` to the base of its dimension
/// (ns, MHz, bytes, bytes/s, baud, count). `None` for an unknown unit.
///
/// ```
/// use iosim::units::{to_base, Dimension};
/// assert_eq!(to_base(64.0, "bit"), Some((Dimension::Size, 8.0)));
/// assert_eq!(to_base(250.0, "MB/s"), Some((Dimension::Rate, 250e6)));
/// ```
pub fn to_base(value: f64, unit: &str) -> Option<(Dimension, f64)> {
    use Dimension::*;
    let (d, k) = match unit {
        "ps" => (Time, 1e-3),
        "ns" => (Time, 1.0),
        "us" => (Time, 1e3),
        "ms" => (Time, 1e6),
        "s" => (Time, 1e9),
        "MHz" => (Frequency, 1.0),
        "GHz" => (Frequency, 1e3),
        "bit" => (Size, 0.125),
        "byte" | "bytes" | "B" => (Size, 1.0),
        "KB" => (Size, 1e3),
        "KiB" => (Size, 1024.0),
        "MB/s" => (Rate, 1e6),
        "GB/s" => (Rate, 1e9),
        "Mbit/s" => (Rate, 1e6 / 8.0),
        "Gbit/s" => (Rate, 1e9 / 8.0),
        "Mbaud" => (SymbolRate, 1e6),
        "Gbaud" => (SymbolRate, 1e9),
        "count" | "ratio" | "clocks" | "lines" | "frames" | "cpus" | "cells" | "index" => {
            (Count, 1.0)
        }
        "percent" => (Count, 0.01),
        _ => return None,
    };
    Some((d, value * k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_rounding_is_libms_bit_for_bit() {
        let mut cases = vec![
            0.0,
            -0.0,
            -1.5,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            1e19,
            1.9e19,
            9223372036854775808.0,
            9223372036854774784.0,
            9223372036854777856.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            123.456,
            1e-300,
        ];
        let mut r = crate::engine::RngStream::new(7, 3);
        for _ in 0..100_000 {
            let u = r.uniform();
            cases.push(u * 1e6);
            cases.push(u * 1e12 * r.uniform());
            cases.push((u * 1e4).floor() + 0.5);
        }
        for x in cases {
            assert_eq!(round_u64(x), x.round().max(0.0) as u64, "round {x}");
            assert_eq!(ceil_u64(x), x.ceil() as u64, "ceil {x}");
        }
    }

    #[test]
    fn conversions_use_decimal_prefixes_for_rates() {
        assert_eq!(to_base(1.0, "MB/s"), Some((Dimension::Rate, 1e6)));
        assert_eq!(to_base(8.0, "Mbit/s"), Some((Dimension::Rate, 1e6)));
        assert_eq!(to_base(1.0, "KiB"), Some((Dimension::Size, 1024.0)));
        assert_eq!(to_base(1.0, "furlongs"), None);
    }

    #[test]
    fn time_to_move_rounds_up() {
        let t = Picos::to_move(512, BytesPerSec(1.066e9));
        assert_eq!(t, Picos(480_301));
        assert_eq!(Picos::from_ns(7.5), Picos(7500));
    }

    #[test]
    fn a_rate_s_time_worked_out_once_is_to_move_bit_for_bit() {
        // Whole picoseconds per byte (ropes, controllers, links), rates just
        // off them, rates that are not whole, and the edges of the fast path.
        let mut rates = vec![
            250e6, 500e6, 1e9, 2e9, 125e6, 1e6, 1e12, 999_999.0, 8.5e9, 1.066e9, 533.33e6, 0.0, 3e9,
        ];
        let mut r = crate::engine::RngStream::new(11, 5);
        for _ in 0..200 {
            rates.push((r.uniform() * 4e9).floor());
            rates.push(1e12 / (1.0 + (r.uniform() * 1e6).floor()));
        }
        let mut sizes = vec![
            0,
            1,
            64,
            1516,
            9218,
            MoveRate::EXACT_BYTES - 1,
            MoveRate::EXACT_BYTES,
            MoveRate::EXACT_BYTES + 1,
            u64::MAX / 2,
        ];
        for _ in 0..200 {
            sizes.push((r.uniform() * 70e6) as u64);
        }
        for &rate in &rates {
            let m = MoveRate::new(BytesPerSec(rate));
            for &b in &sizes {
                assert_eq!(
                    m.time(b),
                    Picos::to_move(b, BytesPerSec(rate)),
                    "{b} B at {rate} B/s"
                );
            }
        }
        // The ropes', controllers' and gigabit links' rates take the fast path.
        for rate in [250e6, 500e6, 1e9, 2e9, 125e6] {
            assert!(MoveRate::new(BytesPerSec(rate)).ps_per_byte > 0, "{rate}");
        }
    }

    #[test]
    fn rate_views() {
        let r = BytesPerSec(125e6);
        assert!((r.mbit_s() - 1000.0).abs() < 1e-9);
        assert!((r.mb_s() - 125.0).abs() < 1e-9);
    }
}
