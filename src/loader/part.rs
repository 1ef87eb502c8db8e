//! Opening the part files `iosim merge` joins ([`crate::part`]): each a
//! regular file with a part header, all of one run, every part of it once.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::part::{read_part, FileParts, PartHead, Want};

/// Opens `paths` as the parts of one run, checks each whole (to its end
/// line) and returns the run's header and the parts in part order. Parts of
/// different runs, a part given twice, a part missing or cut short, and a
/// file that is no part are refused, naming the files.
pub fn open_parts(paths: &[PathBuf]) -> Result<(PartHead, FileParts)> {
    let mut parts: Vec<(PartHead, String, std::fs::File)> = Vec::new();
    for p in paths {
        let io = |source: std::io::Error| Error::Io {
            path: p.clone(),
            source,
        };
        let meta = std::fs::metadata(p).map_err(io)?;
        if !meta.is_file() {
            return Err(Error::Io {
                path: p.clone(),
                source: std::io::Error::other(format!(
                    "not a regular file ({})",
                    crate::error::file_type_name(&meta.file_type())
                )),
            });
        }
        let file = std::fs::File::open(p).map_err(io)?;
        let name = p.display().to_string();
        let head = read_part(&mut std::io::BufReader::new(&file), &name, Want::All, None)?;
        parts.push((head, name, file));
    }
    let Some((first, first_name, _)) = parts.first() else {
        return Err(Error::Usage("merge: give the part files to join".into()));
    };
    let (first, first_name) = (first.clone(), first_name.clone());
    // Refusals name the part's header line.
    let at = |name: &str, message: String| Error::Invalid {
        at: crate::error::Location {
            file: name.into(),
            key: String::new(),
            line: 1,
            column: 0,
        },
        message,
    };
    for (h, name, _) in &parts {
        if !first.same_run(h) {
            let what = if h.parts != first.parts {
                format!("{} parts against {}", h.parts, first.parts)
            } else if h.command != first.command || h.identity != first.identity {
                "their commands or flags differ".to_string()
            } else if h.seed != first.seed {
                format!("seed {} against {}", h.seed, first.seed)
            } else {
                "their models, headers or warnings differ".to_string()
            };
            return Err(at(
                name,
                format!("merge: this and {first_name} are parts of different runs ({what})"),
            ));
        }
    }
    parts.sort_by_key(|p| p.0.part);
    for w in parts.windows(2) {
        if w[0].0.part == w[1].0.part {
            return Err(at(
                &w[1].1,
                format!(
                    "merge: part {} of {} is given twice (also {})",
                    w[0].0.part, first.parts, w[0].1
                ),
            ));
        }
    }
    let missing: Vec<String> = (1..=first.parts)
        .filter(|k| !parts.iter().any(|p| p.0.part == *k))
        .map(|k| k.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(at(
            &first_name,
            format!(
                "merge: {} {} of {} missing (every part of this part's run is needed)",
                if missing.len() == 1 { "part" } else { "parts" },
                missing.join(", "),
                first.parts,
            ),
        ));
    }
    let mut files = FileParts::new(
        parts
            .into_iter()
            .map(|(_, name, file)| (name, file))
            .collect(),
    );
    // Every part read to its end before any output is written.
    crate::part::Records::each(&mut files, Want::All, &mut |_| Ok(()))?;
    Ok((PartHead { part: 1, ..first }, files))
}
