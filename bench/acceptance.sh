#!/usr/bin/env bash
# Issue 12's acceptance, measured in one go on this machine (release build, every
# core): `iosim validate` (the median of RUNS runs; each paper alone too, with
# --paper), `iosim calibrate` from the initial values and with `--refit`,
# `iosim validate --cross-validate`, and, unless
# --no-engine, the engine against the hand-written loop (bench/engine.sh, which reads
# ../shared). Prints the machine (CPU model and cores: the same binary's times move
# by half between the machine types this project has run on) and one line per check
# with its target. Times are wall-clock seconds; CPU seconds are user + system.
#
# usage: bench/acceptance.sh [RUNS] [--no-engine]     (RUNS default 5; about 7 minutes)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS=5
ENGINE=1
for arg in "$@"; do
  case "$arg" in
    --no-engine) ENGINE=0 ;;
    *[!0-9]* | "") echo "acceptance.sh: unknown argument '$arg'" >&2; exit 2 ;;
    *) RUNS="$arg" ;;
  esac
done
[ -x /usr/bin/time ] || { echo "acceptance.sh: needs /usr/bin/time (GNU time)" >&2; exit 1; }
cargo build --release --quiet
BIN="$PWD/target/release/iosim"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT

# timed NAME CMD...: runs CMD (standard output to $TMP/NAME.out), records
# "wall cpu max_rss_kb" in $TMP/NAME.time.
timed() {
  local name="$1"; shift
  /usr/bin/time -f "%e %U %S %M" -o "$TMP/$name.raw" "$@" > "$TMP/$name.out" 2> "$TMP/$name.err"
  awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$TMP/$name.raw" > "$TMP/$name.time"
}
field() { cut -d' ' -f"$2" "$TMP/$1.time"; }
# median NAME COLUMN: the median of column COLUMN over the RUNS runs NAME1, NAME2, ...
median() {
  for i in $(seq 1 "$RUNS"); do field "$1$i" "$2"; done \
    | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

model="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "machine: ${model:-unknown CPU}, $(nproc) cores; $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

for i in $(seq 1 "$RUNS"); do
  timed "validate$i" "$BIN" validate --format json
done
validate_wall="$(median validate 1)"
validate_cpu="$(median validate 2)"
# Each paper alone (`validate --paper`), RUNS times each, interleaved: the
# target was set when `validate` ran the rp8400 paper only.
for i in $(seq 1 "$RUNS"); do
  for p in hp-rp8400 hp-atm matrox; do timed "$p$i" "$BIN" validate --paper "$p" --format json; done
done

timed cold "$BIN" calibrate --format json --output "$TMP/cold.toml"
timed refit "$BIN" calibrate --refit --format json --output "$TMP/refit.toml"
timed cv "$BIN" validate --cross-validate --format json

# rp8400 NAME SECTION KEY: the rp8400 paper's KEY in SECTION of the JSON in $TMP/NAME.out.
rp8400() {
  python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))[sys.argv[2]]
print(next(r[sys.argv[3]] for r in rows if "rp8400" in r["paper"]))' "$TMP/$1.out" "$2" "$3"
}
cold_mape="$(rp8400 cold mape fitted_mape_pct)"
held_out="$(rp8400 cv papers held_out_mape_pct)"

ratio="not measured"
if [ "$ENGINE" = 1 ]; then
  ratio="$(bash bench/engine.sh 20 4 3 0.5 | sed -n 's/^ratio iosim\/desref=\([0-9.]*\).*/\1/p')"
fi

# check NAME MEASURED UNIT TARGET_OP TARGET
check() {
  local met="no"
  if [ "$2" != "not measured" ] && awk -v a="$2" -v b="$5" -v op="$4" \
      'BEGIN { exit !((op == "<" && a < b) || (op == "<=" && a <= b) || (op == ">=" && a >= b)) }'; then
    met="yes"
  fi
  [ "$2" = "not measured" ] && met="-"
  printf '%-44s %12s %-4s %3s %-8s %s\n' "$1" "$2" "$3" "$4" "$5" "$met"
}
printf '%-44s %12s %-4s %3s %-8s %s\n' check measured unit "" target met
check "validate, wall (median of $RUNS)" "$validate_wall" s "<" 0.5
check "calibrate from the initial values, wall" "$(field cold 1)" s "<" 60
check "calibrate: rp8400 MAPE of the fit" "$cold_mape" % "<=" 4.16
check "validate --cross-validate, wall" "$(field cv 1)" s "<" 600
check "validate --cross-validate: rp8400 held out" "$held_out" % "<=" 6.01
check "engine / hand-written loop, tx per CPU s" "$ratio" "" ">=" 0.85
echo
echo "validate --paper, median wall: hp-rp8400 $(median hp-rp8400 1) s," \
  "hp-atm $(median hp-atm 1) s, matrox $(median matrox 1) s"
echo "validate: median CPU ${validate_cpu} s; calibrate: $(field cold 2) s CPU, $(field cold 3) KB;" \
  "calibrate --refit: $(field refit 1) s wall, $(field refit 2) s CPU;" \
  "cross-validate: $(field cv 2) s CPU, $(field cv 3) KB"
tail -n 1 "$TMP/cold.err"
tail -n 1 "$TMP/cv.err"
