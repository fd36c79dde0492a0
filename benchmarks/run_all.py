"""Run every benchmark and print one table of their headline numbers (the README's performance
section is regenerated from it).

Each benchmark runs in its own process (``python benchmarks/NAME.py … --headlines FILE``), so
none warms or loads another; its full output is kept in ``--logs`` (a temporary folder by
default, printed at the end), and its CPU seconds (its process tree: see :func:`run`) and the
load average before and after it are printed. Ratios compare dpplug with the anchor measured in
the same process (OpenDP, python-dp, PipelineDP) in interleaved rounds of CPU time; absolute
times on a shared machine move, the ratios much less. ``--quick`` runs smaller inputs (under 5
minutes of CPU on 2 cores), ``--markdown`` prints the table as Markdown, and ``--readme FILE``
also writes that table into FILE between the lines ``<!-- run_all: begin -->`` and
``<!-- run_all: end -->`` (the README's performance table). The frameworks are imported by the
benchmarks themselves, so ``--help`` needs none.

Run from the repository root::

    python benchmarks/run_all.py [--quick] [--only NAME …] [--logs DIR] [--markdown]
        [--readme README.md]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.table import Table
from timing import console, load_average

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
    "opendp_adapter": ([], ["--keys", "100000", "--rounds", "3", "--calls", "500"]),
    "pipelinedp_adapter": ([], ["--quick"]),
    "histograms": ([], ["--quick"]),
    "compare": ([], ["--rounds", "1"]),
    "anonymized_histograms": (
        ["--plot", "{logs}/anonymized_histograms.png"],
        [
            "--quick",
            "--releases",
            "2",
            "--baseline-releases",
            "1",
            "--repeats",
            "2",
            "--plot",
            "{logs}/anonymized_histograms.png",
        ],
    ),
    "sparse_queries": (
        ["--plot", "{logs}/sparse_queries_error.png"],
        ["--quick", "--plot", "{logs}/sparse_queries_error.png"],
    ),
    "scale": ([], ["--quick"]),
    "set_union": (
        [],
        ["--users", "2000", "--runs", "1", "--timing-users", "4000", "--rounds", "1"],
    ),
}


#: The lines of the README between which ``--readme`` writes the table.
BEGIN, END = "<!-- run_all: begin -->", "<!-- run_all: end -->"


def children_cpu() -> float:
    """CPU seconds of this process's ended (and waited-for) children and their descendants."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def descendants_cpu(pid: int, seen: dict[int, float]) -> None:
    """Record in *seen* the CPU seconds so far (user and system, their own) of every live
    process below *pid*, not *pid* itself (Linux ``/proc``; nothing elsewhere): Spark's JVM and
    Python workers, which the benchmark does not wait for, so that ``RUSAGE_CHILDREN`` misses
    them."""
    parents: dict[int, int] = {}
    own: dict[int, float] = {}
    if not os.path.isdir("/proc/self"):
        return
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:  # ended meanwhile
                continue
            parents[int(entry)] = int(fields[1])
            own[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    below, grew = {pid}, True
    while grew:
        more = {p for p, parent in parents.items() if parent in below} - below
        grew = bool(more)
        below |= more
    for p in below - {pid}:
        seen[p] = max(seen.get(p, 0.0), own[p])


def run(name: str, quick: bool, logs: Path) -> tuple[list[dict[str, object]], float, int]:
    """Run one benchmark; its headlines, CPU seconds and exit status (output in logs/NAME.txt).

    The CPU seconds are the benchmark's process and what it waited for (``RUSAGE_CHILDREN``)
    plus every process below it sampled each quarter second (its last quarter second may be
    missed; a process both waited for and sampled counts twice, so the figure errs high)."""
    full, short = BENCHMARKS[name]
    extra = [a.replace("{logs}", str(logs)) for a in (short if quick else full)]
    headlines = logs / f"{name}.json"
    start, seen = children_cpu(), {}
    with (logs / f"{name}.txt").open("w") as out:
        process = subprocess.Popen(
            [sys.executable, str(HERE / f"{name}.py"), *extra, "--headlines", str(headlines)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        while process.poll() is None:
            descendants_cpu(process.pid, seen)
            time.sleep(0.25)
    seconds = children_cpu() - start + sum(seen.values())
    found = json.loads(headlines.read_text()) if headlines.exists() else []
    return found, seconds, process.returncode


#: Units of headlines where lower is better (times, and growth exponents "n^").
LOWER_IS_BETTER = ("µs", "ms", "s", "n^", " units")


def shown(value: float, unit: str) -> str:
    """A headline's value with its unit: a growth exponent as n^x, a count of units whole."""
    if unit == "n^":
        return f"n^{value:.2f}"
    if unit in ("", " units"):
        return f"{value:,.0f}{unit}"
    return f"{value:,.1f}{unit}"


def verdict(value: float, target: float | None, unit: str) -> str:
    if target is None:
        return ""
    lower = unit in LOWER_IS_BETTER
    met = value <= target if lower else value >= target
    return f"{'≤' if lower else '≥'} {shown(target, unit)}: {'met' if met else 'NOT met'}"


def markdown(title: str, rows: list[tuple[str, str, str, str]]) -> str:
    """The table as Markdown, under its title."""
    lines = [f"**{title}**", "", "| benchmark | measure | value | target |", "|---|---|---:|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write_readme(path: Path, table: str) -> None:
    """Replace what lies between the lines BEGIN and END of *path* with *table*."""
    text = path.read_text(encoding="utf-8")
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise SystemExit(f"{path} needs one line {BEGIN} followed by one line {END}")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    path.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs (under 5 CPU-minutes)")
    parser.add_argument(
        "--only", nargs="+", choices=list(BENCHMARKS), default=list(BENCHMARKS), metavar="NAME"
    )
    parser.add_argument("--logs", type=Path, default=None, help="where to keep each output")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument(
        "--readme", type=Path, default=None, help="write the Markdown table into this file too"
    )
    args = parser.parse_args()
    logs = args.logs or Path(tempfile.mkdtemp(prefix="dpplug-bench-"))
    logs.mkdir(parents=True, exist_ok=True)

    rows: list[tuple[str, str, str, str]] = []
    total, loads = 0.0, [load_average()]
    for name in args.only:
        console.print(f"running {name} … ({loads[-1]})")
        found, seconds, status = run(name, args.quick, logs)
        total += seconds
        loads.append(load_average())
        console.print(f"  {name}: {seconds:.0f} CPU-s ({loads[-1]})")
        if status != 0 or not found:
            rows.append((name, f"FAILED (exit {status}), see {logs / name}.txt", "", ""))
            continue
        for h in found:
            value, unit = float(h["value"]), str(h["unit"])  # type: ignore[arg-type]
            target = None if h["target"] is None else float(h["target"])  # type: ignore[arg-type]
            rows.append((name, str(h["label"]), shown(value, unit), verdict(value, target, unit)))

    title = (
        f"dpplug headline numbers ({'quick' if args.quick else 'full'} run, {total:,.0f} CPU-s; "
        f"{loads[0]} before, {loads[-1]} after)"
    )
    if args.markdown or args.readme:
        text = markdown(title, rows)
        print(f"\n{text}")
        if args.readme:
            write_readme(args.readme, text)
            console.print(f"Table written into {args.readme}")
    else:
        table = Table(title=title)
        for column in ("benchmark", "measure", "value", "target"):
            table.add_column(column, justify="right" if column == "value" else "left")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    console.print(f"Full outputs: {logs}; {total:,.0f} CPU-s in all")


if __name__ == "__main__":
    main()
