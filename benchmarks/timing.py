"""Timing helpers shared by the benchmark scripts (importable as ``timing`` when a script in this
folder runs: Python puts the script's folder first on sys.path)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from rich.console import Console

T = TypeVar("T")

# Wide enough for the tables when the output is piped to a file (rich defaults to 80 columns).
console = Console(width=None if sys.stdout.isatty() else 150)


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of the first run and the best of all runs, and the last result."""

    first: float
    best: float
    result: Any


def timed(fn: Callable[[], T], repeats: int) -> Timing:
    """Run *fn* *repeats* times; keep the first and the minimum duration."""
    durations: list[float] = []
    result: Any = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        durations.append(time.perf_counter() - start)
    return Timing(durations[0], min(durations), result)
