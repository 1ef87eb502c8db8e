//! A mutation fuzzer for the three loaders on stable Rust (issue 47; the
//! cargo-fuzz targets under `fuzz/` need a nightly toolchain).
//!
//! Seeds: the bundled files (`models/`, `scenarios/`, `models/calibration.toml`,
//! `models/fitted.toml`), `fuzz/seeds/TARGET/` and `tests/bad_inputs/`. Each
//! mutant (byte flips, token swaps, lines deleted, duplicated or moved, lines
//! spliced in from other files, numbers replaced by extreme values, strings by
//! long, empty, control-character or non-ASCII ones, truncation, crossover)
//! goes in-process through the library's loading function:
//!
//! - `model`: `loader::parse_model` (a model file alone in a `--models` directory);
//! - `scenario`: `loader::parse_scenario` against the bundled models, and a
//!   scenario it accepts simulated for 0.05 ms (at most 20,000 events) by
//!   `app::run_scenario`, an internal error (a panic in a simulation thread)
//!   being a crash;
//! - `calibration`: `loader::parse_calibration` and `loader::apply_fitted_text`,
//!   each on a fresh copy of the bundled models.
//!
//! A panic, or an input that takes over 5 s, is a crash: its input is written
//! to `target/fuzz-crashes/TARGET-N.toml` and the test fails. A mutant whose
//! error message (digits ignored) is new joins the in-memory corpus.
//!
//! ```sh
//! IOSIM_FUZZ_TARGET=model IOSIM_FUZZ_SECONDS=600 \
//!     cargo test --release --test fuzz_loaders -- --ignored --nocapture
//! ```
//!
//! `IOSIM_FUZZ_TARGET` is `model`, `scenario`, `calibration` or `all` (the
//! default; the duration is then per target), `IOSIM_FUZZ_SECONDS` defaults
//! to 5 and `IOSIM_FUZZ_SEED` (default 47) makes a run reproducible (given the
//! same number of executions). With `IOSIM_FUZZ_DUMP` set, each new outcome
//! is printed.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use iosim::app::{run_scenario, Runner};
use iosim::loader;
use iosim::model::{Registry, RunSpec};

/// An input taking longer than this is a hang.
const HANG: Duration = Duration::from_secs(5);
/// The in-memory corpus stops growing here.
const MAX_CORPUS: usize = 20_000;
/// Mutants larger than this are cut back (the loaders refuse 4 MiB anyway).
const MAX_LEN: usize = 256 * 1024;

/// An error message's first line up to any `;` (the list of what is known),
/// with what it quotes (in backticks) and its digits removed: which check
/// fired, not on what.
fn signature(message: &str) -> String {
    let first = message.lines().next().unwrap_or_default();
    let first = first.split(';').next().unwrap_or_default();
    let mut out = String::new();
    let mut quoted = false;
    for c in first.chars() {
        match c {
            '`' => {
                quoted = !quoted;
                if quoted {
                    out.push_str("`_`");
                }
            }
            _ if quoted || c.is_ascii_digit() => {}
            _ => out.push(c),
        }
    }
    out
}

/// Values that a loader accepting them should be looked at by hand.
const SUSPECT: &[&str] = &[
    "nan",
    "inf",
    "1e308",
    "1e-308",
    "5e-324",
    "1e400",
    "18446744073709551615",
    "9223372036854775807",
    "99999999999999999999",
    "-1",
];

/// Whether `v` appears in `text` as a value (after `=`, `[`, `,` or an
/// opening quote, outside a comment), not inside a word or a sentence.
fn as_value(text: &str, v: &str) -> bool {
    text.lines().any(|line| {
        let line = line.split('#').next().unwrap_or_default();
        line.match_indices(v).any(|(i, _)| {
            let before = line[..i].trim_end();
            let after = line[i + v.len()..].chars().next();
            // A quantity with its unit ("1e308 MB/s"), not a sentence.
            let rest = &line[i + v.len()..];
            let opens_string = before.ends_with('"')
                && before.matches('"').count() % 2 == 1
                && rest.find('"').is_some_and(|e| e <= 12);
            (before.ends_with(['=', '[', ',']) || opens_string)
                && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '.')
        })
    })
}

fn runner() -> &'static Runner {
    static RUNNER: OnceLock<Runner> = OnceLock::new();
    RUNNER.get_or_init(|| Runner::new(1).expect("a pool"))
}

fn bundled() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| loader::load_registry(&[]).expect("the bundled models load"))
}

/// xorshift64*: small, deterministic.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    Model,
    Scenario,
    Calibration,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Model => "model",
            Target::Scenario => "scenario",
            Target::Calibration => "calibration",
        }
    }

    /// Runs one input; the error messages, digits removed, are its signature.
    fn run(self, text: &str) -> String {
        let path = Path::new("fuzz.toml");
        let sig = |r: std::result::Result<(), iosim::Error>| match r {
            Ok(()) => "ok".to_string(),
            Err(e) => signature(&e.to_string()),
        };
        match self {
            Target::Model => sig(loader::parse_model(path.into(), text, bundled()).map(|_| ())),
            Target::Scenario => match loader::parse_scenario(path.into(), text, bundled()) {
                Err(e) => sig(Err(e)),
                // Accepted: simulated too, briefly, as `iosim run` would.
                Ok(mut sc) => {
                    sc.run = RunSpec {
                        duration_ms: 0.05,
                        warmup_ms: 0.0,
                        max_events: 20_000,
                        precision_pct: None,
                        min_ms: 0.01,
                        batch_ms: 0.05,
                    };
                    match run_scenario(bundled(), &sc, 1, runner()) {
                        // A panic in a simulation thread comes back as this.
                        Err(iosim::Error::Internal(m)) => panic!("internal error: {m}"),
                        r => format!("ok\nrun: {}", sig(r.map(|_| ()))),
                    }
                }
            },
            Target::Calibration => {
                let a =
                    sig(loader::parse_calibration(path, text, &mut bundled().clone()).map(|_| ()));
                let b =
                    sig(loader::apply_fitted_text(path, text, &mut bundled().clone()).map(|_| ()));
                format!("{a}\n{b}")
            }
        }
    }

    fn seeds(self) -> Vec<String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out: Vec<String> = Vec::new();
        let bundled = |p: &str| {
            loader::bundled_files(p)
                .into_iter()
                .map(|(_, t)| t.to_string())
        };
        let (dirs, files): (Vec<&str>, Vec<String>) = match self {
            Target::Model => (
                vec!["fuzz/seeds/model", "tests/bad_inputs/models"],
                loader::bundled_files("models/")
                    .into_iter()
                    .filter(|(p, _)| {
                        !p.ends_with("calibration.toml") && !p.ends_with("fitted.toml")
                    })
                    .map(|(_, t)| t.to_string())
                    .collect(),
            ),
            Target::Scenario => (
                vec!["fuzz/seeds/scenario", "tests/bad_inputs/scenarios"],
                bundled("scenarios/").collect(),
            ),
            Target::Calibration => (
                vec![
                    "fuzz/seeds/calibration",
                    "tests/bad_inputs/calibration",
                    "tests/bad_inputs/fitted",
                ],
                bundled("models/calibration.toml")
                    .chain(bundled("models/fitted.toml"))
                    .collect(),
            ),
        };
        out.extend(files);
        for d in dirs {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join(d))
                .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            paths.sort();
            for p in paths {
                if let Ok(t) = std::fs::read_to_string(&p) {
                    out.push(t);
                }
            }
        }
        out
    }
}

const EXTREMES: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1",
    "0.5",
    "-0.5",
    "1e308",
    "-1e308",
    "1e-308",
    "5e-324",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "+inf",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "99999999999999999999999999",
    "4294967296",
    "4294967295",
    "65536",
    "2147483648",
    "1e19",
    "1.8e19",
    "1e10",
    "0x7fffffffffffffff",
    "1_000_000",
    "\"\"",
    "\"0\"",
    "\"nan\"",
    "\"inf MHz\"",
    "\"1e308 MB/s\"",
    "\"-1 us\"",
    "\"0 ns\"",
    "\"nan ns\"",
    "\"1e-300 s\"",
    "\"18446744073709551615 B\"",
    "true",
    "[]",
    "{}",
    "[1, 2]",
    "[[]]",
];

fn long_string(rng: &mut Rng) -> String {
    let n = *rng.pick(&[255usize, 256, 4096, 65_535, 65_536, 70_000]);
    let c = *rng.pick(&[
        'a',
        'é',
        '中',
        '\u{1F600}',
        ' ',
        '_',
        '\u{202E}',
        '\u{0301}',
    ]);
    std::iter::repeat_n(c, n).collect()
}

fn odd_string(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => String::new(),
        1 => "\\u0000".into(),
        2 => "\\u001b[31m".into(),
        3 => "\\t\\n\\r".into(),
        4 => "<script>&amp;</script>".into(),
        5 => "../../etc/passwd".into(),
        6 => "é中\u{1F600}\u{202E}".into(),
        _ => long_string(rng),
    }
}

/// Token boundaries for TOML-ish text.
fn tokens(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let word = |c: u8| c.is_ascii_alphanumeric() || b"_-.+".contains(&c);
        if word(b[i]) {
            let s = i;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

/// The spans of numbers in `text`.
fn numbers(text: &str) -> Vec<(usize, usize)> {
    tokens(text)
        .into_iter()
        .filter(|&(s, e)| {
            let t = &text[s..e];
            t.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+')
                && t.chars().any(|c| c.is_ascii_digit())
        })
        .collect()
}

/// The spans of basic strings' contents.
fn strings(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open = None;
    for (i, c) in text.char_indices() {
        match (c, open) {
            ('"', None) => open = Some(i + 1),
            ('"', Some(s)) => {
                out.push((s, i));
                open = None;
            }
            ('\n', _) => open = None,
            _ => {}
        }
    }
    out
}

fn splice(text: &str, (s, e): (usize, usize), with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..s]);
    out.push_str(with);
    out.push_str(&text[e..]);
    out
}

fn mutate_once(rng: &mut Rng, text: &str, pool: &[String], dict: &[String]) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    match rng.below(14) {
        // A byte flip (kept only if the result is text).
        0 => {
            if text.is_empty() {
                return "x".into();
            }
            let mut b = text.as_bytes().to_vec();
            let i = rng.below(b.len());
            b[i] = match rng.below(3) {
                0 => b[i] ^ (1 << rng.below(8)),
                1 => *rng.pick(b"\"'[]{}=.,#\\\n \t0-+e"),
                _ => (rng.below(95) + 32) as u8,
            };
            String::from_utf8(b).unwrap_or_else(|_| text.to_string())
        }
        // A number replaced by an extreme value.
        1 | 2 => {
            let n = numbers(text);
            if n.is_empty() {
                return text.into();
            }
            let span = *rng.pick(&n);
            {
                let v: &str = rng.pick::<&str>(EXTREMES);
                splice(text, span, v)
            }
        }
        // A number inside a string with its unit ("66 MHz" -> "nan MHz").
        3 => {
            let s = strings(text);
            let cands: Vec<_> = s
                .into_iter()
                .filter(|&(a, b)| text[a..b].starts_with(|c: char| c.is_ascii_digit()))
                .collect();
            if cands.is_empty() {
                return text.into();
            }
            let (a, b) = *rng.pick(&cands);
            let inner = &text[a..b];
            let num_end = inner
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-'))
                .unwrap_or(inner.len());
            let v = rng.pick(&[
                "0",
                "-1",
                "1e308",
                "1e-308",
                "nan",
                "inf",
                "-inf",
                "1e400",
                "0.0000001",
                "18446744073709551616",
                "",
                "1.5",
                "-0",
            ]);
            splice(text, (a, a + num_end), v)
        }
        // A string replaced by an odd one.
        4 => {
            let s = strings(text);
            if s.is_empty() {
                return text.into();
            }
            let span = *rng.pick(&s);
            let with = odd_string(rng);
            splice(text, span, &with)
        }
        // A token replaced by one from the dictionary (swapping keys and names).
        5 | 6 => {
            let t = tokens(text);
            if t.is_empty() || dict.is_empty() {
                return text.into();
            }
            let span = *rng.pick(&t);
            {
                let v: &str = rng.pick::<String>(dict);
                splice(text, span, v)
            }
        }
        // A line deleted.
        7 => {
            if lines.is_empty() {
                return text.into();
            }
            let i = rng.below(lines.len());
            lines
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, l)| *l)
                .collect()
        }
        // A line (or block of lines) duplicated.
        8 => {
            if lines.is_empty() {
                return text.into();
            }
            let i = rng.below(lines.len());
            let n = 1 + rng.below(6).min(lines.len() - i - 1);
            let times = *rng.pick(&[1usize, 1, 1, 2, 10, 200]);
            let mut out = String::new();
            for l in &lines[..i + n] {
                out.push_str(l);
            }
            for _ in 0..times {
                for l in &lines[i..i + n] {
                    out.push_str(l);
                    if !l.ends_with('\n') {
                        out.push('\n');
                    }
                }
            }
            for l in &lines[i + n..] {
                out.push_str(l);
            }
            out
        }
        // Two lines swapped.
        9 => {
            if lines.len() < 2 {
                return text.into();
            }
            let mut v = lines.clone();
            let (a, b) = (rng.below(v.len()), rng.below(v.len()));
            v.swap(a, b);
            let mut out: String = v.concat();
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out
        }
        // A line from another file spliced in.
        10 | 11 => {
            let other = rng.pick(pool);
            let ol: Vec<&str> = other.split_inclusive('\n').collect();
            if ol.is_empty() {
                return text.into();
            }
            let l = rng.pick(&ol);
            let at = rng.below(lines.len() + 1);
            let mut out = String::new();
            for x in &lines[..at] {
                out.push_str(x);
            }
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(l);
            if !l.ends_with('\n') {
                out.push('\n');
            }
            for x in &lines[at..] {
                out.push_str(x);
            }
            out
        }
        // Truncated.
        12 => {
            let mut i = rng.below(text.len() + 1);
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            text[..i].to_string()
        }
        // Crossover with another file.
        _ => {
            let other = rng.pick(pool);
            let ol: Vec<&str> = other.split_inclusive('\n').collect();
            let a = rng.below(lines.len() + 1);
            let b = rng.below(ol.len() + 1);
            let mut out: String = lines[..a].concat();
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&ol[b..].concat());
            out
        }
    }
}

fn mutate(rng: &mut Rng, text: &str, pool: &[String], dict: &[String]) -> String {
    let n = 1 + rng.below(4);
    let mut t = text.to_string();
    for _ in 0..n {
        t = mutate_once(rng, &t, pool, dict);
        if t.len() > MAX_LEN {
            let mut i = MAX_LEN;
            while !t.is_char_boundary(i) {
                i -= 1;
            }
            t.truncate(i);
        }
    }
    t
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Stats {
    seeds: usize,
    corpus: usize,
    execs: u64,
    crashes: Vec<String>,
    errors: usize,
    accepted: u64,
}

fn fuzz(target: Target, seconds: u64, seed: u64) -> Stats {
    let seeds = target.seeds();
    let n_seeds = seeds.len();
    let crash_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-crashes");
    let mut dict: Vec<String> = {
        let mut set = std::collections::BTreeSet::new();
        for s in &seeds {
            for (a, b) in tokens(s) {
                if b - a < 40 {
                    set.insert(s[a..b].to_string());
                }
            }
        }
        set.into_iter().collect()
    };
    dict.extend(EXTREMES.iter().map(|s| s.to_string()));

    // The input being run, for the watchdog to save if it hangs.
    let current = Arc::new(Mutex::new(String::new()));
    let started = Arc::new(AtomicU64::new(0));
    let busy = Arc::new(AtomicBool::new(false));
    let epoch = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    {
        let (current, started, busy, stop) =
            (current.clone(), started.clone(), busy.clone(), stop.clone());
        let hang_dir = crash_dir.clone();
        let name = target.name();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(250));
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let t0 = Duration::from_millis(started.load(Ordering::Relaxed));
            if busy.load(Ordering::Relaxed) && epoch.elapsed() > t0 + HANG {
                // The loader is still running on the fuzzing thread: save
                // the input and end the process (a test cannot be cancelled).
                let input = current.lock().map(|c| c.clone()).unwrap_or_default();
                let _ = std::fs::create_dir_all(&hang_dir);
                let f = hang_dir.join(format!("{name}-hang.toml"));
                let _ = std::fs::write(&f, input);
                println!("CRASH {}: hang: over {} s", f.display(), HANG.as_secs());
                std::process::exit(1);
            }
        });
    }

    let mut rng = Rng(seed ^ (target as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut corpus = seeds.clone();
    let mut seen: HashSet<String> = HashSet::new();
    let mut suspects: HashSet<String> = HashSet::new();
    let seeds_text = seeds.concat();
    let dump = std::env::var_os("IOSIM_FUZZ_DUMP").is_some();
    let mut stats = Stats {
        seeds: n_seeds,
        corpus: 0,
        execs: 0,
        crashes: Vec::new(),
        errors: 0,
        accepted: 0,
    };
    let save_crash = |stats: &mut Stats, input: &str, why: &str| {
        let _ = std::fs::create_dir_all(&crash_dir);
        let f = crash_dir.join(format!("{}-{}.toml", target.name(), stats.crashes.len()));
        let _ = std::fs::write(&f, input);
        stats.crashes.push(format!("{}: {why}", f.display()));
        eprintln!("CRASH {}: {why}", f.display());
    };
    let deadline = Instant::now() + Duration::from_secs(seconds);
    // The seeds first, as they are.
    let mut queue: Vec<String> = seeds.clone();
    while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
        let input = match queue.pop() {
            Some(s) => s,
            None => {
                let base = rng.pick(&corpus).clone();
                mutate(&mut rng, &base, &corpus, &dict)
            }
        };
        if let Ok(mut c) = current.lock() {
            c.clone_from(&input);
        }
        started.store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
        busy.store(true, Ordering::Relaxed);
        let r = catch_unwind(AssertUnwindSafe(|| target.run(&input)));
        busy.store(false, Ordering::Relaxed);
        stats.execs += 1;
        match r {
            Ok(sig) => {
                if sig.lines().any(|l| l == "ok") {
                    stats.accepted += 1;
                    // Accepted with an extreme value the mutation put in: kept for review.
                    if let Some(v) = SUSPECT
                        .iter()
                        .find(|v| as_value(&input, v) && !as_value(&seeds_text, v))
                    {
                        if suspects.insert(v.to_string()) {
                            let _ = std::fs::create_dir_all(&crash_dir);
                            let f = crash_dir.join(format!("{}-accepted-{v}.toml", target.name()));
                            let _ = std::fs::write(&f, &input);
                            println!("accepted with `{v}`: {}", f.display());
                        }
                    }
                }
                if dump && !seen.contains(&sig) {
                    println!("new outcome: {sig}");
                }
                if seen.insert(sig) && corpus.len() < MAX_CORPUS {
                    corpus.push(input);
                }
            }
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                let why = format!("panic: {msg}");
                if seen.insert(why.clone()) {
                    save_crash(&mut stats, &input, &why);
                }
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    stats.corpus = corpus.len();
    stats.errors = seen.len();
    stats
}

#[test]
#[ignore = "a fuzzing run: IOSIM_FUZZ_TARGET, IOSIM_FUZZ_SECONDS, IOSIM_FUZZ_SEED"]
fn fuzz_loaders() {
    let which = std::env::var("IOSIM_FUZZ_TARGET").unwrap_or_else(|_| "all".into());
    let seconds: u64 = env_or("IOSIM_FUZZ_SECONDS", 5);
    let seed: u64 = env_or("IOSIM_FUZZ_SEED", 47);
    let targets: Vec<Target> = match which.as_str() {
        "model" => vec![Target::Model],
        "scenario" => vec![Target::Scenario],
        "calibration" => vec![Target::Calibration],
        "all" => vec![Target::Model, Target::Scenario, Target::Calibration],
        other => panic!("IOSIM_FUZZ_TARGET: unknown target `{other}`"),
    };
    bundled();
    // Panics are caught and counted; their messages are printed once each.
    std::panic::set_hook(Box::new(|_| {}));
    let mut crashes = Vec::new();
    for t in targets {
        let start = Instant::now();
        let s = fuzz(t, seconds, seed);
        println!(
            "fuzz {}: {:.0} s, seed {seed}, {} seeds, corpus {}, {} executions ({:.0}/s), {} distinct outcomes, {} accepted, {} crashes",
            t.name(),
            start.elapsed().as_secs_f64(),
            s.seeds,
            s.corpus,
            s.execs,
            s.execs as f64 / start.elapsed().as_secs_f64(),
            s.errors,
            s.accepted,
            s.crashes.len()
        );
        for c in &s.crashes {
            println!("  {c}");
        }
        crashes.extend(s.crashes);
    }
    let _ = std::panic::take_hook();
    assert!(
        crashes.is_empty(),
        "{} crashes: {crashes:#?}",
        crashes.len()
    );
}
