//! Test fixtures shared by the integration tests that write a user's own
//! model files (`--models`).

/// A test server model file: `name`, the base parameters below with the
/// values of `overrides` (key, `value` and `unit` as written) put in their
/// place, and `slots` (`[[slot]]` tables) appended.
pub fn server_toml(name: &str, overrides: &[(&str, &str)], slots: &str) -> String {
    const PARAM: [(&str, &str); 16] = [
        ("cells_max", "value = 2, unit = \"cells\""),
        ("cpus_per_cell", "value = 2, unit = \"cpus\""),
        ("memory_local_latency", "value = 180, unit = \"ns\""),
        ("memory_remote_latency", "value = 400, unit = \"ns\""),
        ("cache_line", "value = 64, unit = \"bytes\""),
        ("line_fetches_in_flight", "value = 8, unit = \"lines\""),
        ("io_read_latency", "value = 900, unit = \"ns\""),
        ("rope_bandwidth", "value = 250, unit = \"MB/s\""),
        ("rope_packet_overhead", "value = 8, unit = \"bytes\""),
        ("cpu_per_packet", "value = 5, unit = \"us\""),
        ("cpu_per_segment_sent", "value = 5, unit = \"us\""),
        ("cpu_misses_per_packet", "value = 0, unit = \"count\""),
        ("cpu_remote_memory_latency", "value = 300, unit = \"ns\""),
        ("cpu_per_kb", "value = 0, unit = \"us\""),
        ("cpu_per_io", "value = 20, unit = \"us\""),
        ("tcp_ack_every", "value = 2, unit = \"count\""),
    ];
    const BRIDGE: [(&str, &str); 5] = [
        ("posted_write_buffer", "value = 2048, unit = \"bytes\""),
        ("delayed_read_slots", "value = 1, unit = \"count\""),
        ("delayed_read_prefetch", "value = 1024, unit = \"bytes\""),
        ("retry_interval", "value = 100, unit = \"ns\""),
        (
            "register_reads_use_delayed_slots",
            "value = 0, unit = \"count\"",
        ),
    ];
    let line = |(key, value): &(&str, &str)| {
        let value = overrides
            .iter()
            .find(|(k, _)| k == key)
            .map_or(*value, |(_, v)| *v);
        format!("{key} = {{ {value}, source = \"test\" }}\n")
    };
    let mut s = format!(
        "kind = \"server\"\nname = \"{name}\"\ndescription = \"A test server\"\n\n[param]\n"
    );
    s.extend(PARAM.iter().map(line));
    // Optional parameters appear only when given.
    for (key, value) in overrides {
        if !PARAM.iter().chain(&BRIDGE).any(|(k, _)| k == key) {
            s.push_str(&format!("{key} = {{ {value}, source = \"test\" }}\n"));
        }
    }
    s.push_str("\n[bridge]\n");
    s.extend(BRIDGE.iter().map(line));
    s.push('\n');
    s.push_str(slots);
    s
}
