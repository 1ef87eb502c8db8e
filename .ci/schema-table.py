#!/usr/bin/env python3
"""Prints the model-parameter table of docs/models.md, generated from src/model/schema.rs
and the engine files listed in src/sim/engines/mod.rs (each states its own rules).

usage: python3 .ci/schema-table.py            print the table (Markdown)
       python3 .ci/schema-table.py --check    exit 1 if docs/models.md's table differs
       python3 .ci/schema-table.py --write    replace docs/models.md's table

The table sits in docs/models.md between the markers <!-- schema-table:start --> and
<!-- schema-table:end -->. The Rust files are the authority; this only formats them. An
engine compiled only into the tests (its `mod` line under #[cfg(test)]) is left out.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "src" / "model" / "schema.rs"
ENGINES = ROOT / "src" / "sim" / "engines"
README = ROOT / "docs" / "models.md"
START, END = "<!-- schema-table:start -->", "<!-- schema-table:end -->"

# Where each rule list is written in a model file.
TABLES = {
    "BUS": "bus `[param]`",
    "ETHERNET": "link `[param]`, framing = \"ethernet\"",
    "FIBRE_CHANNEL": "link `[param]`, framing = \"fibre-channel\"",
    "PARALLEL_SCSI": "link `[param]`, framing = \"parallel-scsi\"",
    "SERVER": "server `[param]`",
    "BRIDGE": "server `[bridge]`; adapter `[bridge.secondary]`",
    "CARD_BRIDGE": "adapter `[bridge.primary]`",
    "TESTBED": "testbed `[param]`",
    "CPU": "cpu `[param]`",
    "IO_CONTROLLER": "server `[[io_controller]]` `[io_controller.param]`",
}

# The order of the table; a rule list not named here follows in the order found.
ORDER = ["BUS", "ETHERNET", "FIBRE_CHANNEL", "PARALLEL_SCSI", "ATM", "SERVER", "BRIDGE", "NIC", "CARD_BRIDGE",
         "RAW_DMA", "HBA", "VETH", "CPU", "TESTBED", "IO_CONTROLLER"]

# Dimension -> (name, unit the range is shown in, factor from the base unit).
DIMS = {
    "Time": ("time", "ns", 1.0),
    "Frequency": ("frequency", "MHz", 1.0),
    "Size": ("size", "bytes", 1.0),
    "Rate": ("rate", "MB/s", 1e-6),
    "SymbolRate": ("symbol rate", "Gbaud", 1e-9),
    "Count": ("count", "", 1.0),
}

# One rule inside param_kind! / dma_engine_kind!: key: Dim [whole], min, max, "meaning" [, absent = "..."];
RULE = re.compile(r'(\w+)\s*:\s*(\w+)(?:\s+(whole))?\s*,\s*([-0-9.eE_]+)\s*,\s*([-0-9.eE_]+)\s*,\s*"((?:[^"\\]|\\.)*)"\s*(?:,\s*absent\s*=\s*"((?:[^"\\]|\\.)*)"\s*)?;', re.S)
# A kind: param_kind! { /// doc  NAME, Type { rules } }
KIND = re.compile(r"^(param_kind|dma_engine_kind)! \{\n(?:\s*///[^\n]*\n)*\s*(\w+), \w+ \{\n(.*?)\n    \}\n\}", re.S | re.M)
# The rules dma_engine_kind! splices in front of a kind's own.
MACRO = re.compile(r"macro_rules! dma_engine_kind \{.*?\$rules, \$ty \{\n(.*?)\$\(\$body\)\*", re.S)


def num(x: float) -> str:
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:g}"


# An engine file's name in model files: pub static KIND: EngineDef = EngineDef { name: "nic",
ENGINE_NAME = re.compile(r'EngineDef \{\s*name:\s*"([^"]+)"')
# A `mod` line of the list of engines, with a #[cfg(test)] before it or not.
MOD = re.compile(r"^(#\[cfg\(test\)\]\n)?pub mod (\w+);", re.M)


def kinds() -> list:
    """Every rule list (macro, name, body, where), in table order."""
    found = [(m, n, b, TABLES.get(n, n)) for m, n, b in KIND.findall(SCHEMA.read_text())]
    for test_only, module in MOD.findall((ENGINES / "mod.rs").read_text()):
        if test_only:
            continue
        text = (ENGINES / f"{module}.rs").read_text()
        engine = ENGINE_NAME.search(text)
        for m, n, b in KIND.findall(text):
            where = f'adapter `[function.param]`, engine = "{engine.group(1)}"' if engine else n
            found.append((m, n, b, where))
    rank = {n: i for i, n in enumerate(ORDER)}
    return sorted(found, key=lambda k: rank.get(k[1], len(ORDER)))


def table() -> str:
    out = ["| where | parameter | dimension | range | meaning |", "|---|---|---|---|---|"]
    seen = set()
    shared = MACRO.search(SCHEMA.read_text())
    if not shared:
        sys.exit(f"schema-table: dma_engine_kind! not found in {SCHEMA}")
    for mac, name, body, where in kinds():
        seen.add(name)
        if mac == "dma_engine_kind":
            body = shared.group(1) + body
        rules = RULE.findall(body)
        if len(rules) != len(re.findall(r"\"\s*;", body)):
            sys.exit(f"schema-table: could not read every rule of {name} in {SCHEMA}")
        for key, dim, whole, lo, hi, meaning, absent in rules:
            dname, unit, k = DIMS[dim]
            if whole:
                dname += ", whole"
            lo_v, hi_v = float(lo.replace("_", "")) * k, float(hi.replace("_", "")) * k
            rng = num(lo_v) if lo_v == hi_v else f"{num(lo_v)} to {num(hi_v)}"
            rng += f" {unit}" if unit else ""
            meaning = meaning.replace("|", "\\|")
            if absent:
                meaning += " (optional; absent: " + absent.replace("|", "\\|") + ")"
            out.append(f"| {where} | `{key}` | {dname} | {rng} | {meaning} |")
    missing = set(ORDER) - seen
    if missing:
        sys.exit(f"schema-table: rule lists not found in {SCHEMA} nor the engines: {sorted(missing)}")
    return "\n".join(out) + "\n"


def main() -> int:
    t = table()
    if len(sys.argv) == 1:
        sys.stdout.write(t)
        return 0
    readme = README.read_text()
    pat = re.compile(re.escape(START) + r"\n(.*?)" + re.escape(END), re.S)
    m = pat.search(readme)
    if not m:
        sys.exit(f"schema-table: markers not found in {README}")
    if sys.argv[1] == "--check":
        if m.group(1) != t:
            print("docs/models.md parameter table differs from src/model/schema.rs and the engines: run python3 .ci/schema-table.py --write")
            return 1
        return 0
    if sys.argv[1] == "--write":
        README.write_text(readme[: m.start(1)] + t + readme[m.end(1):])
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
