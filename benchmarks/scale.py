"""dpplug's PipelineDP engine at the sizes users move to Spark for: rows per CPU-second, memory,
shuffles and partitions released against PipelineDP's own strategies, and central releases.

Spark ``local[2]`` (``dpplug.adapters.spark.local_context``), and Beam's DirectRunner (in memory)
at a size it can take. The data (``synthetic.zipf_rows``): ``--rows`` (unit, partition) rows
for each size given, over ``--partitions`` Zipf-ranked partitions, each unit touching 1 to
``--max-touch`` of them; Spark builds them where it runs, in chunks of ``--chunk`` rows each
generated from the seed and the chunk's number (nothing passes through the driver), caches
and counts them before the runs; every pipeline runs once, untimed, on 10^4 rows first (Spark's
JIT, its Python workers and their imports are then warm for every engine alike). Every engine
gets ``NaiveBudgetAccountant(ε = 1, δ = 1e-5)``.

1. **select_partitions**, ℓ₀ = ``--l0``: dpplug's engine with
   ``partition_selection("optimal-partition-selection")`` against PipelineDP's engine with its
   ``TRUNCATED_GEOMETRIC``, ``LAPLACE_THRESHOLDING`` and ``GAUSSIAN_THRESHOLDING`` strategies.
2. **aggregate** COUNT and PRIVACY_ID_COUNT (ℓ₀, ℓ∞ = ``--linf``): dpplug's engine
   (``count_noise=sampler("discrete-laplace")``, the optimal selector) against PipelineDP's
   (LAPLACE noise, ``TRUNCATED_GEOMETRIC``).
3. **Central release**: ``engine.release(col, central_release("stability-histogram",
   universe="range:0:P−1", n=rows))``: one row per unit kept, rows counted per label by the
   backend, and only the nonempty bins, (label, count) pairs, gathered where the private step
   runs; the driver receives the release. The driver's peak memory against n shows whether
   anything of size n reaches it; the central step (the releaser on the nonempty bins) is
   timed alone on the same bins, against their number.
4. **Beam**: section 1's dpplug and ``TRUNCATED_GEOMETRIC`` on ``--beam-rows`` rows.

Per run: CPU seconds of this process and every process below it (``timing.tree_cpu_seconds``:
the driver, Spark's JVM, its Python workers), wall seconds, rows per CPU-second (rows per second
per core busy), the peak resident memory of the driver's Python, of the JVM (driver and
executor in local mode) and of the largest Python worker (``VmHWM``, reset before each run
through ``/proc/PID/clear_refs``), the shuffles in the output's lineage, the bytes the run's
shuffles wrote (files Spark wrote under its local directory during the run), and the
partitions released. Sections 1, 2 and 4 run ``--rounds`` interleaved rounds (each round runs
every engine once, in order, so a change of the machine's load falls on all of them alike); the
tables show each engine's run of median CPU time and the ratios are medians of the paired
ratios of CPU time. The load average is printed with each size.

Run from the repository root (Linux: ``/proc``; about 25 minutes at 10^6 and 10^7 rows on 2
cores; ``--quick``: 10^5 rows, a few minutes)::

    python benchmarks/scale.py [--quick] [--rows N …] [--partitions P] [--max-touch T]
        [--l0 L] [--linf L] [--beam-rows N] [--rounds R] [--memory 6g] [--headlines FILE]

What a cluster needs is in docs/pipelinedp.md ("Running on a cluster").
"""

from __future__ import annotations

import argparse
import functools
import glob
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from rich.table import Table
from synthetic import zipf_rows
from timing import (
    add_headlines_option,
    console,
    cpu_seconds,
    headline,
    load_average,
    median_ratio,
    tree_cpu_seconds,
    write_headlines,
)

import dpplug

EPSILON, DELTA = 1.0, 1e-5
BENCH = "scale"
#: Rows of the untimed run of every pipeline before the first size.
WARM_UP_ROWS = 10_000
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Run:
    """What one run cost and released."""

    label: str
    cpu: float
    wall: float
    rows: int
    released: int
    driver_mib: float
    jvm_mib: float
    worker_mib: float
    shuffles: int
    shuffle_mib: float

    @property
    def rows_per_core(self) -> float:
        return self.rows / self.cpu


# --------------------------------------------------------------------------- processes


def _processes() -> dict[int, tuple[int, str]]:
    """pid → (parent, name) of every process."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                    raw = f.read()
            except OSError:
                continue
            name = raw[raw.index("(") + 1 : raw.rindex(")")]
            found[int(entry)] = (int(raw.rsplit(")", 1)[1].split()[1]), name)
    return found


def _below(pid: int) -> list[int]:
    """*pid* and every process below it."""
    processes = _processes()
    mine = {pid}
    while below := {p for p, (parent, _) in processes.items() if parent in mine} - mine:
        mine |= below
    return sorted(mine)


def _peak_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _reset_peaks() -> None:
    """Each process's peak resident memory set back to its current one (Linux ≥ 4.0)."""
    for pid in _below(os.getpid()):
        try:
            with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as f:
                f.write("5")
        except OSError:
            pass


def _peaks() -> tuple[float, float, float]:
    """Peak MiB of the driver's Python, of the JVM and of the largest Python worker."""
    processes = _processes()
    jvm = worker = 0.0
    for pid in _below(os.getpid()):
        if pid == os.getpid():
            continue
        name = processes.get(pid, (0, ""))[1]
        if name == "java":
            jvm = max(jvm, _peak_mib(pid))
        elif name.startswith("python"):
            worker = max(worker, _peak_mib(pid))
    return _peak_mib(os.getpid()), jvm, worker


# --------------------------------------------------------------------------- Spark


class SparkRun:
    """A Spark context whose shuffle files go to a folder of their own, and the cached rows."""

    def __init__(self, memory: str) -> None:
        from dpplug.adapters.spark import local_context

        self.local = Path(tempfile.mkdtemp(prefix="dpplug-scale-"))
        os.environ["SPARK_LOCAL_DIRS"] = str(self.local)
        self.context = local_context(
            "dpplug-scale",
            cores=2,
            settings={"spark.driver.memory": memory, "spark.local.dir": str(self.local)},
        )
        self.context.addPyFile(str(HERE / "synthetic.py"))

    def rows(self, size: int, partitions: int, max_touch: int, chunk: int, seed: int) -> Any:
        chunks = max(1, -(-size // chunk))
        make = functools.partial(_chunk_rows, size, chunk, partitions, max_touch, seed)
        rdd = self.context.parallelize(range(chunks), max(2, chunks)).flatMap(make)
        rdd = rdd.cache()
        rdd.count()
        return rdd

    def shuffle_files(self) -> dict[str, int]:
        found = {}
        for name in glob.glob(str(self.local / "**" / "shuffle_*.data"), recursive=True):
            try:
                found[name] = os.path.getsize(name)
            except OSError:
                continue
        return found

    def measure(self, label: str, rows: int, build: Callable[[], Any]) -> Run:
        """One run: *build* makes the output RDD (budgets computed), which is then counted."""
        before = self.shuffle_files()
        _reset_peaks()
        cpu, wall = tree_cpu_seconds(), time.perf_counter()
        out = build()
        released = int(out.count())
        cpu, wall = tree_cpu_seconds() - cpu, time.perf_counter() - wall
        driver, jvm, worker = _peaks()
        written = sum(size for name, size in self.shuffle_files().items() if name not in before)
        lineage = out.toDebugString() or b""
        shuffles = lineage.count(b"ShuffledRDD")
        return Run(label, cpu, wall, rows, released, driver, jvm, worker, shuffles, written / 2**20)

    def close(self) -> None:
        self.context.stop()
        for name in sorted(glob.glob(str(self.local / "**"), recursive=True), reverse=True):
            path = Path(name)
            if path.is_file():
                path.unlink()
            elif path.is_dir():
                path.rmdir()


def _chunk_rows(
    size: int, chunk: int, partitions: int, max_touch: int, seed: int, index: int
) -> Iterator[tuple[int, int]]:
    count = min(chunk, size - index * chunk)
    return iter(zipf_rows(count, partitions, max_touch, seed, chunk=index).as_tuples())


# --------------------------------------------------------------------------- the pipelines


def _extractors() -> Any:
    import operator

    import pipeline_dp

    return pipeline_dp.DataExtractors(
        privacy_id_extractor=operator.itemgetter(0),
        partition_extractor=operator.itemgetter(1),
        value_extractor=lambda row: 1,
    )


def _engine(ours: bool, backend: Any) -> tuple[Any, Any]:
    import pipeline_dp

    from dpplug.adapters import pipelinedp as adapter

    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=DELTA)
    if ours:
        noise = adapter.sampler("discrete-laplace")
        return adapter.DPEngine(accountant, backend, count_noise=noise), accountant
    return pipeline_dp.DPEngine(accountant, backend), accountant


def strategies() -> dict[str, tuple[bool, Any]]:
    """label → (dpplug's engine?, strategy)."""
    import pipeline_dp

    from dpplug.adapters import pipelinedp as adapter

    native = pipeline_dp.PartitionSelectionStrategy
    return {
        "dpplug optimal-partition-selection": (
            True,
            adapter.partition_selection("optimal-partition-selection"),
        ),
        "PipelineDP TRUNCATED_GEOMETRIC": (False, native.TRUNCATED_GEOMETRIC),
        "PipelineDP LAPLACE_THRESHOLDING": (False, native.LAPLACE_THRESHOLDING),
        "PipelineDP GAUSSIAN_THRESHOLDING": (False, native.GAUSSIAN_THRESHOLDING),
    }


def select(backend: Any, col: Any, ours: bool, strategy: Any, l0: int) -> Any:
    import pipeline_dp

    engine, accountant = _engine(ours, backend)
    params = pipeline_dp.SelectPartitionsParams(
        max_partitions_contributed=l0, partition_selection_strategy=strategy
    )
    out = engine.select_partitions(col, params, _extractors())
    accountant.compute_budgets()
    return out


def aggregate(backend: Any, col: Any, ours: bool, l0: int, linf: int) -> Any:
    import pipeline_dp

    engine, accountant = _engine(ours, backend)
    strategy = strategies()[
        "dpplug optimal-partition-selection" if ours else "PipelineDP TRUNCATED_GEOMETRIC"
    ][1]
    params = pipeline_dp.AggregateParams(
        metrics=[pipeline_dp.Metrics.COUNT, pipeline_dp.Metrics.PRIVACY_ID_COUNT],
        max_partitions_contributed=l0,
        max_contributions_per_partition=linf,
        noise_kind=pipeline_dp.NoiseKind.LAPLACE,
        partition_selection_strategy=strategy,
    )
    out = engine.aggregate(col, params, _extractors())
    accountant.compute_budgets()
    return out


def central(backend: Any, col: Any, partitions: int, units: int) -> Any:
    from dpplug.adapters import pipelinedp as adapter

    engine, accountant = _engine(True, backend)
    spec = adapter.central_release(
        "stability-histogram", universe=f"range:0:{partitions - 1}", n=units
    )
    out = engine.release(col, spec, _extractors())
    accountant.compute_budgets()
    return out


# --------------------------------------------------------------------------- the sections


def _table(title: str, runs: list[Run]) -> Table:
    table = Table(title=title)
    columns = (
        "run",
        "CPU s",
        "wall s",
        "rows / CPU-s",
        "driver MiB",
        "JVM MiB",
        "worker MiB",
        "shuffles",
        "shuffled MiB",
        "released",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "run" else "right")
    for run in runs:
        table.add_row(
            run.label,
            f"{run.cpu:,.1f}",
            f"{run.wall:,.1f}",
            f"{run.rows_per_core:,.0f}",
            f"{run.driver_mib:,.0f}",
            f"{run.jvm_mib:,.0f}",
            f"{run.worker_mib:,.0f}",
            str(run.shuffles),
            f"{run.shuffle_mib:,.1f}",
            f"{run.released:,}",
        )
    return table


def interleaved_runs(
    spark: SparkRun, size: int, calls: dict[str, Callable[[], Any]], rounds: int
) -> dict[str, list[Run]]:
    """*rounds* rounds, each measuring every call once in order (a change of the machine's load
    falls on all of them alike): label → its runs."""
    found: dict[str, list[Run]] = {label: [] for label in calls}
    for _ in range(rounds):
        for label, build in calls.items():
            found[label].append(spark.measure(label, size, build))
    return found


def median_run(runs: list[Run]) -> Run:
    """The run of median CPU time (the lower middle one of an even number)."""
    return sorted(runs, key=lambda run: run.cpu)[(len(runs) - 1) // 2]


def _ratio(numerator: list[Run], denominator: list[Run]) -> float:
    """The median of the paired CPU ratios, round by round."""
    return median_ratio([run.cpu for run in numerator], [run.cpu for run in denominator])


def warm_up(spark: SparkRun, backend: Any, args: argparse.Namespace) -> None:
    """Every pipeline once on :data:`WARM_UP_ROWS` rows, untimed: Spark's JIT, its Python
    workers and their imports (PipelineDP, python-dp, dpplug and its plugins' tables) are then
    ready for every engine alike."""
    rdd = spark.rows(WARM_UP_ROWS, args.partitions, args.max_touch, args.chunk, args.seed + 1)
    for ours, strategy in strategies().values():
        select(backend, rdd, ours, strategy, args.l0).count()
    for ours in (True, False):
        aggregate(backend, rdd, ours, args.l0, args.linf).count()
    central(backend, rdd, args.partitions, WARM_UP_ROWS).count()
    rdd.unpersist()


def spark_sections(args: argparse.Namespace, spark: SparkRun) -> None:
    import pipeline_dp

    backend = pipeline_dp.SparkRDDBackend(spark.context)
    central_rows: list[tuple[int, Run, int, float]] = []
    warm_up(spark, backend, args)
    for size in args.rows:
        rdd = spark.rows(size, args.partitions, args.max_touch, args.chunk, args.seed)
        console.print(
            f"[bold]{size:,} rows[/bold] over {args.partitions:,} partition ranks, units "
            f"touching 1–{args.max_touch}, {rdd.getNumPartitions()} RDD partitions. "
            f"{load_average()}"
        )
        calls = {
            label: functools.partial(select, backend, rdd, ours, strategy, args.l0)
            for label, (ours, strategy) in strategies().items()
        }
        found = interleaved_runs(spark, size, calls, args.rounds)
        runs = [median_run(found[label]) for label in calls]
        console.print(
            _table(
                f"1. select_partitions, {size:,} rows, ℓ₀ = {args.l0} (median of {args.rounds} "
                "interleaved rounds)",
                runs,
            )
        )
        ours_label, native_label = list(calls)[:2]
        headline(
            BENCH,
            f"select_partitions rows / CPU-s on Spark local[2], {size:.0e} rows",
            runs[0].rows_per_core,
            unit="",
        )
        headline(
            BENCH,
            f"PipelineDP TRUNCATED_GEOMETRIC / dpplug select_partitions CPU, {size:.0e} rows",
            _ratio(found[native_label], found[ours_label]),
        )
        calls = {
            label: functools.partial(aggregate, backend, rdd, ours, args.l0, args.linf)
            for label, ours in (
                ("dpplug (discrete-laplace, optimal)", True),
                ("PipelineDP (LAPLACE, TRUNCATED_GEOMETRIC)", False),
            )
        }
        found = interleaved_runs(spark, size, calls, args.rounds)
        runs = [median_run(found[label]) for label in calls]
        console.print(
            _table(
                f"2. aggregate COUNT, PRIVACY_ID_COUNT, {size:,} rows, ℓ₀ = {args.l0}, "
                f"ℓ∞ = {args.linf} (median of {args.rounds} interleaved rounds)",
                runs,
            )
        )
        ours_label, native_label = list(calls)
        headline(
            BENCH,
            f"PipelineDP / dpplug aggregate CPU, {size:.0e} rows",
            _ratio(found[native_label], found[ours_label]),
        )
        units = int(rdd.map(lambda row: row[0]).distinct().count())
        run = spark.measure(
            "dpplug stability-histogram",
            size,
            functools.partial(central, backend, rdd, args.partitions, units),
        )
        bins, seconds = _central_step(rdd, args.partitions, units)
        central_rows.append((units, run, bins, seconds))
        rdd.unpersist()
    table = Table(
        title="3. Central release (stability-histogram): the driver's memory and the central "
        "step against n"
    )
    for column in (
        "units n",
        "nonempty bins",
        "CPU s",
        "driver MiB",
        "JVM MiB",
        "worker MiB",
        "central step s",
        "µs per bin",
    ):
        table.add_column(column, justify="right")
    for units, run, bins, seconds in central_rows:
        table.add_row(
            f"{units:,}",
            f"{bins:,}",
            f"{run.cpu:,.1f}",
            f"{run.driver_mib:,.0f}",
            f"{run.jvm_mib:,.0f}",
            f"{run.worker_mib:,.0f}",
            f"{seconds:.3f}",
            f"{seconds / max(bins, 1) * 1e6:,.2f}",
        )
    console.print(table)
    units, run, bins, _ = central_rows[-1]
    headline(BENCH, f"central release driver peak MiB at n = {units:.0e}", run.driver_mib, unit="")


def _central_step(rdd: Any, partitions: int, units: int) -> tuple[int, float]:
    """The nonempty bins of one row per unit (the first row of each), and the CPU seconds of the
    releaser on them alone (what the central step computes, here on the driver)."""
    firsts = rdd.map(lambda row: (row[0], row[1])).reduceByKey(lambda a, b: a)
    bins = dict(firsts.map(lambda kv: (kv[1], 1)).reduceByKey(lambda a, b: a + b).collect())
    releaser = dpplug.create(
        "stability-histogram",
        universe=f"range:0:{partitions - 1}",
        n=units,
        epsilon=EPSILON,
        delta=DELTA,
    )
    start = cpu_seconds()
    releaser.release(bins)
    return len(bins), cpu_seconds() - start


def beam_section(args: argparse.Namespace) -> None:
    import apache_beam as beam
    import pipeline_dp
    from apache_beam.options.pipeline_options import PipelineOptions

    data = zipf_rows(args.beam_rows, args.partitions, args.max_touch, args.seed).as_tuples()
    chunks = [data[i : i + 10_000] for i in range(0, len(data), 10_000)]
    found: dict[str, list[Run]] = {label: [] for label in list(strategies())[:2]}
    folder = Path(tempfile.mkdtemp(prefix="dpplug-scale-beam-"))
    console.print(f"[bold]Beam DirectRunner, {args.beam_rows:,} rows[/bold]. {load_average()}")
    for _ in range(args.rounds):
        for label in found:
            ours, strategy = strategies()[label]
            prefix = folder / label.split()[0]
            _reset_peaks()
            cpu, wall = cpu_seconds(), time.perf_counter()
            options = PipelineOptions(
                flags=[], runner="DirectRunner", direct_running_mode="in_memory"
            )
            with beam.Pipeline(options=options) as pipeline:
                col = (
                    pipeline | "Chunks" >> beam.Create(chunks) | "Rows" >> beam.FlatMap(lambda c: c)
                )
                out = select(pipeline_dp.BeamBackend(), col, ours, strategy, args.l0)
                _ = out | "Text" >> beam.Map(repr) | "Write" >> beam.io.WriteToText(str(prefix))
            cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
            written = glob.glob(f"{prefix}*")
            released = sum(Path(name).read_text().count("\n") for name in written)
            driver, _, _ = _peaks()
            found[label].append(Run(label, cpu, wall, args.beam_rows, released, driver, 0, 0, 0, 0))
            for name in written:
                Path(name).unlink()
    folder.rmdir()
    runs = [median_run(found[label]) for label in found]
    console.print(
        _table(
            f"4. select_partitions on Beam's DirectRunner, {args.beam_rows:,} rows (median of "
            f"{args.rounds} interleaved rounds)",
            runs,
        )
    )
    ours_label, native_label = list(found)
    headline(
        BENCH,
        f"PipelineDP / dpplug select_partitions CPU on Beam, {args.beam_rows:.0e} rows",
        _ratio(found[native_label], found[ours_label]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^5 rows (a few minutes)")
    parser.add_argument("--rows", type=int, nargs="+", default=[10**6, 10**7])
    parser.add_argument("--partitions", type=int, default=10**6)
    parser.add_argument("--max-touch", type=int, default=100)
    parser.add_argument("--l0", type=int, default=10)
    parser.add_argument("--linf", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=250_000, help="rows built per Spark task")
    parser.add_argument("--beam-rows", type=int, default=3 * 10**5)
    parser.add_argument("--memory", default="6g", help="spark.driver.memory (local mode)")
    parser.add_argument(
        "--rounds", type=int, default=1, help="interleaved rounds of sections 1, 2 and 4"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the data only")
    add_headlines_option(parser)
    args = parser.parse_args()
    if args.quick:
        args.rows, args.partitions, args.beam_rows = [10**5], 10**5, 2 * 10**4
    console.print(
        f"dpplug {version('dpplug')}, PipelineDP {version('pipeline-dp')}, pyspark "
        f"{version('pyspark')}, Apache Beam {version('apache-beam')}; ε = {EPSILON}, "
        f"δ = {DELTA}, Naive accountant. {load_average()}"
    )
    spark = SparkRun(args.memory)
    try:
        spark_sections(args, spark)
    finally:
        spark.close()
    if args.beam_rows:
        beam_section(args)
    console.print(f"[dim]done: {load_average()}[/dim]")
    write_headlines(args.headlines)


if __name__ == "__main__":
    main()
