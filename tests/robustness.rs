//! Robustness against the environment (issue 19): a closed or full standard
//! output, special files and directory loops under `--models`, clashing model
//! files, output files and wall-clock bounds. Each case runs the real binary.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

fn iosim_cmd(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iosim"));
    c.args(args).current_dir(dir);
    c
}

fn iosim(dir: &Path, args: &[&str]) -> Output {
    iosim_cmd(dir, args)
        .output()
        .expect("the iosim binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_closed_pipe_on_standard_output_ends_quietly_with_exit_0() {
    let dir = TempDir::new().unwrap();
    for args in [&["params"][..], &["params", "--format", "json"][..]] {
        let mut child = iosim_cmd(dir.path(), args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the iosim binary runs");
        // Close the reading end before iosim writes anything, as `| head -0` would.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.is_empty(), "a closed pipe is not an error: {err}");
    }
}

#[test]
fn a_full_disk_on_standard_output_is_a_write_error_with_exit_1() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("no /dev/full on this system: skipped");
        return;
    };
    let dir = TempDir::new().unwrap();
    let out = iosim_cmd(dir.path(), &["params"])
        .stdout(full)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("cannot write"), "{err}");
    assert!(err.contains("standard output"), "{err}");
}
