"""Benchmark ``dpplug compare``: the CPU time to rank every built-in mechanism of a kind for a
typical task (target: under 2 s), and the declared accuracies at the points of issue 29's table.

1. **Time.** Each task of the README's "Which mechanism?" section (``dpplug.comparison_views.
   README_TASKS``, one per kind and two histogram tasks) is ranked in this process after the
   registry is loaded, ``--rounds`` times, the tasks interleaved round by round; the CPU time
   (``time.process_time``: the comparison runs in this process, no children) per task is the
   median over the rounds. Each ranking builds every mechanism afresh (nothing is cached across
   calls). The sweeps of the README tasks are timed once each. The load average is printed: on a
   shared machine the wall clock moves, the CPU time much less.
2. **Declared accuracies** at the issue's points (β = 1/20), which the tests check against
   independent computations of the true worst case (``tests/plugins/histograms/
   test_bounds_at_scale.py``, ``tests/plugins/samplers/test_discrete_gaussian.py``,
   ``tests/plugins/partition/test_truncated_geometric_thresholding.py``).

Run from the repository root (about a minute)::

    python benchmarks/compare.py [--rounds R] [--headlines FILE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from fractions import Fraction
from typing import Any

from rich.table import Table
from timing import add_headlines_option, console, headline, write_headlines

import dpplug
from dpplug.comparison_views import README_TASKS
from dpplug.param_text import parse_value

BETA = Fraction(1, 20)
TARGET_SECONDS = 2.0


def task_label(kind: str, params: dict[str, object]) -> str:
    return f"{kind} " + " ".join(f"{k}={v}" for k, v in params.items())


def section_time(rounds: int) -> None:
    tasks = [
        (task.kind, {name: parse_value(text) for name, text in task.params}, task.sweep)
        for task in README_TASKS
    ]
    cpu: dict[int, list[float]] = {i: [] for i in range(len(tasks))}
    for _ in range(rounds):
        for i, (kind, params, _) in enumerate(tasks):
            start = time.process_time()
            dpplug.compare(kind, **params)
            cpu[i].append(time.process_time() - start)
    table = Table(title=f"1. CPU seconds to rank a task (median of {rounds} rounds)")
    for column in ("task", "ranked", "CPU s", "sweep CPU s"):
        table.add_column(column, justify="right" if column != "task" else "left")
    for i, (kind, params, sweep) in enumerate(tasks):
        comparison = dpplug.compare(kind, **params)
        sweep_cpu = "—"
        if sweep:
            name, _, bounds = sweep.partition("=")
            low, _, high = bounds.partition(":")
            start = time.process_time()
            dpplug.compare.sweep(kind, name, parse_value(low), parse_value(high), **params)
            sweep_cpu = f"{time.process_time() - start:.2f} ({sweep})"
        median = statistics.median(cpu[i])
        table.add_row(
            task_label(kind, params), str(len(comparison.ranked)), f"{median:.2f}", sweep_cpu
        )
    console.print(table)
    slowest = max(statistics.median(values) for values in cpu.values())
    headline("compare", "slowest typical task, CPU", slowest, TARGET_SECONDS, "s")
    met = "met" if slowest <= TARGET_SECONDS else "NOT met"
    console.print(f"slowest task: {slowest:.2f} s of CPU (target ≤ {TARGET_SECONDS} s: {met})")


def declared(name: str, beta: Any = BETA, **params: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpplug.AccuracyWarning)
        mechanism = dpplug.create(name, **params)
    return mechanism, mechanism.accuracy(beta)


def section_declared() -> None:
    table = Table(title="2. Declared accuracy at the points of issue 29 (β = 1/20)")
    for column in ("mechanism", "point", "declared"):
        table.add_column(column)
    million = {"universe": "range:0:999999", "n": 10**6}
    for sampler in ("fastsample", "fixedpoint-geometric"):
        for eps in (Fraction(1, 10), Fraction(1)):
            _, acc = declared("basic-histogram", epsilon=eps, sampler=sampler, **million)
            point = f"n = |X| = 10⁶, ε = {eps}, {sampler}"
            table.add_row("basic-histogram", point, f"a = {acc.simultaneous.a} (all bins)")
    for n in (10**3, 10**6):
        for eps in (Fraction(1, 10), Fraction(1)):
            _, acc = declared(
                "stability-histogram",
                universe="range:0:99999999",
                n=n,
                epsilon=eps,
                delta=Fraction(1, 10**6),
                sampler="geosample",
            )
            point = f"n = {n:.0e}, ε = {eps}, δ = 1e-6, geosample"
            table.add_row("stability-histogram", point, f"a = {acc.simultaneous.a} (all bins)")
    for eps in (Fraction(1, 10), Fraction(1)):
        _, acc = declared("pure-sparse-histogram", universe="range:0:999999", n=1000, epsilon=eps)
        point = f"|X| = 10⁶, n = 10³, ε = {eps}"
        text = f"T = {acc.threshold} (a₁ = {acc.per_query.a})"
        table.add_row("pure-sparse-histogram", point, text)
    for eps in (Fraction(1, 2), Fraction(1)):
        _, acc = declared("discrete-gaussian", epsilon=eps, delta=Fraction(1, 10**6))
        table.add_row("discrete-gaussian", f"ε = {eps}, δ = 1e-6", f"a = {acc.per_query.a}")
    for eps, delta in ((1, Fraction(1, 10**10)), (2, Fraction(1, 10**8))):
        selector, acc = declared("truncated-geometric-thresholding", epsilon=eps, delta=delta)
        spent = float(selector.per_partition.delta / selector.budget.delta)
        point = f"ε = {eps}, δ = {float(delta):.0e}"
        text = f"δ′/δ = {spent:.3f}, ε̃ = {selector.per_partition.epsilon:.4f}"
        table.add_row("truncated-geometric-thresholding", point, text)
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the timing (median)")
    add_headlines_option(parser)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be positive")
    dpplug.registry()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    console.print(f"[bold]dpplug compare benchmark[/bold]: load average {load}")
    section_time(args.rounds)
    section_declared()
    write_headlines(args.headlines)


if __name__ == "__main__":
    main()
