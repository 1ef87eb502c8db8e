#!/usr/bin/env bash
# Scaling of one simulation run: wall time and peak memory (max RSS) of
# `iosim run` against the simulated time (one card, GigE bidirectional beside
# FC bidirectional on PCI-X) and against the number of adapters (1 to 256
# A9782A cards, each GigE port bidirectional and each FC port reading, on a
# 16-cell, 64-CPU partition of a server made for the purpose: the rp8400-seu
# model with 256 PCI-X slots). Expect time linear in simulated time with
# flat memory, and time about linear in adapters.
#
# usage: bench/scaling.sh            (prints two tables; takes a few minutes)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release --quiet
BIN="$PWD/target/release/iosim"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/models"

# The big server: rp8400-seu's parameters, 16 cells, 256 PCI-X slots.
awk '/^\[\[slot\]\]/{exit} {print}' models/servers/rp8400-seu.toml \
  | sed -e 's/^name = "rp8400-seu"/name = "scaling-256"/' \
        -e 's/^cells_max = { value = 4,/cells_max = { value = 16,/' > "$TMP/models/scaling-256.toml"
for i in $(seq 1 256); do
  printf '\n[[slot]]\nname = "s%d"\nmodes = ["pcix66", "pci66", "pci33-64"]\nropes = 2\n' "$i" >> "$TMP/models/scaling-256.toml"
done

# scenario N_CARDS WARMUP_MS DURATION_MS
scenario() {
  cat <<HEAD
[scenario]
name = "scaling"
title = "scaling: $1 cards, $3 ms"

[run]
warmup_ms = $2
duration_ms = $3

[[experiment]]
id = "scaling"
server = "scaling-256"
testbed = "hp-2004-lab"
cells = 16
HEAD
  for i in $(seq 1 "$1"); do
    cat <<CARD

[[experiment.card]]
name = "c$i"
adapter = "a9782a"
slot = "s$i"

[[experiment.workload]]
card = "c$i"
function = "gige"
kind = "netperf-tcp-stream"
direction = "bidirectional"
socket_kib = 128
message_kib = 32

[[experiment.workload]]
card = "c$i"
function = "fc"
kind = "diskbench"
direction = "read"
block_kib = 128
CARD
  done
}

# measure FILE: prints "wall_s max_rss_MiB events"
measure() {
  local out
  out="$( { /usr/bin/time -f "time=%e rss=%M" "$BIN" run --models "$TMP/models" --format csv "$1" > "$TMP/out.csv"; } 2>&1 )"
  local wall rss events
  wall="$(echo "$out" | sed -n 's/.*time=\([0-9.]*\).*/\1/p')"
  rss="$(echo "$out" | sed -n 's/.*rss=\([0-9]*\).*/\1/p')"
  events="$(awk -F, '/^# section: experiments/{x=1;next} x&&/^scaling/{print $(NF-2)}' "$TMP/out.csv")"
  echo "$wall $(awk -v k="$rss" 'BEGIN{printf "%.1f", k/1024}') $events"
}

echo "against simulated time (1 card, warm-up 2 ms)"
printf "%-12s %8s %12s %12s\n" sim_ms wall_s max_rss_MiB events
for ms in 25 50 100 200 400; do
  scenario 1 2 "$ms" > "$TMP/s.toml"
  read -r w r e <<< "$(measure "$TMP/s.toml")"
  printf "%-12s %8s %12s %12s\n" "$ms" "$w" "$r" "$e"
done
echo
echo "against adapters (warm-up 2 ms, 10 ms measured, 16 cells, 64 CPUs)"
printf "%-12s %8s %12s %12s\n" cards wall_s max_rss_MiB events
for n in 1 2 4 8 16 32 64 128 256; do
  scenario "$n" 2 10 > "$TMP/s.toml"
  read -r w r e <<< "$(measure "$TMP/s.toml")"
  printf "%-12s %8s %12s %12s\n" "$n" "$w" "$r" "$e"
done
