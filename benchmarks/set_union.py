"""Benchmark dpplug's set unions (weighted-gaussian, dp-sips, policy-laplace) against partition
selection split over ℓ₀ and PipelineDP's own strategies, at ε = 1, δ = 1e-5 (add or remove one
privacy unit).

1. **Users needed** (the table of the set-union issue): the fewest units, all holding one label
   and each holding t labels in all, that release it with probability ≥ ½; for ℓ₀ ∈ {1, 8, 32}:
   dpplug's ``optimal-partition-selection`` (the optimal selector, budget split over ℓ₀, exact),
   python-dp's Laplace and Gaussian thresholding as PipelineDP 0.3.1 creates them
   (``probability_of_keep``; PipelineDP's ``WEIGHTED_GAUSSIAN_THRESHOLDING`` creates the same
   Gaussian selector), and dpplug's set unions for units of ℓ₀ labels and of one label
   (``units_needed(1/2, t)``, a rigorous bound from the first round: DP-SIPS's later rounds only
   add releases; a last column counts them all, for single-label units).

2. **Released partitions on Zipf data and on a word corpus**: ``--users`` units; unit u holds
   k_u distinct labels, k_u = min(ℓ₀, Zipf(``--count-a``)) (most units few labels, some ℓ₀),
   each label drawn from Zipf(``--label-a``), or, for the ``words`` rows, an English word drawn
   with its frequency in the ``wordfreq`` package's "large" list (a real corpus, about 3.2·10⁵
   words shipped inside the package; no download) (numpy's seeded generator: the seed only
   builds the data), for ℓ₀ ∈ {1, 4, 10, 32, 100}. Every mechanism runs with
   max_partitions_contributed = ℓ₀ on the same data (no unit holds more): dpplug's
   split-optimal and Gaussian thresholding selectors on the per-label unit counts; PipelineDP's
   ``select_partitions`` with each of its four strategies (LocalBackend); dpplug's set unions on
   the units' label sets. Mean over ``--runs`` releases (fresh noise each; OS randomness). The
   ratio column divides by the better of split-optimal and Gaussian thresholding. PipelineDP's
   weighted Gaussian strategy, which builds a selector per partition (minutes on the corpus's
   many labels) and thresholds as Gaussian thresholding does, runs on the Zipf data only.

3. **CPU time per row**: ``select_partitions`` on (unit, label) rows of the ℓ₀ = 10 data
   (``--timing-users`` units) through PipelineDP's own engine (default strategy, the anchor) and
   through dpplug's ``DPEngine`` with ``set_union(NAME)``, on LocalBackend, Beam's DirectRunner
   (in memory) and Spark ``local[2]`` (context made once, outside the timings); interleaved
   rounds (``--rounds``), the CPU time of this process and its descendants (Spark's JVM and
   Python workers included, for Spark), medians of per-round ratios to the anchor.

Run from the repository root (several minutes with the defaults)::

    python benchmarks/set_union.py [--users N] [--runs R] [--timing-users N] [--rounds R]
        [--seed S] [--skip-timing] [--skip-releases] [--headlines FILE]
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from importlib.metadata import version
from typing import Any

import numpy as np
import pipeline_dp
from pydp.algorithms import partition_selection as pydp_selection
from rich.table import Table
from timing import (
    add_headlines_option,
    console,
    cpu_seconds,
    headline,
    interleaved,
    load_average,
    median_ratio,
    tree_cpu_seconds,
    write_headlines,
)

import dpplug
from dpplug.adapters import pipelinedp as dpplug_pdp

EPSILON, DELTA = 1, Fraction(1, 10**5)
UNIONS = ("weighted-gaussian", "dp-sips", "policy-laplace")
HALF = Fraction(1, 2)
#: PipelineDP's weighted Gaussian strategy builds a selector per partition at a cost of about
#: 5 ms each; it is run on the Zipf data only (its threshold is Gaussian thresholding's).
PDP_WEIGHTED = "PipelineDP weighted Gaussian"
PDP_STRATEGIES = {
    "PipelineDP truncated geometric": pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC,
    "PipelineDP Laplace thresholding": pipeline_dp.PartitionSelectionStrategy.LAPLACE_THRESHOLDING,
    "PipelineDP Gaussian thresholding": (
        pipeline_dp.PartitionSelectionStrategy.GAUSSIAN_THRESHOLDING
    ),
    PDP_WEIGHTED: pipeline_dp.PartitionSelectionStrategy.WEIGHTED_GAUSSIAN_THRESHOLDING,
}
Sets = dict[int, list[Any]]


def _pydp_needed(kind: str, l0: int) -> int:
    """The fewest units python-dp's selector keeps with probability ≥ ½."""
    selector = pydp_selection.create_partition_strategy(kind, EPSILON, float(DELTA), l0)
    n = 1
    while selector.probability_of_keep(n) < 0.5:
        n += 1
    return n


def _every_round_needed(union: Any) -> int:
    """The fewest single-label units whose label some round of DP-SIPS releases w.p. ≥ ½ (its
    rounds' rigorous keep enclosures: Π_r (1 − π_r(n·w_1)) ≤ ½)."""
    rounds = union.declared_release().rounds
    n = 1
    while True:
        missed = Fraction(1)
        for certificate in rounds:
            lo, _ = certificate.keep(n * certificate.weights[0])
            missed *= 1 - Fraction(lo)
        if missed <= HALF:
            return n
        n += 1


def users_needed() -> None:
    table = Table(title="units a label needs to be released w.p. ≥ ½ (ε = 1, δ = 1e-5)")
    columns = [
        "ℓ₀",
        "split optimal",
        "Laplace thr. (python-dp)",
        "Gaussian thr. (PipelineDP)",
        *(f"{name}, units of ℓ₀ labels" for name in UNIONS),
        *(f"{name}, units of 1 label" for name in UNIONS),
        "dp-sips every round, units of 1 label",
    ]
    for column in columns:
        table.add_column(column, justify="right")
    for l0 in (1, 8, 32):
        split = dpplug.create(
            "optimal-partition-selection",
            epsilon=EPSILON,
            delta=DELTA,
            max_partitions_contributed=l0,
        )
        unions = [
            dpplug.create(name, epsilon=EPSILON, delta=DELTA, max_partitions_contributed=l0)
            for name in UNIONS
        ]
        full = [union.units_needed(HALF, l0) for union in unions]
        one = [union.units_needed(HALF, 1) for union in unions]
        table.add_row(
            str(l0),
            str(split.kept_from(HALF)),
            str(_pydp_needed("laplace", l0)),
            str(_pydp_needed("gaussian", l0)),
            *map(str, full),
            *map(str, one),
            str(_every_round_needed(unions[1])),
        )
        if l0 == 32:
            headline(
                "set_union",
                "weighted-gaussian units needed, ℓ₀ = 32 labels",
                full[0],
                115,
                " units",
            )
            headline(
                "set_union",
                "weighted-gaussian units needed, 1 label (ℓ₀ = 32)",
                one[0],
                21,
                " units",
            )
    console.print(table)


def _unit_sets(
    users: int, l0: int, count_a: float, rng: np.random.Generator, draw: Callable[[int], list[Any]]
) -> Sets:
    """Unit → its k_u = min(ℓ₀, Zipf(count_a)) distinct labels, each drawn by *draw* (which
    returns that many labels) until the unit has k_u distinct ones."""
    counts = np.minimum(rng.zipf(count_a, users), l0)
    sets: Sets = {}
    for unit, k in enumerate(counts.tolist()):
        labels: dict[Any, None] = {}
        while len(labels) < k:
            for label in draw(2 * k):
                if len(labels) < k:
                    labels[label] = None
        sets[unit] = list(labels)
    return sets


def zipf_sets(users: int, l0: int, count_a: float, label_a: float, seed: int) -> Sets:
    """Unit → its distinct labels, each Zipf(label_a) (see the module docstring)."""
    rng = np.random.default_rng(seed)
    return _unit_sets(users, l0, count_a, rng, lambda m: rng.zipf(label_a, m).tolist())


def word_sets(users: int, l0: int, count_a: float, label_a: float, seed: int) -> Sets:
    """Unit → its distinct English words, each drawn with its frequency in ``wordfreq``'s
    "large" English list (about 3.2·10⁵ words, shipped inside the package). *label_a* is not
    used: the corpus gives the labels' popularity."""
    import wordfreq

    frequencies = wordfreq.get_frequency_dict("en", wordlist="large")
    words = list(frequencies)
    cumulative = np.cumsum(np.array(list(frequencies.values())))
    cumulative /= cumulative[-1]
    rng = np.random.default_rng(seed)

    def draw(m: int) -> list[Any]:
        picked = np.searchsorted(cumulative, rng.random(m), side="right")
        return [words[i] for i in np.minimum(picked, len(words) - 1).tolist()]

    return _unit_sets(users, l0, count_a, rng, draw)


#: The data sets of section 2: how units' label sets are drawn.
DATASETS: dict[str, Callable[[int, int, float, float, int], Sets]] = {
    "Zipf": zipf_sets,
    "words": word_sets,
}


def _rows(sets: Sets) -> list[tuple[int, Any]]:
    return [(unit, label) for unit, labels in sets.items() for label in labels]


EXTRACT = pipeline_dp.DataExtractors(
    privacy_id_extractor=lambda row: row[0],
    partition_extractor=lambda row: row[1],
    value_extractor=lambda row: 1,
)


def _pdp_select(
    col: Any, backend: Any, l0: int, strategy: Any, engine: Callable[..., Any]
) -> tuple[Any, Any]:
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=float(DELTA))
    params = pipeline_dp.SelectPartitionsParams(
        max_partitions_contributed=l0, partition_selection_strategy=strategy
    )
    selected = engine(accountant, backend).select_partitions(col, params, EXTRACT)
    return selected, accountant


def _local(rows: list[tuple[int, int]], l0: int, strategy: Any, engine: Callable[..., Any]) -> int:
    selected, accountant = _pdp_select(rows, pipeline_dp.LocalBackend(), l0, strategy, engine)
    accountant.compute_budgets()
    return sum(1 for _ in selected)


def released(users: int, runs: int, count_a: float, label_a: float, seed: int) -> None:
    table = Table(title=f"labels released (mean of {runs} runs), {users:,} units, ε = 1, δ = 1e-5")
    names = [
        "split optimal (dpplug)",
        "Gaussian thresholding (dpplug)",
        *PDP_STRATEGIES,
        *UNIONS,
    ]
    table.add_column("data", justify="left")
    table.add_column("ℓ₀", justify="right")
    table.add_column("rows / labels", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    table.add_column("best set union / best of split and Gaussian", justify="right")
    for data, make_sets in DATASETS.items():
        for l0 in (1, 4, 10, 32, 100):
            sets = make_sets(users, l0, count_a, label_a, seed)
            rows = _rows(sets)
            counts = np.array(list(Counter(label for _, label in rows).values()))
            found: dict[str, float] = {}
            for name in ("optimal-partition-selection", "gaussian-thresholding"):
                selector = dpplug.create(
                    name, epsilon=EPSILON, delta=DELTA, max_partitions_contributed=l0
                )
                found[name] = statistics.mean(
                    int(selector.select(counts).keep.sum()) for _ in range(runs)
                )
            for label, strategy in PDP_STRATEGIES.items():
                if data != "Zipf" and label == PDP_WEIGHTED:  # minutes; Gaussian's threshold
                    found[label] = float("nan")
                    continue
                found[label] = statistics.mean(
                    _local(rows, l0, strategy, pipeline_dp.DPEngine) for _ in range(runs)
                )
            for name in UNIONS:
                union = dpplug.create(
                    name, epsilon=EPSILON, delta=DELTA, max_partitions_contributed=l0
                )
                found[name] = statistics.mean(len(union.select(sets)) for _ in range(runs))
            anchor = max(found["optimal-partition-selection"], found["gaussian-thresholding"])
            best = max(found[name] for name in UNIONS)
            table.add_row(
                data,
                str(l0),
                f"{len(rows):,} / {counts.size:,}",
                *(f"{value:,.1f}" if value == value else "–" for value in found.values()),
                f"{best / anchor:.2f}×",
            )
            if l0 == 10:
                headline(
                    "set_union",
                    f"released at ℓ₀ = 10 / best of split and Gaussian, {data}",
                    best / anchor,
                    1.5 if data == "Zipf" else None,
                )
                headline(
                    "set_union",
                    f"best of dp-sips, policy-laplace / weighted-gaussian at ℓ₀ = 10, {data}",
                    max(found["dp-sips"], found["policy-laplace"]) / found["weighted-gaussian"],
                    1.0,
                )
    console.print(table)


def _run_beam(rows: list[tuple[int, int]], l0: int, strategy: Any, engine: Any) -> None:
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    options = PipelineOptions(flags=[], runner="DirectRunner", direct_running_mode="in_memory")
    with beam.Pipeline(options=options) as pipeline:
        col = pipeline | beam.Create(rows)
        selected, accountant = _pdp_select(col, pipeline_dp.BeamBackend(), l0, strategy, engine)
        accountant.compute_budgets()
        _ = selected | beam.combiners.Count.Globally()


def _run_spark(
    context: Any, rows: list[tuple[int, int]], l0: int, strategy: Any, engine: Any
) -> None:
    rdd = context.parallelize(rows, 2)
    selected, accountant = _pdp_select(
        rdd, pipeline_dp.SparkRDDBackend(context), l0, strategy, engine
    )
    accountant.compute_budgets()
    selected.count()


def timings(users: int, rounds: int, count_a: float, label_a: float, seed: int) -> None:
    from dpplug.adapters.spark import local_context

    l0 = 10
    rows = _rows(zipf_sets(users, l0, count_a, label_a, seed))
    context = local_context("dpplug-set-union-benchmark")
    context.setLogLevel("ERROR")
    anchor = "PipelineDP select_partitions (truncated geometric)"
    variants: dict[str, tuple[Any, Any]] = {
        anchor: (pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC, pipeline_dp.DPEngine),
        **{
            f"dpplug set_union({name})": (dpplug_pdp.set_union(name), dpplug_pdp.DPEngine)
            for name in UNIONS
        },
    }
    backends: dict[str, Callable[[Any, Any], Callable[[], Any]]] = {
        "Local": lambda s, e: lambda: _local(rows, l0, s, e),
        "Beam DirectRunner": lambda s, e: lambda: _run_beam(rows, l0, s, e),
        "Spark local[2]": lambda s, e: lambda: _run_spark(context, rows, l0, s, e),
    }
    table = Table(
        title=f"CPU time of select_partitions, {len(rows):,} rows (ℓ₀ = 10), {rounds} rounds"
    )
    for column in ("backend", "variant", "median µs / row", "median ratio to PipelineDP"):
        table.add_column(column, justify="left" if column in ("backend", "variant") else "right")
    try:
        for backend, make in backends.items():
            calls = {label: make(*variant) for label, variant in variants.items()}
            calls[anchor]()  # warm-up: imports, the JVM's first jobs
            # Local and Beam (in memory) run in this process: its CPU clock, to the µs; Spark
            # in its JVM and Python workers too: the process tree's, to the clock tick.
            clock = tree_cpu_seconds if backend.startswith("Spark") else cpu_seconds
            found = interleaved(calls, rounds, clock=clock)
            for label, seconds in found.items():
                table.add_row(
                    backend,
                    label,
                    f"{statistics.median(seconds) / len(rows) * 1e6:.1f}",
                    f"{median_ratio(seconds, found[anchor]):.2f}×",
                )
                if backend == "Spark local[2]" and label == "dpplug set_union(weighted-gaussian)":
                    # Like every headline ratio, the anchor's time over dpplug's: the target,
                    # dpplug within 1.3× of PipelineDP's CPU time, is a ratio ≥ 1/1.3.
                    headline(
                        "set_union",
                        "PipelineDP select_partitions / Spark weighted-gaussian (CPU)",
                        median_ratio(found[anchor], seconds),
                        1 / 1.3,
                    )
    finally:
        context.stop()
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--count-a", type=float, default=2.0)
    parser.add_argument("--label-a", type=float, default=1.5)
    parser.add_argument("--timing-users", type=int, default=40_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--skip-releases", action="store_true", help="only the CPU timings")
    add_headlines_option(parser)
    args = parser.parse_args()
    console.print(
        f"dpplug set unions; PipelineDP {version('pipeline-dp')}, python-dp "
        f"{version('python-dp')}; {load_average()}"
    )
    if not args.skip_releases:
        users_needed()
        released(args.users, args.runs, args.count_a, args.label_a, args.seed)
    if not args.skip_timing:
        timings(args.timing_users, args.rounds, args.count_a, args.label_a, args.seed)
        console.print(load_average())
    write_headlines(args.headlines)


if __name__ == "__main__":
    main()
