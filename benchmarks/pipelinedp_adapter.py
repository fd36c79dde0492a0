"""Benchmark the PipelineDP adapter's partition selection against PipelineDP's own, end to end.

One process, one data set, generated once: ``--partitions`` partitions (10^6 by default) whose
unit counts follow a Zipf law, ``numpy.random.Generator.zipf(--zipf-a)`` clipped to
[1, ``--max-units``], from a generator seeded with ``--seed`` (the seed only builds the input).
Each row is one privacy unit contributing to one partition (ℓ₀ = 1 by construction), so the rows
are the partition keys and ``select_partitions`` runs with ``contribution_bounds_already_enforced``
(no group-by-privacy-unit stage). PipelineDP 0.3.1, ``pipeline_dp.LocalBackend()``,
``NaiveBudgetAccountant(total_epsilon=1, total_delta=1e-5)``, ``max_partitions_contributed=1``.

1. **End to end**: wall-clock time of ``select_partitions`` on the row list, iterated to the end
   (LocalBackend is lazy), best of ``--repeats``:

   - PipelineDP's ``pipeline_dp.DPEngine`` with its default ``TRUNCATED_GEOMETRIC`` strategy
     (python-dp's optimal selector, created per partition, floating point);
   - dpplug's ``DPEngine`` with ``partition_selection("optimal-partition-selection")`` (exact keep
     decisions on the 2^-63 grid, one 63-bit draw per partition from the default source);
   - the floor: the same pipeline keeping every partition without drawing anything, i.e.
     PipelineDP's shared stages (extract keys, build and merge accumulators, group by key). No
     selector can make the end-to-end time go below it, so native / floor is the largest
     end-to-end ratio any selector could reach on this data.

2. **Selection stage**: the exact filter function each engine hands to ``LocalBackend.filter``
   (recorded during the end-to-end run), applied to the pre-aggregated rows
   ``(partition, (units, ()))`` through the builtin ``filter``, as LocalBackend does. A reference
   row applies the selector's vectorised ``select`` to one partition at a time (the adapter's path
   for selectors that are not on the keep table) on the first ``--generic-partitions``, and one
   its ``select`` on the whole array at once.

Run from the repository root (about 1.5 minutes with the defaults)::

    python benchmarks/pipelinedp_adapter.py [--partitions N] [--zipf-a A] [--max-units M]
        [--repeats R] [--generic-partitions N] [--seed S] [--headlines FILE]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from importlib.metadata import version
from typing import Any

import numpy as np
import numpy.typing as npt
from rich.table import Table
from timing import add_headlines_option, console, headline, timed, write_headlines

import dpplug

EPSILON, DELTA = 1.0, 1e-5
TARGET = 1.5
Row = tuple[int, tuple[int, tuple[()]]]


def _partition(row: int) -> int:
    """Each row is the key of the partition its (single) privacy unit contributes to."""
    return row


def _keep_all(row: Any) -> bool:
    return True


@dataclass(frozen=True)
class Variant:
    label: str
    engine: Callable[[Any, Any], Any]
    strategy: Any


def variants() -> dict[str, Variant]:
    """The three engines (PipelineDP and the adapter are imported here, so ``--help`` works
    without them)."""
    import pipeline_dp
    from pipeline_dp.aggregate_params import MechanismType

    from dpplug.adapters import pipelinedp as adapter

    class FloorEngine(pipeline_dp.DPEngine):  # type: ignore[misc]
        """PipelineDP's select_partitions with a selection stage that keeps everything."""

        def _select_private_partitions_internal(self, col: Any, *args: Any, **kwargs: Any) -> Any:
            self._budget_accountant.request_budget(MechanismType.GENERIC, name="keep everything")
            return self._backend.filter(col, _keep_all, "Keep every partition")

    return {
        "native": Variant(
            "PipelineDP TRUNCATED_GEOMETRIC (python-dp)",
            pipeline_dp.DPEngine,
            pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC,
        ),
        "dpplug": Variant(
            "dpplug optimal-partition-selection",
            adapter.DPEngine,
            adapter.partition_selection("optimal-partition-selection"),
        ),
        "floor": Variant(
            "floor: keep everything, no selection",
            FloorEngine,
            pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC,
        ),
    }


def recording_backend() -> Any:
    """``pipeline_dp.LocalBackend`` that also keeps the functions given to ``filter``."""
    import pipeline_dp

    class RecordingBackend(pipeline_dp.LocalBackend):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.filters: list[Callable[[Any], bool]] = []

        def filter(self, col: Any, fn: Callable[[Any], bool], stage_name: str | None = None) -> Any:
            self.filters.append(fn)
            return super().filter(col, fn, stage_name)

    return RecordingBackend()


def unit_counts(partitions: int, zipf_a: float, max_units: int, seed: int) -> npt.NDArray[np.int64]:
    rng = np.random.default_rng(seed)
    counts: npt.NDArray[np.int64] = np.minimum(rng.zipf(zipf_a, partitions), max_units)
    return counts.astype(np.int64)


def select_partitions(variant: Variant, rows: list[int]) -> tuple[int, Any]:
    """Build and run the pipeline; the number of released partitions and the backend."""
    import pipeline_dp

    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=DELTA)
    backend = recording_backend()
    engine = variant.engine(accountant, backend)
    params = pipeline_dp.SelectPartitionsParams(
        max_partitions_contributed=1,
        partition_selection_strategy=variant.strategy,
        contribution_bounds_already_enforced=True,
    )
    extractors = pipeline_dp.DataExtractors(partition_extractor=_partition)
    released = engine.select_partitions(rows, params, extractors)
    accountant.compute_budgets()
    return sum(1 for _ in released), backend


def run_filter(fn: Callable[[Any], bool], aggregated: list[Row]) -> int:
    return sum(1 for _ in filter(fn, aggregated))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10**6)
    parser.add_argument("--zipf-a", type=float, default=2.0)
    parser.add_argument("--max-units", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--generic-partitions", type=int, default=10**5)
    parser.add_argument("--seed", type=int, default=0)
    add_headlines_option(parser)
    args = parser.parse_args()
    engines = variants()

    counts = unit_counts(args.partitions, args.zipf_a, args.max_units, args.seed)
    rows: list[int] = np.repeat(np.arange(args.partitions), counts).tolist()
    size = args.partitions
    console.print(
        f"PipelineDP {version('pipeline-dp')}, python-dp {version('python-dp')}, LocalBackend; "
        f"{size:,} partitions, {len(rows):,} rows (one privacy unit each), units per partition "
        f"Zipf(a={args.zipf_a}) clipped to [1, {args.max_units}]: median {np.median(counts):g}, "
        f"mean {counts.mean():.2f}; ε = {EPSILON}, δ = {DELTA}, ℓ₀ = 1, Naive accountant."
    )

    # 1. End to end.
    seconds: dict[str, float] = {}
    released: dict[str, int] = {}
    filters: dict[str, Callable[[Any], bool]] = {}
    for key, variant in engines.items():
        run = timed(partial(select_partitions, variant, rows), args.repeats)
        released[key], backend = run.result
        seconds[key] = run.best
        (filters[key],) = backend.filters
    table = Table(title="select_partitions end to end (best of repeats)")
    for column in ("variant", "seconds", "µs / partition", "released", "native / this"):
        table.add_column(column, justify="left" if column == "variant" else "right")
    for key, variant in engines.items():
        table.add_row(
            variant.label,
            f"{seconds[key]:.2f}",
            f"{seconds[key] / size * 1e6:.2f}",
            f"{released[key]:,}",
            f"{seconds['native'] / seconds[key]:.2f}×",
        )
    console.print(table)

    # 2. Selection stage alone, on the pre-aggregated rows.
    aggregated: list[Row] = [(i, (int(c), ())) for i, c in enumerate(counts.tolist())]
    stage = Table(title="selection stage: the recorded filter functions on pre-aggregated rows")
    for column in ("filter", "partitions", "µs / partition", "kept", "native / this"):
        stage.add_column(column, justify="left" if column == "filter" else "right")
    per_partition: dict[str, float] = {}
    for key in ("native", "dpplug"):
        run = timed(partial(run_filter, filters[key], aggregated), args.repeats)
        per_partition[key] = run.best / size
        stage.add_row(
            engines[key].label,
            f"{size:,}",
            f"{per_partition[key] * 1e6:.3f}",
            f"{run.result:,}",
            f"{per_partition['native'] / per_partition[key]:.2f}×",
        )

    selector = dpplug.create("optimal-partition-selection", epsilon=EPSILON, delta=DELTA)
    assert isinstance(selector, dpplug.PartitionSelector)
    source = dpplug.SystemSource()
    subset = counts[: args.generic_partitions]

    def one_at_a_time() -> int:
        return sum(
            bool(selector.select(subset[i : i + 1], source).keep[0]) for i in range(len(subset))
        )

    references = {
        "dpplug select() one partition at a time (generic path)": (subset.size, one_at_a_time),
        "dpplug select() on the whole array (vectorised)": (
            size,
            lambda: int(selector.select(counts, source).keep.sum()),
        ),
    }
    for label, (n, fn) in references.items():
        run = timed(fn, args.repeats)
        stage.add_row(
            label,
            f"{n:,}",
            f"{run.best / n * 1e6:.3f}",
            f"{run.result:,}",
            f"{per_partition['native'] / (run.best / n):.2f}×",
        )
    console.print(stage)

    ratio = seconds["native"] / seconds["dpplug"]
    ceiling = seconds["native"] / seconds["floor"]
    verdict = "met" if ratio >= TARGET else "NOT met"
    console.print(
        f"End to end: dpplug {ratio:.2f}× faster than PipelineDP's TRUNCATED_GEOMETRIC "
        f"(target ≥ {TARGET}×: {verdict}). Selection stage: "
        f"{per_partition['native'] / per_partition['dpplug']:.2f}× faster. PipelineDP's shared "
        f"stages alone take {seconds['floor']:.2f} s, so even a free selector would reach only "
        f"{ceiling:.2f}× end to end on this data."
    )
    label = "PipelineDP select_partitions / dpplug, end to end"
    headline("pipelinedp_adapter", label, ratio, TARGET)
    headline(
        "pipelinedp_adapter",
        "python-dp filter / dpplug filter, selection stage",
        per_partition["native"] / per_partition["dpplug"],
    )
    write_headlines(args.headlines)


if __name__ == "__main__":
    main()
