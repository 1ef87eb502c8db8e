//! The nearest known name to a mistyped one, for "did you mean" in error
//! messages: a name equal but for letter case, else the one fewest edits
//! away (insertions, deletions, substitutions of characters), if that is
//! at most a quarter of the name's length (at least one edit): a name two
//! characters off a short one (`rx2620` beside `rx6600`) is more likely
//! another model than a typing slip. Ties go to the first candidate given.

/// The candidate nearest to `name`, if one is near enough (see the module's
/// doc); never `name` itself.
pub fn nearest<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let lower = name.to_lowercase();
    let limit = (name.chars().count() / 4).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        if c == name || c.is_empty() {
            continue;
        }
        let d = if c.to_lowercase() == lower {
            0
        } else {
            edits(&lower, &c.to_lowercase())
        };
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `" (did you mean `X`?)"` for the nearest of `candidates`, or empty.
pub fn did_you_mean<'a, I>(name: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    nearest(name, candidates).map_or_else(String::new, |c| format!(" (did you mean `{c}`?)"))
}

/// The edit distance (Levenshtein, in characters) between `a` and `b`.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = diag + usize::from(ca != *cb);
            diag = row[j + 1];
            row[j + 1] = sub.min(row[j] + 1).min(diag + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_name_is_found_and_a_far_one_is_not() {
        let servers = ["rp8400-seu", "rx6600", "sx2000", "n4000"];
        assert_eq!(nearest("rx6601", servers), Some("rx6600"));
        assert_eq!(nearest("RX6600", servers), Some("rx6600"));
        assert_eq!(nearest("CPUs", ["count", "cpus", "cells"]), Some("cpus"));
        assert_eq!(nearest("rx2620", servers), None);
        assert_eq!(nearest("rx6600", servers), None);
        assert_eq!(nearest("zz", ["ab", "cd"]), None);
        assert_eq!(edits("kitten", "sitting"), 3);
        assert_eq!(edits("", "abc"), 3);
        assert_eq!(
            did_you_mean("pcix267", ["pcix266", "pcix133"]),
            " (did you mean `pcix266`?)"
        );
        assert_eq!(did_you_mean("q", ["pcix266"]), "");
    }
}
