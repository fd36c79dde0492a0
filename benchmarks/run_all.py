"""Run every benchmark and print one table of their headline numbers (the README's performance
section is regenerated from it).

Each benchmark runs in its own process (``python benchmarks/NAME.py … --headlines FILE``), so
none warms or loads another; its full output is kept in ``--logs`` (a temporary folder by
default, printed at the end). Ratios compare dpplug with the anchor measured in the same process
(OpenDP, python-dp, PipelineDP); absolute times on a shared machine move, the ratios much less.
``--quick`` runs smaller inputs (about two minutes) and ``--markdown`` prints the table as
Markdown. The frameworks are imported by the benchmarks themselves, so ``--help`` needs none.

Run from the repository root::

    python benchmarks/run_all.py [--quick] [--only NAME …] [--logs DIR] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.table import Table
from timing import console

HERE = Path(__file__).resolve().parent

#: name → (arguments of a full run, arguments of a quick run); "{logs}" is the logs folder.
BENCHMARKS: dict[str, tuple[list[str], list[str]]] = {
    "samplers": ([], ["--size", "200000", "--growth-samples", "200"]),
    "partition_selection": (
        ["--plot", "{logs}/partition_keep_curves.png"],
        [
            "--partitions",
            "200000",
            "--tg-partitions",
            "100000",
            "--plot",
            "{logs}/partition_keep_curves.png",
        ],
    ),
    "opendp_adapter": ([], ["--keys", "100000", "--repeats", "2", "--native-repeats", "1"]),
    "pipelinedp_adapter": (
        [],
        ["--partitions", "100000", "--repeats", "1", "--generic-partitions", "10000"],
    ),
    "histograms": ([], ["--quick"]),
    "compare": ([], ["--rounds", "1"]),
}


def run(name: str, quick: bool, logs: Path) -> tuple[list[dict[str, object]], float, int]:
    """Run one benchmark; its headlines, seconds and exit status (output in logs/NAME.txt)."""
    full, short = BENCHMARKS[name]
    extra = [a.replace("{logs}", str(logs)) for a in (short if quick else full)]
    headlines = logs / f"{name}.json"
    start = time.perf_counter()
    with (logs / f"{name}.txt").open("w") as out:
        done = subprocess.run(
            [sys.executable, str(HERE / f"{name}.py"), *extra, "--headlines", str(headlines)],
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    seconds = time.perf_counter() - start
    found = json.loads(headlines.read_text()) if headlines.exists() else []
    return found, seconds, done.returncode


#: Units of headlines where lower is better (times, and growth exponents "n^").
LOWER_IS_BETTER = ("µs", "ms", "s", "n^")


def shown(value: float, unit: str) -> str:
    """A headline's value with its unit: a growth exponent as n^x."""
    if unit == "n^":
        return f"n^{value:.2f}"
    return f"{value:,.0f}" if unit == "" else f"{value:,.1f}{unit}"


def verdict(value: float, target: float | None, unit: str) -> str:
    if target is None:
        return ""
    lower = unit in LOWER_IS_BETTER
    met = value <= target if lower else value >= target
    return f"{'≤' if lower else '≥'} {shown(target, unit)}: {'met' if met else 'NOT met'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs (a few minutes)")
    parser.add_argument(
        "--only", nargs="+", choices=list(BENCHMARKS), default=list(BENCHMARKS), metavar="NAME"
    )
    parser.add_argument("--logs", type=Path, default=None, help="where to keep each output")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args()
    logs = args.logs or Path(tempfile.mkdtemp(prefix="dpplug-bench-"))
    logs.mkdir(parents=True, exist_ok=True)

    rows: list[tuple[str, str, str, str]] = []
    for name in args.only:
        console.print(f"running {name} …")
        found, seconds, status = run(name, args.quick, logs)
        if status != 0 or not found:
            rows.append((name, f"FAILED (exit {status}), see {logs / name}.txt", "", ""))
            continue
        for h in found:
            value, unit = float(h["value"]), str(h["unit"])  # type: ignore[arg-type]
            target = None if h["target"] is None else float(h["target"])  # type: ignore[arg-type]
            rows.append((name, str(h["label"]), shown(value, unit), verdict(value, target, unit)))
        console.print(f"  {name}: {seconds:.0f} s")

    title = f"dpplug headline numbers ({'quick' if args.quick else 'full'} run)"
    if args.markdown:
        print(f"\n**{title}**\n\n| benchmark | measure | value | target |\n|---|---|---:|---|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        table = Table(title=title)
        for column in ("benchmark", "measure", "value", "target"):
            table.add_column(column, justify="right" if column == "value" else "left")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    console.print(f"Full outputs: {logs}")


if __name__ == "__main__":
    main()
