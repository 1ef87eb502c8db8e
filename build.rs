//! Embeds every file under `models/` and `scenarios/` into the binary, so that
//! `iosim` works from any directory and a new model file needs no code change.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets this"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets this"));
    let mut code = String::from("/// (path relative to the crate root, contents) of every bundled TOML file.\npub static BUNDLED: &[(&str, &str)] = &[\n");
    for top in ["models", "scenarios"] {
        println!("cargo:rerun-if-changed={top}");
        let mut files = Vec::new();
        collect(&root.join(top), &mut files);
        for f in files {
            println!("cargo:rerun-if-changed={}", f.display());
            let rel = f
                .strip_prefix(&root)
                .expect("under root")
                .to_string_lossy()
                .replace('\\', "/");
            code.push_str(&format!(
                "    ({rel:?}, include_str!({:?})),\n",
                f.display().to_string()
            ));
        }
    }
    code.push_str("];\n");
    let mut fh = fs::File::create(out_dir.join("bundled.rs")).expect("write bundled.rs");
    fh.write_all(code.as_bytes()).expect("write bundled.rs");
}
