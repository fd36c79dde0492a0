"""Timing helpers shared by the benchmark scripts (importable as ``timing`` when a script in this
folder runs: Python puts the script's folder first on sys.path), and the headline numbers each
script can write for ``run_all.py`` (``--headlines FILE``)."""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console

T = TypeVar("T")

# Wide enough for the tables when the output is piped to a file (rich defaults to 80 columns).
console = Console(width=None if sys.stdout.isatty() else 150)


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of the first run and the best of all runs, and the last result;
    ``cpu``: the least CPU time of this process over the runs (``time.process_time``), which
    other processes on a shared machine move much less than the wall clock."""

    first: float
    best: float
    result: Any
    cpu: float = float("nan")


def timed(fn: Callable[[], T], repeats: int) -> Timing:
    """Run *fn* *repeats* times; keep the first and the minimum duration."""
    durations: list[float] = []
    cpu: list[float] = []
    result: Any = None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        durations.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return Timing(durations[0], min(durations), result, min(cpu))


def cpu_seconds() -> float:
    """This process's CPU time (``time.process_time``, user and system) and its finished
    children's, in seconds."""
    times = os.times()
    return time.process_time() + times.children_user + times.children_system


def tree_cpu_seconds() -> float:
    """The CPU seconds of this process and of every live process below it (and of their finished
    children): what a Spark run costs, whose JVM and Python workers run in other processes that
    :func:`cpu_seconds` sees only once they end. Read from ``/proc`` (Linux); elsewhere
    :func:`cpu_seconds`."""
    if not os.path.isdir("/proc/self"):
        return cpu_seconds()
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    mine, total = {os.getpid()}, 0
    grew = True
    while grew:
        below = {pid for pid, parent in parents.items() if parent in mine} - mine
        grew = bool(below)
        mine |= below
    total = sum(ticks[pid] for pid in mine if pid in ticks)
    return total / os.sysconf("SC_CLK_TCK")


def output_file(name: str) -> str:
    """Where a benchmark's output file *name* (a plot) goes unless asked otherwise: the system's
    temporary folder, never the repository."""
    return str(Path(tempfile.gettempdir()) / f"dpplug-{name}")


def load_average() -> str:
    """The machine's load averages over 1, 5 and 15 minutes, and its cores, for the record."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} cores"


def interleaved(
    calls: dict[str, Callable[[], Any]],
    rounds: int,
    clock: Callable[[], float] = cpu_seconds,
    per_call: int = 1,
) -> dict[str, list[float]]:
    """The CPU seconds (*clock*: :func:`cpu_seconds`, or :func:`tree_cpu_seconds` when work runs
    in other processes) of each call, round by round: every round runs each call once, in
    order, so a change of the machine's load falls on all of them alike. With *per_call* > 1
    each round times that many calls in a row and records the time of one (calls too short for
    the clock's resolution)."""
    found: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            start = clock()
            for _ in range(per_call):
                call()
            found[name].append((clock() - start) / per_call)
    return found


def median_ratio(numerator: list[float], denominator: list[float]) -> float:
    """The median over rounds of numerator / denominator, paired round by round."""
    return statistics.median(paired_ratios(numerator, denominator))


def paired_ratios(numerator: list[float], denominator: list[float]) -> list[float]:
    """numerator / denominator round by round (a round whose denominator took no measurable
    time counts as infinitely faster)."""
    return [a / b if b > 0 else math.inf for a, b in zip(numerator, denominator, strict=True)]


def ratio_text(numerator: list[float], denominator: list[float]) -> str:
    """The median of the paired ratios, with their range: ``12.3× (11.8–13.0×)``."""
    ratios = paired_ratios(numerator, denominator)
    median = statistics.median(ratios)
    return f"{median:,.2f}× ({min(ratios):,.2f}–{max(ratios):,.2f}×)"


@dataclass(frozen=True)
class Headline:
    """One headline number of a benchmark, for ``run_all.py``: usually a speed ratio."""

    benchmark: str
    label: str
    value: float
    target: float | None = None
    unit: str = "×"


_HEADLINES: list[Headline] = []


def headline(
    benchmark: str, label: str, value: float, target: float | None = None, unit: str = "×"
) -> None:
    """Record a headline number (written by :func:`write_headlines`)."""
    _HEADLINES.append(Headline(benchmark, label, value, target, unit))


def add_headlines_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--headlines", metavar="FILE", help="also write the headline numbers to FILE (JSON)"
    )


def write_headlines(path: str | None) -> None:
    """Write the recorded headlines as JSON to *path* (nothing if None)."""
    if path:
        Path(path).write_text(json.dumps([asdict(h) for h in _HEADLINES], indent=1))
