"""Benchmark dpplug's PipelineDP engine against PipelineDP's own, on the same data, in CPU time.

Every ratio is the median of paired ratios over ``--rounds`` interleaved rounds (each round runs
PipelineDP's engine, then dpplug's, on the same input), of CPU time: ``time.process_time`` plus
finished children (``timing.cpu_seconds``) for the local backend and Beam's DirectRunner, which
run in this process, and the CPU time of this process and every process below it
(``timing.tree_cpu_seconds``: Spark's JVM and its Python workers) for Spark. The load average is
printed before and after each section. PipelineDP 0.3.1 with ``NaiveBudgetAccountant(ε = 1,
δ = 1e-5)`` for both engines.

1. **The scalar decider** (ns per partition), on ``--decider-partitions`` Zipf unit counts: the
   ``decider`` of ``optimal-partition-selection`` (what PipelineDP's per-partition filter calls
   when dpplug's counting graph does not run: other metrics alongside the counts, public
   partitions) against python-dp's ``should_keep`` two ways: one strategy reused for every
   partition, and one created per partition, as PipelineDP 0.3.1 calls it (its filter builds
   the strategy inside the per-row function). The vectorised ``select`` on the whole array is a
   reference row.

2. **select_partitions end to end**: PipelineDP's engine with its default
   ``TRUNCATED_GEOMETRIC`` strategy (python-dp's optimal selector) against dpplug's engine with
   ``partition_selection("optimal-partition-selection")``, ``max_partitions_contributed = ℓ₀``
   (``--l0``), contribution bounding by the engine, on ``pipeline_dp.LocalBackend()``,
   ``BeamBackend()`` on Beam's DirectRunner (in memory) and ``SparkRDDBackend`` on Spark
   ``local[2]``.

3. **aggregate end to end**: COUNT and PRIVACY_ID_COUNT with ℓ₀ and ℓ∞ = ``--linf``: PipelineDP's
   engine with LAPLACE noise and its truncated geometric selection against dpplug's engine with
   ``count_noise=sampler("discrete-laplace")`` and the optimal selector, on the same backends.

The data (``synthetic.zipf_rows``, seeded with ``--seed``): ``--rows`` (unit, partition) rows
over ``--partitions`` Zipf-ranked partitions, each unit touching 1 to ``--max-touch`` of them;
Beam and Spark get ``--beam-rows`` and ``--spark-rows`` rows of the same law. The local
backend reads a list of tuples, Beam a ``Create`` of chunks of it, Spark an RDD of it cached
(and counted) before the first round. Each run iterates, writes or counts its output to the
end. Targets: the decider at most python-dp's reused ``should_keep``; select_partitions ≥ 1.5×
and aggregate ≥ 1.2× PipelineDP's engine on every backend.

Run from the repository root (about 10 minutes on 2 cores; ``--quick``: smaller data, about 2)::

    python benchmarks/pipelinedp_adapter.py [--quick] [--rows N] [--partitions P]
        [--beam-rows N] [--spark-rows N] [--rounds R] [--backends NAME …] [--headlines FILE]
"""

from __future__ import annotations

import argparse
import glob
import operator
import tempfile
from collections.abc import Callable
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
from rich.table import Table
from synthetic import Rows, zipf_rows
from timing import (
    add_headlines_option,
    console,
    cpu_seconds,
    headline,
    interleaved,
    load_average,
    median_ratio,
    ratio_text,
    tree_cpu_seconds,
    write_headlines,
)

import dpplug

EPSILON, DELTA = 1.0, 1e-5
TARGET_SELECT = 1.5
TARGET_AGGREGATE = 1.2
TARGET_DECIDER = 1.0
BACKENDS = ("local", "beam", "spark")
#: Rows per element of Beam's Create (the rows are read in chunks).
BEAM_CHUNK = 10_000
BENCH = "pipelinedp_adapter"


def decider(partitions: int, rounds: int, seed: int) -> None:
    """Section 1: ns per partition of the scalar decider and of python-dp's should_keep."""
    from pipeline_dp import PartitionSelectionStrategy
    from pipeline_dp import partition_selection as pdp_selection

    rng = np.random.default_rng(seed)
    units: list[int] = np.minimum(rng.zipf(2.0, partitions), 1000).tolist()
    selector = dpplug.create("optimal-partition-selection", epsilon=EPSILON, delta=DELTA)
    assert isinstance(selector, dpplug.PartitionSelector)
    decide = selector.decider()
    strategy = PartitionSelectionStrategy.TRUNCATED_GEOMETRIC

    def pydp() -> Any:
        return pdp_selection.create_partition_selection_strategy(strategy, EPSILON, DELTA, 1)

    reused = pydp()
    array = np.asarray(units, dtype=np.int64)
    calls: dict[str, Callable[[], Any]] = {
        "dpplug decider": lambda: [decide(u) for u in units],
        "python-dp should_keep, one strategy reused": lambda: [
            reused.should_keep(u) for u in units
        ],
        "python-dp should_keep, one strategy per partition (PipelineDP's filter)": lambda: [
            pydp().should_keep(u) for u in units
        ],
        "dpplug select() on the whole array": lambda: selector.select(array),
    }
    console.print(f"[dim]section 1: {load_average()}[/dim]")
    times = interleaved(calls, rounds)
    base = times["dpplug decider"]
    table = Table(
        title=f"1. The scalar decider: {partitions:,} partitions, CPU time, median of {rounds} "
        "interleaved rounds"
    )
    for column in ("call", "ns / partition", "this / dpplug decider (range)"):
        table.add_column(column, justify="left" if column == "call" else "right")
    for name, seconds in times.items():
        ns = float(np.median(seconds)) / partitions * 1e9
        table.add_row(name, f"{ns:,.1f}", ratio_text(seconds, base))
    console.print(table)
    reused_key, per_key = list(times)[1:3]
    headline(
        BENCH,
        "python-dp should_keep (one reused) / dpplug decider, per partition",
        median_ratio(times[reused_key], base),
        TARGET_DECIDER,
    )
    headline(
        BENCH,
        "python-dp should_keep (one per partition, as PipelineDP) / dpplug decider",
        median_ratio(times[per_key], base),
    )


# --------------------------------------------------------------------------- the engines


def _extractors() -> Any:
    import pipeline_dp

    return pipeline_dp.DataExtractors(
        privacy_id_extractor=operator.itemgetter(0),
        partition_extractor=operator.itemgetter(1),
        value_extractor=lambda row: 1,
    )


def _engine(ours: bool, backend: Any) -> tuple[Any, Any]:
    """(engine, accountant): PipelineDP's, or dpplug's with discrete-laplace count noise."""
    import pipeline_dp

    from dpplug.adapters import pipelinedp as adapter

    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=DELTA)
    if not ours:
        return pipeline_dp.DPEngine(accountant, backend), accountant
    noise = adapter.sampler("discrete-laplace")
    return adapter.DPEngine(accountant, backend, count_noise=noise), accountant


def _strategy(ours: bool) -> Any:
    import pipeline_dp

    from dpplug.adapters import pipelinedp as adapter

    if ours:
        return adapter.partition_selection("optimal-partition-selection")
    return pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC


def build(what: str, ours: bool, backend: Any, col: Any, l0: int, linf: int) -> Any:
    """The output collection of *what* ("select" or "aggregate") on *col*, budgets computed."""
    import pipeline_dp

    engine, accountant = _engine(ours, backend)
    if what == "select":
        params: Any = pipeline_dp.SelectPartitionsParams(
            max_partitions_contributed=l0, partition_selection_strategy=_strategy(ours)
        )
        out = engine.select_partitions(col, params, _extractors())
    else:
        params = pipeline_dp.AggregateParams(
            metrics=[pipeline_dp.Metrics.COUNT, pipeline_dp.Metrics.PRIVACY_ID_COUNT],
            max_partitions_contributed=l0,
            max_contributions_per_partition=linf,
            noise_kind=pipeline_dp.NoiseKind.LAPLACE,
            partition_selection_strategy=_strategy(ours),
        )
        out = engine.aggregate(col, params, _extractors())
    accountant.compute_budgets()
    return out


class Local:
    """The local backend on a list of row tuples."""

    clock = staticmethod(cpu_seconds)

    def __init__(self, rows: Rows) -> None:
        self.rows = rows.as_tuples()

    def run(self, what: str, ours: bool, l0: int, linf: int) -> int:
        import pipeline_dp

        out = build(what, ours, pipeline_dp.LocalBackend(), self.rows, l0, linf)
        return sum(1 for _ in out)

    def close(self) -> None:
        return None


class Beam:
    """Beam's DirectRunner (in memory, in this process) on chunks of row tuples; the output is
    written to text files and its lines counted."""

    clock = staticmethod(cpu_seconds)

    def __init__(self, rows: Rows) -> None:
        tuples = rows.as_tuples()
        self.chunks = [tuples[i : i + BEAM_CHUNK] for i in range(0, len(tuples), BEAM_CHUNK)]
        self.folder = Path(tempfile.mkdtemp(prefix="dpplug-beam-"))
        self.runs = 0

    def run(self, what: str, ours: bool, l0: int, linf: int) -> int:
        import apache_beam as beam
        import pipeline_dp
        from apache_beam.options.pipeline_options import PipelineOptions

        self.runs += 1
        prefix = self.folder / f"run{self.runs}"
        options = PipelineOptions(flags=[], runner="DirectRunner", direct_running_mode="in_memory")
        with beam.Pipeline(options=options) as pipeline:
            chunks = pipeline | "Chunks" >> beam.Create(self.chunks)
            col = chunks | "Rows" >> beam.FlatMap(lambda chunk: chunk)
            out = build(what, ours, pipeline_dp.BeamBackend(), col, l0, linf)
            _ = out | "Text" >> beam.Map(repr) | "Write" >> beam.io.WriteToText(str(prefix))
        return sum(Path(name).read_text().count("\n") for name in glob.glob(f"{prefix}*"))

    def close(self) -> None:
        for name in glob.glob(str(self.folder / "*")):
            Path(name).unlink()
        self.folder.rmdir()


class Spark:
    """Spark ``local[2]`` (``dpplug.adapters.spark.local_context``) on an RDD of the rows in 2
    partitions, cached and counted before the first round; the output is counted."""

    clock = staticmethod(tree_cpu_seconds)

    def __init__(self, rows: Rows) -> None:
        from dpplug.adapters.spark import local_context

        self.context = local_context("dpplug-benchmark", cores=2)
        self.rdd = self.context.parallelize(rows.as_tuples(), 2).cache()
        self.rdd.count()

    def run(self, what: str, ours: bool, l0: int, linf: int) -> int:
        import pipeline_dp

        out = build(what, ours, pipeline_dp.SparkRDDBackend(self.context), self.rdd, l0, linf)
        return int(out.count())

    def close(self) -> None:
        self.context.stop()


def end_to_end(
    what: str, backends: dict[str, Any], rounds: int, sizes: dict[str, int], l0: int, linf: int
) -> None:
    """Sections 2 and 3: *what* on each backend, PipelineDP's engine and dpplug's interleaved."""
    number = 2 if what == "select" else 3
    target = TARGET_SELECT if what == "select" else TARGET_AGGREGATE
    call = "select_partitions" if what == "select" else "aggregate (COUNT, PRIVACY_ID_COUNT)"
    table = Table(
        title=f"{number}. {call} end to end, ℓ₀ = {l0}"
        + (f", ℓ∞ = {linf}" if what == "aggregate" else "")
        + f": CPU seconds, median of {rounds} interleaved rounds"
    )
    for column in ("backend", "rows", "PipelineDP", "dpplug", "released", "PipelineDP / dpplug"):
        table.add_column(column, justify="left" if column == "backend" else "right")
    for name, backend in backends.items():
        console.print(f"[dim]section {number}, {name}: {load_average()}[/dim]")
        released: dict[bool, int] = {}

        def one(ours: bool, backend: Any = backend, released: dict[bool, int] = released) -> None:
            released[ours] = backend.run(what, ours, l0, linf)

        for ours in (False, True):  # warm up both: imports, the plugins' tables, Spark's JIT
            backend.run(what, ours, l0, linf)
        times = interleaved(
            {"PipelineDP": partial(one, False), "dpplug": partial(one, True)},
            rounds,
            clock=backend.clock,
        )
        table.add_row(
            name,
            f"{sizes[name]:,}",
            f"{np.median(times['PipelineDP']):.2f}",
            f"{np.median(times['dpplug']):.2f}",
            f"{released[False]:,} / {released[True]:,}",
            ratio_text(times["PipelineDP"], times["dpplug"]),
        )
        headline(
            BENCH,
            f"PipelineDP {call.split(' ')[0]} / dpplug, end to end, {name}",
            median_ratio(times["PipelineDP"], times["dpplug"]),
            target,
        )
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller data (about 2 minutes)")
    parser.add_argument("--rows", type=int, default=10**6)
    parser.add_argument("--partitions", type=int, default=10**5)
    parser.add_argument("--beam-rows", type=int, default=2 * 10**5)
    parser.add_argument("--spark-rows", type=int, default=10**6)
    parser.add_argument("--max-touch", type=int, default=10)
    parser.add_argument("--l0", type=int, default=4)
    parser.add_argument("--linf", type=int, default=2)
    parser.add_argument("--decider-partitions", type=int, default=10**6)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--seed", type=int, default=0, help="seed of the data only")
    add_headlines_option(parser)
    args = parser.parse_args()
    if args.quick:
        args.rows, args.beam_rows, args.spark_rows = 10**5, 3 * 10**4, 10**5
        args.decider_partitions = 2 * 10**5

    console.print(
        f"PipelineDP {version('pipeline-dp')}, python-dp {version('python-dp')}, Apache Beam "
        f"{version('apache-beam')}, pyspark {version('pyspark')}; ε = {EPSILON}, δ = {DELTA}, "
        f"Naive accountant. {load_average()}"
    )
    decider(args.decider_partitions, args.rounds, args.seed)

    sizes = {"local": args.rows, "beam": args.beam_rows, "spark": args.spark_rows}
    makers = {"local": Local, "beam": Beam, "spark": Spark}
    backends: dict[str, Any] = {}
    try:
        for name in args.backends:
            rows = zipf_rows(sizes[name], args.partitions, args.max_touch, args.seed)
            console.print(f"{name}: {rows.describe()}")
            backends[name] = makers[name](rows)
        for what in ("select", "aggregate"):
            end_to_end(what, backends, args.rounds, sizes, args.l0, args.linf)
    finally:
        for backend in backends.values():
            backend.close()
    console.print(f"[dim]done: {load_average()}[/dim]")
    write_headlines(args.headlines)


if __name__ == "__main__":
    main()
