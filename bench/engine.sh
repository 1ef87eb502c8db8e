#!/usr/bin/env bash
# The engine benchmark, side by side in one go: iosim's `bench bus-contention`,
# the hand-written binary-heap loop of the same model (../shared/bench/desref,
# built in a temporary copy) and the SimPy peer (../shared/bench/
# bus_contention_simpy.py, SimPy installed into a temporary virtual
# environment), interleaved round by round. Prints each one's transactions per
# CPU second (user + system time of the process) and the ratios.
#
# usage: bench/engine.sh [SIM_SECONDS] [MASTERS] [ROUNDS] [SIMPY_SECONDS]
#        (defaults 5 4 5 0.5: SimPy is 100 times slower, so it simulates a
#        tenth of the time; the rates are per CPU second, so they compare)
#
# This script is the only part of the project that reads ../shared.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SIM_S="${1:-5}"; K="${2:-4}"; ROUNDS="${3:-5}"; SIMPY_S="${4:-0.5}"
SHARED="${SHARED:-../shared}"
[ -d "$SHARED/bench/desref" ] || { echo "engine.sh: $SHARED/bench/desref not found" >&2; exit 1; }
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT

cargo build --release --quiet
cp -r "$SHARED/bench/desref" "$TMP/desref"
(cd "$TMP/desref" && CARGO_TARGET_DIR="$TMP/desref/target" cargo build --release --quiet)
DESREF="$(find "$TMP/desref/target/release" -maxdepth 1 -type f -perm -u+x -name 'desref*' | head -1)"
python3 -m venv "$TMP/venv" && "$TMP/venv/bin/pip" install --quiet simpy

# Runs a command; prints "transactions cpu_seconds".
measure() {
  local out cpu
  out="$( { /usr/bin/time -f "cpu=%U+%S" "$@" ; } 2>&1 )"
  cpu="$(echo "$out" | sed -n 's/.*cpu=\([0-9.]*\)+\([0-9.]*\).*/\1 \2/p' | awk '{print $1 + $2}')"
  tx="$(echo "$out" | sed -n 's/.*transactions=\([0-9]*\).*/\1/p' | head -1)"
  echo "$tx $cpu"
}

printf "%-6s %-8s %12s %10s %14s\n" round engine transactions cpu_s tx_per_cpu_s
declare -A SUM_TX SUM_CPU
for r in $(seq 1 "$ROUNDS"); do
  for e in iosim desref simpy; do
    case "$e" in
      iosim) m="$(measure target/release/iosim bench bus-contention --masters "$K" --sim-seconds "$SIM_S" --seed 1)";;
      desref) m="$(measure "$DESREF" "$SIM_S" "$K" 1)";;
      simpy) m="$(measure "$TMP/venv/bin/python" "$SHARED/bench/bus_contention_simpy.py" "$SIMPY_S" "$K" 1)";;
    esac
    read -r tx cpu <<< "$m"
    SUM_TX[$e]=$(( ${SUM_TX[$e]:-0} + tx ))
    SUM_CPU[$e]=$(awk -v a="${SUM_CPU[$e]:-0}" -v b="$cpu" 'BEGIN{print a + b}')
    printf "%-6s %-8s %12s %10s %14.0f\n" "$r" "$e" "$tx" "$cpu" "$(awk -v t="$tx" -v c="$cpu" 'BEGIN{print (c > 0 ? t / c : 0)}')"
  done
done
rate() { awk -v t="${SUM_TX[$1]}" -v c="${SUM_CPU[$1]}" 'BEGIN{print (c > 0 ? t / c : 0)}'; }
I="$(rate iosim)"; D="$(rate desref)"; S="$(rate simpy)"
echo
printf "sim_seconds=%s (simpy %s) masters=%s rounds=%s\n" "$SIM_S" "$SIMPY_S" "$K" "$ROUNDS"
printf "tx_per_cpu_s iosim=%.0f desref=%.0f simpy=%.0f\n" "$I" "$D" "$S"
printf "ratio iosim/desref=%.3f iosim/simpy=%.1f\n" "$(awk -v a="$I" -v b="$D" 'BEGIN{print a / b}')" "$(awk -v a="$I" -v b="$S" 'BEGIN{print a / b}')"
