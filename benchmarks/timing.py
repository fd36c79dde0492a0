"""Timing helpers shared by the benchmark scripts (importable as ``timing`` when a script in this
folder runs: Python puts the script's folder first on sys.path), and the headline numbers each
script can write for ``run_all.py`` (``--headlines FILE``)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
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


def load_average() -> str:
    """The machine's load averages over 1, 5 and 15 minutes, and its cores, for the record."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} cores"


def tree_cpu_seconds() -> float:
    """CPU seconds (user and system) of this process and of every live process descended from
    it, each with its finished children's (Linux ``/proc``): what a Spark ``local[2]`` run costs,
    its JVM and Python workers included, which :func:`cpu_seconds` does not see while they
    live."""
    stats: dict[int, int] = {}
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # the process ended meanwhile
            continue
        fields = text[text.rindex(")") + 2 :].split()  # from the state field on
        stats[int(entry)] = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        children.setdefault(int(fields[1]), []).append(int(entry))
    total, stack = 0, [os.getpid()]
    while stack:
        pid = stack.pop()
        total += stats.get(pid, 0)
        stack += children.get(pid, [])
    return total / os.sysconf("SC_CLK_TCK")


def interleaved(
    calls: dict[str, Callable[[], Any]], rounds: int, clock: Callable[[], float] = cpu_seconds
) -> dict[str, list[float]]:
    """The CPU seconds (*clock*: :func:`cpu_seconds` by default) of each call, round by round:
    every round runs each call once, in order, so a change of the machine's load falls on all of
    them alike."""
    found: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            start = clock()
            call()
            found[name].append(clock() - start)
    return found


def median_ratio(numerator: list[float], denominator: list[float]) -> float:
    """The median over rounds of numerator / denominator, paired round by round."""
    return statistics.median(a / b for a, b in zip(numerator, denominator, strict=True))


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
