"""Benchmark dpplug's query releasers (Blum & Roth 2013): error against the number of queries,
SMW's time per answer against |X| and m, and the projection's release time and memory.

Inputs come from generators seeded with ``--seed``; the seed only builds data and queries, and no
mechanism uses it: every release draws from ``dpplug.SystemSource()``. ε = 1 and δ = 10⁻⁶ for one
row added or removed, β = 1/20, grid W = 2^16, m = 10 unless stated. Data: n rows over 1000
random 16-byte labels with Zipf(1.1) frequencies, passed as counts. Queries: m labels each, half
from the data's labels and half fresh ones, weights uniform in {1/4, …, 1}, fixed before any
release.

1. **Error against k** (k = 10 … 10⁵, n = 10⁴ and 10⁶). For ``independent-laplace``,
   ``sparse-multiplicative-weights``, ``sparse-projection`` (Laplace and Gaussian noise at
   T = 2^14 and at the largest T, 2^20) and a ``stability-histogram`` release answering the
   queries (``dpplug.HistogramQueries``: α = m·a/n for every m-sparse query, whatever k) the
   *declared* simultaneous α (the proven bound at β,
   in answer units; SMW refuses parameters without a non-trivial one) and, for k ≤ 10⁴, the
   *measured* largest error of one release over the k queries (T = 2^14 for the projection).
   For each mechanism, the crossover: the smallest k from which its declared α stays below
   independent Laplace's. A plot of both goes to ``--plot``.
2. **SMW time per answer** against |X| ∈ {2^8 (``range:0:255``), 2^32, unbounded bytes (no
   universe)} at m = 10, and against m ∈ {1, 4, 16, 64, 256} without a universe (n = 10⁶, k large
   enough): CPU microseconds per answer over ``--answers`` answers (updates included), and the
   growth in m step by step (the cost is a curve: flat for small m, linear beyond), with the
   least-squares exponent beside it. The anchor is independent Laplace answering the same
   queries, and OpenDP's native ``make_laplace`` noising the same scaled answers (dpplug's own
   noise, its exact discrete Laplace, against OpenDP's; the answer's computation excluded from
   OpenDP's time).
3. **Projection release** CPU time (the least of ``--repeats``) and peak memory (tracemalloc)
   against T ∈ {2^8, 2^10, 2^12, 2^14} at n = 10⁴ and against n ∈ {10³, 10⁴, 10⁵} at
   T = 2^12, with the number of distinct labels the hash was evaluated on, and growth exponents.

``--quick`` shrinks every grid (a smoke test). Run from the repository root (about 10 minutes)::

    python benchmarks/sparse_queries.py [--quick] [--plot FILE] [--answers A] [--repeats R]
        [--seed S] [--headlines FILE]
"""

from __future__ import annotations

import argparse
import math
import random
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from rich.table import Table
from timing import (
    add_headlines_option,
    console,
    cpu_seconds,
    headline,
    output_file,
    timed,
    write_headlines,
)

import dpplug

EPSILON, DELTA, M = 1, Fraction(1, 10**6), 10
KS = (10, 100, 1000, 10**4, 10**5)
MEASURED_KS = (10, 100, 1000, 10**4)
NS = (10**4, 10**6)
PROJECTION_T = 1 << 14
LARGEST_T = 1 << 20
LABELS = 1000


def zipf_counts(n: int, rng: random.Random) -> tuple[dict[bytes, int], list[bytes]]:
    """n rows over LABELS random 16-byte labels, Zipf(1.1), as counts (at most n rows)."""
    pool = [rng.randbytes(16) for _ in range(LABELS)]
    weights = np.array([1 / (i + 1) ** 1.1 for i in range(LABELS)])
    counts = np.floor(n * weights / weights.sum()).astype(np.int64)
    return {x: int(c) for x, c in zip(pool, counts, strict=True) if c}, pool


def zipf_over(labels: Sequence[Any], n: int) -> dict[Any, int]:
    """Counts on *labels* proportional to Zipf(1.1), about n/2 rows in all."""
    weights = np.array([1 / (i + 1) ** 1.1 for i in range(len(labels))])
    counts = np.maximum(1, np.floor(n / 2 * weights / weights.sum())).astype(np.int64)
    return {x: int(c) for x, c in zip(labels, counts, strict=True)}


def make_queries(k: int, m: int, pool: list[bytes], rng: random.Random) -> list[dict[Any, Any]]:
    fresh = [rng.randbytes(16) for _ in range(1000)]
    return [
        {
            x: Fraction(rng.randint(1, 4), 4)
            for x in rng.sample(pool, m // 2) + rng.sample(fresh, m - m // 2)
        }
        for _ in range(k)
    ]


def growth_exponent(sizes: Sequence[float], values: Sequence[float]) -> float:
    slope, _ = np.polyfit(np.log(sizes), np.log(values), 1)
    return float(slope)


@dataclass(frozen=True)
class Contender:
    label: str
    name: str
    params: dict[str, Any]


@dataclass(frozen=True)
class HistogramAnswerer:
    """A histogram releaser used as a query releaser: one release answers every M-sparse query
    within α = M·a/n (``dpplug.HistogramQueries``)."""

    releaser: Any

    @property
    def n(self) -> int:
        return int(self.releaser.n)

    @property
    def alpha(self) -> float:
        a = self.releaser.accuracy(self.releaser.params["beta"]).simultaneous.a
        return M * a / self.n

    def start(self, data: dict[bytes, int], source: Any) -> Any:
        return dpplug.HistogramQueries(self.releaser.release(data, source), n=self.n, sparsity=M)


def contenders(dimension: int) -> list[Contender]:
    projection = {"universe": "bytes:16", "dimension": dimension}
    return [
        Contender("independent Laplace", "independent-laplace", {}),
        Contender("stability histogram's answers", "stability-histogram", {}),
        Contender("SMW", "sparse-multiplicative-weights", {}),
        Contender(
            f"projection, Laplace, T=2^{dimension.bit_length() - 1}",
            "sparse-projection",
            projection,
        ),
        Contender(
            f"projection, Gaussian, T=2^{dimension.bit_length() - 1}",
            "sparse-projection",
            {**projection, "noise": "gaussian"},
        ),
    ]


def create(contender: Contender, n: int, k: int) -> Any | None:
    """The mechanism, or None when it refuses (no non-trivial accuracy)."""
    if contender.name == "stability-histogram":  # its α does not depend on k
        releaser = dpplug.create(
            contender.name, universe="bytes:16", n=n, epsilon=EPSILON, delta=DELTA
        )
        return HistogramAnswerer(releaser)
    try:
        return dpplug.create(
            contender.name,
            n=n,
            epsilon=EPSILON,
            delta=DELTA,
            max_queries=k,
            sparsity=M,
            **contender.params,
        )
    except dpplug.BadParameter:
        return None


def declared_alpha(mechanism: Any | None) -> float:
    if mechanism is None:
        return math.nan
    if isinstance(mechanism, HistogramAnswerer):
        return mechanism.alpha
    scale = mechanism.n * mechanism.workload.grid
    return mechanism.accuracy(mechanism.beta).simultaneous.a / scale


def measured_error(mechanism: Any, data: dict[bytes, int], queries: list[Any]) -> float:
    release = mechanism.start(data, dpplug.SystemSource())
    answers = release.answers(queries)
    truths = [sum(w * data.get(x, 0) for x, w in q.items()) / mechanism.n for q in queries]
    return float(max(abs(a - t) for a, t in zip(answers, truths, strict=True)))


def crossover(ks: Sequence[int], mine: Sequence[float], baseline: Sequence[float]) -> str:
    """The smallest k from which *mine* stays below *baseline*."""
    for i, k in enumerate(ks):
        if all(not math.isnan(a) and a < b for a, b in zip(mine[i:], baseline[i:], strict=True)):
            return f"{k:,}"
    return "none in range"


def section_errors(args: argparse.Namespace) -> dict[str, Any]:
    ks, ns = (KS[:3], (10**4,)) if args.quick else (KS, NS)
    measured_ks = [k for k in MEASURED_KS if k in ks]
    rng = random.Random(args.seed)
    plot: dict[str, Any] = {}
    for n in ns:
        data, pool = zipf_counts(n, rng)
        queries = make_queries(max(measured_ks), M, pool, rng)
        rows: dict[str, dict[str, list[float]]] = {}
        fast, best = contenders(PROJECTION_T), contenders(LARGEST_T)
        for contender in [*fast, *best[3:]]:
            declared, measured = [], []
            for k in ks:
                mechanism = create(contender, n, k)
                declared.append(declared_alpha(mechanism))
                if k in measured_ks and contender in fast:
                    measured.append(
                        math.nan
                        if mechanism is None
                        else measured_error(mechanism, data, queries[:k])
                    )
            rows[contender.label] = {"declared": declared, "measured": measured}
        table = Table(title=f"1. Largest error over k queries, n = {n:,} (declared α | measured)")
        table.add_column("mechanism")
        for k in ks:
            table.add_column(f"k={k:,}", justify="right")
        table.add_column("beats independent from k", justify="right")
        baseline = rows["independent Laplace"]["declared"]
        for label, row in rows.items():
            cells = []
            for i, k in enumerate(ks):
                declared = row["declared"][i]
                cell = "refused" if math.isnan(declared) else f"{declared:.3g}"
                if k in measured_ks and row["measured"]:
                    value = row["measured"][measured_ks.index(k)]
                    cell += " | –" if math.isnan(value) else f" | {value:.3g}"
                cells.append(cell)
            first = crossover(ks, row["declared"], baseline)
            table.add_row(label, *cells, "—" if label == "independent Laplace" else first)
        console.print(table)
        plot[n] = (ks, measured_ks, rows)
    return plot


def draw_plot(plot: dict[str, Any], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(plot), figsize=(6.5 * len(plot), 4.8), squeeze=False)
    for axis, (n, (ks, measured_ks, rows)) in zip(axes[0], plot.items(), strict=True):
        for index, (label, row) in enumerate(rows.items()):
            color = f"C{index}"
            axis.loglog(ks, row["declared"], "-o", color=color, label=f"{label} (declared)")
            if row["measured"]:
                axis.loglog(
                    measured_ks, row["measured"], "--x", color=color, label=f"{label} (measured)"
                )
        axis.set_title(f"n = {n:,}, m = {M}, ε = {EPSILON}, δ = 1e-6")
        axis.set_xlabel("k (queries)")
        axis.set_ylabel("largest error over the k answers")
        axis.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    console.print(f"plot written to {path}")


def time_answers(release: Any, queries: list[Any]) -> float:
    """CPU µs per answer."""
    start = cpu_seconds()
    for query in queries:
        release.answer(query)
    return (cpu_seconds() - start) / len(queries) * 1e6


def opendp_anchor(queries: list[Any], data: dict[Any, int], scale: float) -> float:
    """OpenDP's make_laplace on the scaled answers (i64, its exact discrete Laplace), µs each."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    laplace = dp.m.make_laplace(dp.atom_domain(T="i64"), dp.absolute_distance(T="i64"), scale)
    scaled = [int(sum(int(w * 4) * data.get(x, 0) for x, w in q.items())) for q in queries]
    start = cpu_seconds()
    for value in scaled:
        laplace(value)
    return (cpu_seconds() - start) / len(scaled) * 1e6


def section_smw_time(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed + 1)
    n, answers = 10**6, args.answers
    universes: list[tuple[str, str | None, Any]] = [
        ("2^8 (range:0:255)", "range:0:255", lambda: rng.randrange(256)),
        ("2^32 (range:0:2^32−1)", f"range:0:{(1 << 32) - 1}", lambda: rng.getrandbits(32)),
        ("unbounded bytes (no universe)", None, lambda: rng.randbytes(16)),
    ]
    table = Table(title=f"2a. Time per answer against |X| (n = {n:,}, m = {M}, µs)")
    for column in ("universe", "SMW", "updates", "independent Laplace", "OpenDP make_laplace"):
        table.add_column(column, justify="right")
    for label, universe, draw in universes:
        data = zipf_over(list(dict.fromkeys(draw() for _ in range(200))), n)
        queries = [
            {
                x: Fraction(rng.randint(1, 4), 4)
                for x in rng.sample(list(data), M // 2) + [draw() for _ in range(M - M // 2)]
            }
            for _ in range(answers)
        ]
        common = {"n": n, "epsilon": EPSILON, "max_queries": answers, "sparsity": M, "grid": 4}
        if universe is not None:
            common["universe"] = universe
        smw = dpplug.create("sparse-multiplicative-weights", **common, delta=DELTA)
        session = smw.start(data, dpplug.SystemSource())
        smw_us = time_answers(session, queries)
        independent = dpplug.create("independent-laplace", **common)
        ind_us = time_answers(independent.start(data, dpplug.SystemSource()), queries)
        anchor = opendp_anchor(queries, data, float(independent.noise_scale))
        table.add_row(
            label, f"{smw_us:,.0f}", f"{session.updates}", f"{ind_us:,.0f}", f"{anchor:,.1f}"
        )
        if universe is None:
            headline(
                "sparse_queries",
                f"SMW µs per answer, m = {M}, no universe (CPU)",
                smw_us,
                unit="µs",
            )
    console.print(table)
    ms = (1, 4, 16) if args.quick else (1, 4, 16, 64, 256)
    times = []
    table = Table(title=f"2b. SMW time per answer against m (no universe, n = {n:,})")
    for column in ("m", "µs per answer", "updates", "per label"):
        table.add_column(column, justify="right")
    labels = [rng.randbytes(16) for _ in range(2000)]
    data = zipf_over(labels, n)
    for m in ms:
        smw = dpplug.create(
            "sparse-multiplicative-weights",
            n=n,
            epsilon=EPSILON,
            delta=DELTA,
            max_queries=answers,
            sparsity=m,
            grid=4,
        )
        queries = [
            {
                x: 1
                for x in rng.sample(labels, (m + 1) // 2)
                + [rng.randbytes(16) for _ in range(m // 2)]
            }
            for _ in range(answers)
        ]
        session = smw.start(data, dpplug.SystemSource())
        us = time_answers(session, queries)
        times.append(us)
        table.add_row(f"{m}", f"{us:,.0f}", f"{session.updates}", f"{us / m:,.1f}")
    console.print(table)
    steps = ", ".join(
        f"{a} → {b}: m^{growth_exponent((a, b), (x, y)):.2f}"
        for a, b, x, y in zip(ms, ms[1:], times, times[1:], strict=False)
    )
    console.print(
        f"time per answer against m, step by step: {steps} (least-squares slope over all: "
        f"m^{growth_exponent(ms, times):.2f}; the curve, not one exponent, is the result)"
    )


def section_projection(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed + 2)
    dims = (1 << 8, 1 << 10) if args.quick else (1 << 8, 1 << 10, 1 << 12, 1 << 14)
    ns = (10**3, 10**4) if args.quick else (10**3, 10**4, 10**5)

    def run(n: int, dimension: int) -> tuple[float, float, int]:
        labels = [rng.randbytes(16) for _ in range(max(LABELS, n // 10))]
        weights = [1 / (i + 1) ** 1.1 for i in range(len(labels))]
        data: dict[bytes, int] = {}
        for x in rng.choices(labels, weights, k=n):
            data[x] = data.get(x, 0) + 1
        mechanism = dpplug.create(
            "sparse-projection",
            universe="bytes:16",
            n=n,
            epsilon=EPSILON,
            delta=DELTA,
            max_queries=1000,
            sparsity=M,
            dimension=dimension,
        )
        timing = timed(lambda: mechanism.release(data, dpplug.SystemSource()), args.repeats)
        tracemalloc.start()
        mechanism.release(data, dpplug.SystemSource())
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return timing.cpu, peak / 2**20, len(data)

    table = Table(title="3. Projection release against T and n (Laplace noise)")
    for column in ("n", "T", "distinct labels", "release s", "peak MiB"):
        table.add_column(column, justify="right")
    by_t = []
    for dimension in dims:
        seconds, mib, distinct = run(10**4 if not args.quick else 10**3, dimension)
        by_t.append(seconds)
        table.add_row(
            f"{10**4 if not args.quick else 10**3:,}",
            f"{dimension:,}",
            f"{distinct:,}",
            f"{seconds:.2f}",
            f"{mib:.1f}",
        )
    by_n, distincts = [], []
    for n in ns:
        seconds, mib, distinct = run(n, 1 << 12 if not args.quick else 1 << 8)
        by_n.append(seconds)
        distincts.append(distinct)
        table.add_row(
            f"{n:,}",
            f"{(1 << 12) if not args.quick else 1 << 8:,}",
            f"{distinct:,}",
            f"{seconds:.2f}",
            f"{mib:.1f}",
        )
    console.print(table)
    label = (
        f"projection release at n = {10**4 if not args.quick else 10**3:,}, T = {dims[-1]:,} (CPU)"
    )
    headline("sparse_queries", label, by_t[-1], unit="s")
    console.print(
        f"growth exponent in T: {growth_exponent(dims, by_t):.2f}; in distinct labels: "
        f"{growth_exponent(distincts, by_n):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small grids (a smoke test)")
    parser.add_argument(
        "--plot",
        default=output_file("sparse_queries_error.png"),
        help="where the error plot goes (PNG)",
    )
    parser.add_argument(
        "--answers", type=int, default=2000, help="answers timed per SMW session (section 2)"
    )
    parser.add_argument(
        "--repeats", type=int, default=2, help="projection releases timed, best kept (section 3)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the data and queries only")
    add_headlines_option(parser)
    args = parser.parse_args()
    dpplug.registry()  # loaded before anything is timed
    draw_plot(section_errors(args), args.plot)
    section_smw_time(args)
    section_projection(args)
    write_headlines(args.headlines)


if __name__ == "__main__":
    main()
