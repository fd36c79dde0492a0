"""Benchmark dpplug's histogram releasers: sparse and compact over |X| = 2^64, dense against OpenDP.

Everything runs in one process. Inputs come from a numpy Generator seeded with ``--seed``; the
seed only builds the inputs, and no mechanism uses it: every release draws from dpplug's default
source (``dpplug.randomness.default_source(None)``, the CSPRNG a release uses when given no
source; its class is printed). ε = 1 for replacing one row throughout. The plugin registry is
loaded once before anything is timed. Times are ``time.perf_counter``, best of ``--repeats``
runs unless stated, and next to them the process's CPU time (``time.process_time``, least over
the runs), which other processes on a shared machine move much less: the growth exponents and
the headlines use it. On a shared machine compare the ratios within one run.

1. **Release over |X| = 2^64** (universe ``range:0:18446744073709551615``) for
   ``pure-sparse-histogram`` and ``compact-histogram`` with their default sampler ``fastsample``,
   at n = 10^2, 10^3, 10^4, 10^5 (``--large-repeats`` runs from 10^5 on), and 10^6 with
   ``--large`` (``--large-releasers`` picks which; minutes each). The data has n rows on n
   *distinct* labels (every nonempty bin has count 1), drawn uniformly without replacement from
   [0, 2^64), passed as a list of rows. Construction (``dpplug.create``: the sampler, δ and the
   order-statistics precision, or the scan of M(0, U) and the Proth prime) is timed apart from
   ``release``; inside the release, validating the rows (``true_counts``), the sampler's noise
   for the n nonempty bins (``sampler.sample``, drawn again on its own) and computing the
   attached accuracy are timed on their own too. The growth exponent of the release time is the
   least-squares slope of log t against log n over n = 10^3 … 10^5, and step by step.

2. **CompactHistogram evaluation** at each n of section 1, on a release of that section:
   ``count(label)`` one label at a time (Horner's rule by rectangular splitting in exact
   double-precision limbs, then the empty-bin law M₀) on ``--single-labels`` labels, and
   ``counts(labels)`` on ``--batch`` labels at once (multipoint evaluation; 10^4 by default).
   Half the labels are data labels (as many as there are), the rest fresh uniform labels. The
   first calls, which build the coefficients' limb matrix (``count``) and the flint polynomial
   (``counts``), are reported apart.

3. **BasicHistogram against OpenDP** on |X| = 10^6 bins (``range:0:999999``), n = ``--basic-n``
   rows (10^6 by default) with labels uniform in the universe, given to dpplug as a mapping
   label → count of the nonempty bins. dpplug ``basic-histogram`` with ``fixedpoint-geometric``
   (its default) and ``fastsample`` (``--basic-fastsample-repeats`` runs; about 22 µs per bin)
   against OpenDP's native ``dp.m.make_geometric`` on ``vector_domain(atom_domain(T=i64))`` /
   ``l1_distance(T=i64)`` with scale 2/ε, called on the dense count vector as a Python list
   (its privacy map at d_in = 2, one replaced row, is printed). dpplug is timed end to end
   (``release``) and for its noise alone (the sampler on the dense numpy vector); the ndarray →
   list conversion OpenDP needs is timed apart, not in its row.

4. **blanket-sparse-histogram over ``bytes:8``** (a little more than 2^64 labels) at n = 10^4, 10^5
   and 10^6 (n rows on n distinct uniform 8-byte labels, given as a mapping label → 1), against
   ``pure-sparse-histogram`` (up to 10^5; 10^6 with ``--large``, about 80 s a release) and
   OpenDP's ``make_alp_queryable`` (scale ε, so its map at one row added or removed is ε; its
   input a mapping of the labels' hex strings to 1). CPU time (this process and its children,
   ``timing.cpu_seconds``) in ``--blanket-rounds`` interleaved rounds, each running every
   mechanism once; the table shows the medians and the medians of the paired ratios, and the
   machine's load average is printed before and after. Also the declared simultaneous error of
   both dpplug releasers at β = 1/20 and their ratio. The growth exponent is the least-squares
   slope of the median CPU time over n = 10^4 … 10^6, and step by step. Issue 31's targets:
   release at 10^6 under 5 s, growth at most n^1.05, no slower than ALP at 10^5, error within
   1.5× of pure-sparse's. ``--blanket-only`` runs this section alone.

``--quick`` runs only n = 10^2, 10^3 and 10^4 and a 10^4-bin dense universe (a smoke test), and
section 4 at n = 10^3 and 10^4.

Headlines (``--headlines``, for ``run_all.py``): each sparse releaser's release time at its
largest n below 10^6 and at 10^6 when run, its growth exponent over n = 10^3 … (largest), and
compact's ``count()`` and ``counts()`` per label at the largest n. The targets (issue 16) apply at
n = 10^5: release ≤ 15 s for both, pure-sparse growth ≤ n^1.3, ``count()`` ≤ 2 ms and
``counts()`` ≤ 100 µs per label on batches of 10^4.

Run from the repository root (a few minutes without ``--large``)::

    python benchmarks/histograms.py [--quick] [--large [--large-releasers NAME …]]
        [--repeats R] [--large-repeats R] [--single-labels K] [--batch K] [--basic-n N]
        [--basic-fastsample-repeats R] [--blanket-rounds R] [--blanket-only] [--seed S]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from importlib.metadata import version
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt
from rich.table import Table
from timing import (
    Timing,
    add_headlines_option,
    console,
    cpu_seconds,
    headline,
    interleaved,
    load_average,
    median_ratio,
    ratio_text,
    timed,
    write_headlines,
)

import dpplug
from dpplug.randomness import default_source

#: OpenDP, imported by :func:`main` (so ``--help`` works without it).
dp: Any = None

Counts = npt.NDArray[np.int64]

EPSILON = 1
HUGE_UNIVERSE = f"range:0:{(1 << 64) - 1}"
SIZES = (10**2, 10**3, 10**4, 10**5)
LARGE_SIZE = 10**6
QUICK_SIZES = (10**2, 10**3, 10**4)
FIT_SIZES = (10**3, 10**4, 10**5)
#: From this n on, release timings use ``--large-repeats`` runs.
BIG = 10**5
SPARSE = ("pure-sparse-histogram", "compact-histogram")
DENSE_BINS = 10**6
#: Issue 16's targets, at n = BIG: release seconds, pure-sparse's growth exponent, count() and
#: counts() µs per label (counts() on batches of at least BATCH_TARGET labels).
TARGET_RELEASE_S = 15
TARGET_GROWTH = 1.3
TARGET_COUNT_US = 2000
TARGET_COUNTS_US = 100
BATCH_TARGET = 10**4
QUICK_DENSE_BINS = 10**4
BLANKET = "blanket-sparse-histogram"
BYTES_UNIVERSE = "bytes:8"
BLANKET_SIZES = (10**4, 10**5, 10**6)
QUICK_BLANKET_SIZES = (10**3, 10**4)
BETA = Fraction(1, 20)
#: Issue 31's targets over bytes:8: release CPU seconds at 10^6, growth exponent over
#: 10^4 … 10^6, ALP / blanket release time at 10^5, blanket / pure-sparse declared error.
TARGET_BLANKET_S = 5.0
TARGET_BLANKET_GROWTH = 1.05
TARGET_ALP_RATIO = 1.0
TARGET_ERROR_RATIO = 1.5


def releaser(name: str, **params: object) -> Any:
    """``dpplug.create`` narrowed to a histogram releaser."""
    mechanism = dpplug.create(name, **params)
    if not isinstance(mechanism, dpplug.HistogramReleaser):
        raise TypeError(f"{name} is a {mechanism.kind}, not a histogram releaser")
    return mechanism


def distinct_labels(rng: np.random.Generator, count: int, size: int) -> list[int]:
    """*count* distinct labels uniform in [0, size), size ≤ 2^64, in random order."""
    found: dict[int, None] = {}
    while len(found) < count:
        draw = rng.integers(0, size - 1, size=count - len(found), dtype=np.uint64, endpoint=True)
        found.update(dict.fromkeys(draw.tolist()))
    return list(found)


def growth_exponent(sizes: Sequence[int], seconds: Sequence[float]) -> float:
    """Least-squares slope of log(seconds) against log(size)."""
    slope, _ = np.polyfit(np.log(sizes), np.log(seconds), 1)
    return float(slope)


@dataclass
class SparseRun:
    """Section 1's timings of one releaser at one n, and the release (for section 2)."""

    name: str
    n: int
    build: Timing
    release: Timing
    validate: Timing
    noise: Timing
    accuracy: Timing
    note: tuple[str, str]
    output: str

    @property
    def result(self) -> Any:
        return self.release.result


def short(name: str) -> str:
    return name.removesuffix("-histogram")


def describe_output(name: str, output: Any) -> str:
    if name == "compact-histogram":
        return f"{len(output.to_bytes()) / 1024:,.1f} KiB"
    return f"{len(output):,} bins"


def describe_releaser(name: str, mechanism: Any) -> str:
    derived = mechanism.derived
    if name == "compact-histogram":
        return f"P: {derived['modulus_bits']} bits (d: {mechanism.sampler.d.bit_length()})"
    return f"k = {derived['delta_bits']:,}, b = {derived['precision_bits']:,}"


def sparse_run(name: str, n: int, rows: list[int], repeats: int, source: Any) -> SparseRun:
    build = timed(partial(releaser, name, universe=HUGE_UNIVERSE, n=n, epsilon=EPSILON), repeats)
    mechanism = build.result
    release = timed(partial(mechanism.release, rows, source), repeats)
    validate = timed(partial(mechanism.true_counts, rows), repeats)
    counts = mechanism.true_counts(rows).counts
    noise = timed(partial(mechanism.sampler.sample, counts, source), repeats)
    # A fresh releaser: the accuracy is cached per β once computed.
    accuracy = timed(
        lambda: releaser(name, universe=HUGE_UNIVERSE, n=n, epsilon=EPSILON).accuracy(
            mechanism.params["beta"]
        ),
        1,
    )
    note = f"{mechanism.guarantee.epsilon:.4f}", describe_releaser(name, mechanism)
    return SparseRun(
        name,
        n,
        build,
        release,
        validate,
        noise,
        accuracy,
        note,
        describe_output(name, release.result),
    )


def sparse_releases(
    plan: dict[str, tuple[int, ...]],
    labels: list[int],
    repeats: int,
    large_repeats: int,
    source: Any,
) -> dict[tuple[str, int], SparseRun]:
    """Section 1, for the sizes *plan* gives each releaser."""
    runs: dict[tuple[str, int], SparseRun] = {}
    for n in sorted({n for sizes in plan.values() for n in sizes}):
        for name in SPARSE:
            if n not in plan[name]:
                continue
            start = time.perf_counter()
            runs[name, n] = sparse_run(
                name, n, labels[:n], large_repeats if n >= BIG else repeats, source
            )
            elapsed = time.perf_counter() - start
            console.print(f"[dim]{name}, n = {n:,}: done in {elapsed:.1f} s[/dim]")

    table = Table(
        title=(
            f"1. Release over |X| = 2^64 ({HUGE_UNIVERSE}), n rows on n distinct uniform labels "
            f"(count 1 each), ε = {EPSILON}, sampler fastsample, {type(source).__name__}, best "
            f"of {repeats} (n ≥ {BIG:,}: {large_repeats})"
        )
    )
    table.add_column("releaser", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("build ms", justify="right")
    table.add_column("1st s", justify="right")
    table.add_column("best s", justify="right")
    table.add_column("CPU s", justify="right")
    table.add_column("µs/row", justify="right")
    table.add_column("validate ms", justify="right")
    table.add_column("noise s", justify="right")
    table.add_column("accur. ms", justify="right")
    table.add_column("ε", justify="right")
    table.add_column("parameters", no_wrap=True)
    table.add_column("output", justify="right", no_wrap=True)
    for name in SPARSE:
        for n in plan[name]:
            run = runs[name, n]
            table.add_row(
                short(name),
                f"{n:,}",
                f"{run.build.best * 1e3:,.2f}",
                f"{run.release.first:,.4f}",
                f"{run.release.best:,.4f}",
                f"{run.release.cpu:,.4f}",
                f"{run.release.best / n * 1e6:,.1f}",
                f"{run.validate.best * 1e3:,.2f}",
                f"{run.noise.best:,.3f}",
                f"{run.accuracy.best * 1e3:,.2f}",
                *run.note,
                run.output,
            )
        table.add_section()
    console.print(table)
    console.print(
        "best s / 1st s = release time, best and first run, CPU s = its least CPU time; build ="
        " dpplug.create(…) (registry already loaded); validate = true_counts(rows), noise = the"
        " sampler's noisy counts for the n nonempty bins and accur. = the (a, β) attached to "
        "the output (once, on a fresh releaser: it is cached), all inside release and timed "
        "again on their own; ε = the achieved guarantee; output = released bins (pure-sparse) "
        "or len(to_bytes()) (compact); δ = 2^-k, pure-sparse's mixing δ, b = its order-"
        "statistics precision; P = compact's Proth prime, sized from the smallest probability "
        "of M(0, U)."
    )

    for name in SPARSE:
        fit = [n for n in FIT_SIZES if n in plan[name]]
        if len(fit) < 2:
            continue
        seconds = [runs[name, n].release.cpu for n in fit]
        exponent = growth_exponent(fit, seconds)
        line = (
            f"{name}: release CPU time ∝ n^{exponent:.2f} "
            f"(least squares on log-log over n = {', '.join(f'{n:,}' for n in fit)})"
        )
        steps = []
        for a, b in pairwise(plan[name]):
            pair = (runs[name, a].release.cpu, runs[name, b].release.cpu)
            steps.append(f"{a:,} → {b:,}: n^{growth_exponent((a, b), pair):.2f}")
        console.print(f"{line}; step by step {', '.join(steps)}")
        target = TARGET_GROWTH if name == SPARSE[0] and fit[-1] == BIG else None
        label = f"{short(name)} release growth, n = {fit[0]:,} … {fit[-1]:,}"
        headline("histograms", label, exponent, target, unit="n^")
    for name in SPARSE:
        for n in (max(n for n in plan[name] if n < LARGE_SIZE), LARGE_SIZE):
            if (name, n) in runs:
                target = TARGET_RELEASE_S if n == BIG else None
                label = f"{short(name)} release at n = {n:,} over 2^64 labels (CPU)"
                headline("histograms", label, runs[name, n].release.cpu, target, unit="s")
    for n in plan[SPARSE[0]]:
        if (SPARSE[1], n) in runs:
            sparse, compact = (runs[name, n].release.best for name in SPARSE)
            console.print(f"n = {n:,}: pure-sparse / compact release time = {sparse / compact:.2f}")
    return runs


@dataclass(frozen=True)
class Evaluation:
    n: int
    first: float
    single: Timing
    batch: Timing
    singles: int
    batched: int


def evaluation_labels(rng: np.random.Generator, data: list[int], count: int) -> list[int]:
    """Half data labels (as many as there are), the rest fresh uniform labels."""
    from_data = data[: min(count // 2, len(data))]
    fresh = rng.integers(
        0, (1 << 64) - 1, size=count - len(from_data), dtype=np.uint64, endpoint=True
    )
    return from_data + fresh.tolist()


def compact_evaluation(
    runs: dict[tuple[str, int], SparseRun],
    sizes: Sequence[int],
    labels: list[int],
    rng: np.random.Generator,
    single_labels: int,
    batch: int,
    repeats: int,
) -> None:
    """Section 2 (``--repeats`` runs at every n: an evaluation takes milliseconds)."""
    results = []
    for n in sizes:
        histogram = runs["compact-histogram", n].result
        single = evaluation_labels(rng, labels[:n], single_labels)
        batched = evaluation_labels(rng, labels[:n], batch)
        start = time.perf_counter()
        histogram.count(single[0])  # builds the limb matrix and the law's cache
        histogram.counts(single[:1])  # builds the flint polynomial
        first = time.perf_counter() - start
        one = timed(lambda h=histogram, ls=single: [h.count(label) for label in ls], repeats)
        many = timed(partial(histogram.counts, batched), repeats)
        results.append(Evaluation(n, first, one, many, len(single), len(batched)))

    table = Table(
        title=(
            f"2. CompactHistogram evaluation (fastsample, |X| = 2^64), best of {repeats}: "
            f"count() on {single_labels:,} labels one by one, counts() on {batch:,} at once"
        )
    )
    table.add_column("n", justify="right")
    table.add_column("first calls ms (build matrix, polynomial)", justify="right")
    table.add_column("count(): µs / label", justify="right")
    table.add_column("CPU µs", justify="right")
    table.add_column("counts(): µs / label", justify="right")
    table.add_column("CPU µs", justify="right")
    table.add_column("count() / counts()", justify="right")
    for e in results:
        per_single = e.single.best / e.singles
        per_batch = e.batch.best / e.batched
        table.add_row(
            f"{e.n:,}",
            f"{e.first * 1e3:,.2f}",
            f"{per_single * 1e6:,.1f}",
            f"{e.single.cpu / e.singles * 1e6:,.1f}",
            f"{per_batch * 1e6:,.1f}",
            f"{e.batch.cpu / e.batched * 1e6:,.1f}",
            f"{per_single / per_batch:.2f}",
        )
    console.print(table)
    last = results[-1]
    at_target = last.n == BIG
    headline(
        "histograms",
        f"compact count() per label at n = {last.n:,} (CPU)",
        last.single.cpu / last.singles * 1e6,
        TARGET_COUNT_US if at_target else None,
        unit="µs",
    )
    headline(
        "histograms",
        f"compact counts() per label, {last.batched:,} labels at n = {last.n:,} (CPU)",
        last.batch.cpu / last.batched * 1e6,
        TARGET_COUNTS_US if at_target and last.batched >= BATCH_TARGET else None,
        unit="µs",
    )
    fit = [e for e in results if e.n in FIT_SIZES]
    ns = [e.n for e in fit]
    if len(fit) < 2:
        return
    console.print(
        f"CPU-time growth over n = {', '.join(f'{n:,}' for n in ns)}: count() per label ∝ "
        f"n^{growth_exponent(ns, [e.single.cpu for e in fit]):.2f}, counts() per label ∝ "
        f"n^{growth_exponent(ns, [e.batch.cpu for e in fit]):.2f}"
    )


def dense_comparison(
    bins: int, rows: int, repeats: int, fastsample_repeats: int, seed: int, system: Any
) -> None:
    """Section 3."""
    rng = np.random.default_rng(seed)  # builds the input only
    counts: Counts = np.bincount(rng.integers(0, bins, size=rows), minlength=bins)
    data = {int(i): int(counts[i]) for i in np.flatnonzero(counts)}
    universe = f"range:0:{bins - 1}"

    table = Table(
        title=(
            f"3. Dense histogram of {rows:,} rows (uniform labels) over |X| = {bins:,} bins "
            f"({len(data):,} nonempty, max count {int(counts.max())}), ε = {EPSILON} for one "
            f"replaced row"
        )
    )
    table.add_column("mechanism")
    table.add_column("what")
    table.add_column("runs", justify="right")
    table.add_column("ns / bin", justify="right")
    table.add_column("× OpenDP", justify="right")
    table.add_column("mean |noise|", justify="right")

    def noise(noisy: npt.ArrayLike) -> str:
        return f"{float(np.mean(np.abs(np.asarray(noisy, dtype=np.int64) - counts))):.3f}"

    measurement = dp.m.make_geometric(
        dp.vector_domain(dp.atom_domain(T=dp.i64)), dp.l1_distance(T=dp.i64), scale=2 / EPSILON
    )
    as_list = timed(counts.tolist, repeats)
    vector: list[int] = as_list.result
    opendp = timed(lambda: measurement(vector), repeats)
    od_epsilon = float(measurement.map(2))

    rows_out: list[tuple[str, str, int, float, str]] = []
    releases: dict[str, Any] = {}
    for sampler, runs in (("fixedpoint-geometric", repeats), ("fastsample", fastsample_repeats)):
        build = timed(
            partial(
                releaser,
                "basic-histogram",
                universe=universe,
                n=rows,
                epsilon=EPSILON,
                sampler=sampler,
            ),
            1,
        )
        mechanism = build.result
        releases[sampler] = partial(mechanism.release, data, system)
        release = timed(releases[sampler], runs)
        epsilon = mechanism.guarantee.epsilon
        rows_out.append(
            (
                f"dpplug basic-histogram, {sampler}",
                f"release(mapping), ε = {epsilon:.4g}, construct {build.best * 1e3:.1f} ms",
                runs,
                release.best,
                noise(release.result.counts),
            )
        )
        if sampler == "fixedpoint-geometric":
            validate = timed(partial(mechanism.true_counts, data), runs)
            sample = timed(partial(mechanism.sampler.sample, counts, system), runs)
            rows_out.append(
                (
                    "  of which: true_counts(mapping)",
                    "validating the mapping label → count",
                    runs,
                    validate.best,
                    "",
                )
            )
            rows_out.append(
                (
                    "  noise alone: sampler.sample(vector)",
                    f"{sampler}, ε/2 per count, dense numpy vector",
                    runs,
                    sample.best,
                    noise(sample.result),
                )
            )
    rows_out.append(
        (
            "OpenDP make_geometric",
            f"scale {2 / EPSILON:g}, map(d_in = 2) = {od_epsilon:.6g}, call on a list",
            repeats,
            opendp.best,
            noise(opendp.result),
        )
    )
    for label, what, runs, seconds, mean_noise in rows_out:
        table.add_row(
            label,
            what,
            str(runs),
            f"{seconds / bins * 1e9:,.1f}",
            f"{seconds / opendp.best:,.2f}",
            mean_noise,
        )
    console.print(table)
    by_label = {row[0]: row[3] for row in rows_out}
    release_fp = by_label["dpplug basic-histogram, fixedpoint-geometric"]
    noise_fp = by_label["  noise alone: sampler.sample(vector)"]
    console.print(
        f"Source: {type(system).__name__}. Not timed above: ndarray → list for OpenDP "
        f"{as_list.best / bins * 1e9:.1f} ns / bin. "
        f"Ratios: OpenDP / dpplug release (fixedpoint-geometric) = {opendp.best / release_fp:.2f}, "
        f"OpenDP / dpplug noise alone = {opendp.best / noise_fp:.2f}, "
        f"dpplug fastsample / fixedpoint-geometric release = "
        f"{by_label['dpplug basic-histogram, fastsample'] / release_fp:.2f}"
    )
    rounds = interleaved(
        {"opendp": partial(measurement, vector), "dpplug": releases["fixedpoint-geometric"]},
        max(repeats, 3),
    )
    console.print(
        f"OpenDP / dpplug release (fixedpoint-geometric), CPU time of interleaved rounds: "
        f"{ratio_text(rounds['opendp'], rounds['dpplug'])}. {load_average()}"
    )
    label = "OpenDP make_geometric / dpplug basic-histogram"
    headline("histograms", label, median_ratio(rounds["opendp"], rounds["dpplug"]))


@dataclass(frozen=True)
class BlanketRun:
    """Section 4 at one n: median CPU seconds per mechanism, median paired ratios, errors."""

    n: int
    build: float
    seconds: dict[str, float]
    ratios: dict[str, float]
    errors: tuple[int, int | None]
    bins: int


def blanket_run(n: int, labels: list[int], rounds: int, with_pure: bool) -> BlanketRun:
    """Section 4 at one n: the three mechanisms in interleaved rounds (module docstring)."""
    data = {label.to_bytes(8, "big"): 1 for label in labels[:n]}
    hex_data = {key.hex(): 1 for key in data}
    start = cpu_seconds()
    blanket = releaser(BLANKET, universe=BYTES_UNIVERSE, n=n, epsilon=EPSILON)
    build = cpu_seconds() - start
    calls: dict[str, Callable[[], Any]] = {"blanket": partial(blanket.release, data)}
    pure = None
    if with_pure:
        pure = releaser("pure-sparse-histogram", universe=BYTES_UNIVERSE, n=n, epsilon=EPSILON)
        calls["pure-sparse"] = partial(pure.release, data)
    alp = dp.m.make_alp_queryable(
        dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=dp.i32)),
        dp.l01inf_distance(dp.absolute_distance(T=dp.i32)),
        scale=float(EPSILON),
        total_limit=n,
        value_limit=n,
    )
    calls["OpenDP ALP"] = partial(alp, hex_data)
    times = interleaved(calls, rounds)
    blanket_a = blanket.accuracy(BETA).simultaneous.a
    pure_a = None if pure is None else pure.accuracy(BETA).simultaneous.a
    return BlanketRun(
        n,
        build,
        {name: float(np.median(seconds)) for name, seconds in times.items()},
        {name: median_ratio(seconds, times["blanket"]) for name, seconds in times.items()},
        (blanket_a, pure_a),
        len(blanket.release(data)),
    )


def blanket_comparison(labels: list[int], sizes: Sequence[int], rounds: int, large: bool) -> None:
    """Section 4 (module docstring)."""
    console.print(f"[dim]before section 4: {load_average()}[/dim]")
    runs = []
    for n in sizes:
        runs.append(blanket_run(n, labels, rounds, with_pure=large or n < LARGE_SIZE))
        console.print(f"[dim]blanket, n = {n:,}: done ({load_average()})[/dim]")
    table = Table(
        title=(
            f"4. {BLANKET} over {BYTES_UNIVERSE}, n rows on n distinct labels, ε = {EPSILON}, "
            f"CPU seconds (process and children), median of {rounds} interleaved rounds"
        )
    )
    table.add_column("n", justify="right")
    table.add_column("build s", justify="right")
    table.add_column("blanket s", justify="right")
    table.add_column("pure-sparse s", justify="right")
    table.add_column("OpenDP ALP s", justify="right")
    table.add_column("ALP / blanket", justify="right")
    table.add_column("pure / blanket", justify="right")
    table.add_column("a blanket", justify="right")
    table.add_column("a pure", justify="right")
    table.add_column("bins", justify="right")
    for run in runs:
        pure_a = run.errors[1]
        table.add_row(
            f"{run.n:,}",
            f"{run.build:.3f}",
            f"{run.seconds['blanket']:.3f}",
            f"{run.seconds['pure-sparse']:.3f}" if "pure-sparse" in run.seconds else "–",
            f"{run.seconds['OpenDP ALP']:.3f}",
            f"{run.ratios['OpenDP ALP']:.2f}",
            f"{run.ratios['pure-sparse']:.1f}" if "pure-sparse" in run.ratios else "–",
            f"{run.errors[0]}",
            "–" if pure_a is None else f"{pure_a}",
            f"{run.bins:,}",
        )
    console.print(table)
    console.print(
        "a = the declared simultaneous error at β = 1/20; bins = labels released (n + k chosen, "
        "k = n, the positive noisy counts shown); ratios are medians of the per-round ratios. "
        f"ALP: scale ε, its map at one row added or removed = ε (add/remove, which the blanket "
        f"guarantee also covers). {load_average()}."
    )
    ns = [run.n for run in runs]
    seconds = [run.seconds["blanket"] for run in runs]
    if len(ns) >= 2:
        exponent = growth_exponent(ns, seconds)
        steps = ", ".join(
            f"{a:,} → {b:,}: n^{growth_exponent((a, b), (x, y)):.2f}"
            for (a, x), (b, y) in pairwise(zip(ns, seconds, strict=True))
        )
        console.print(f"blanket release CPU time ∝ n^{exponent:.2f}; step by step {steps}")
        target = TARGET_BLANKET_GROWTH if (ns[0], ns[-1]) == (10**4, LARGE_SIZE) else None
        label = f"blanket release growth, n = {ns[0]:,} … {ns[-1]:,} over bytes:8 (CPU)"
        headline("histograms", label, exponent, target, unit="n^")
    by_n = {run.n: run for run in runs}
    if LARGE_SIZE in by_n:
        headline(
            "histograms",
            f"blanket release at n = {LARGE_SIZE:,} over bytes:8 (CPU)",
            by_n[LARGE_SIZE].seconds["blanket"],
            TARGET_BLANKET_S,
            unit="s",
        )
    if BIG in by_n:
        run = by_n[BIG]
        headline(
            "histograms",
            f"OpenDP make_alp_queryable / blanket release at n = {BIG:,}",
            run.ratios["OpenDP ALP"],
            TARGET_ALP_RATIO,
        )
        if run.errors[1] is not None:
            headline(
                "histograms",
                f"blanket / pure-sparse declared simultaneous error at n = {BIG:,}",
                run.errors[0] / run.errors[1],
                TARGET_ERROR_RATIO,
                unit="× (lower is better)",
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per timing (best is kept)")
    parser.add_argument(
        "--large", action="store_true", help=f"add n = {LARGE_SIZE:,} to sections 1–2 (minutes)"
    )
    parser.add_argument(
        "--large-repeats", type=int, default=1, help=f"runs per release from n = {BIG:,} on"
    )
    parser.add_argument(
        "--large-releasers",
        nargs="+",
        choices=SPARSE,
        default=SPARSE,
        help=f"the releasers --large runs at n = {LARGE_SIZE:,} (minutes each)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="smallest sizes only (smoke test, a few seconds)"
    )
    parser.add_argument("--single-labels", type=int, default=100, help="labels for count()")
    parser.add_argument("--batch", type=int, default=10**4, help="labels for counts()")
    parser.add_argument(
        "--basic-n", type=int, default=None, help="rows of section 3 (default: |X| bins)"
    )
    parser.add_argument(
        "--basic-fastsample-repeats", type=int, default=1, help="runs of the fastsample release"
    )
    parser.add_argument("--seed", type=int, default=20240601, help="seed of the inputs only")
    parser.add_argument(
        "--blanket-rounds", type=int, default=3, help="interleaved rounds of section 4"
    )
    parser.add_argument("--blanket-only", action="store_true", help="run section 4 only")
    add_headlines_option(parser)
    args = parser.parse_args()
    positive = (
        "repeats",
        "large_repeats",
        "single_labels",
        "batch",
        "basic_fastsample_repeats",
        "blanket_rounds",
    )
    if any(getattr(args, name) < 1 for name in positive) or (
        args.basic_n is not None and args.basic_n < 1
    ):
        parser.error("counts and repeats must be positive")
    if args.quick and args.large:
        parser.error("--quick and --large exclude each other")

    sizes = QUICK_SIZES if args.quick else SIZES
    plan = {
        name: (*sizes, LARGE_SIZE) if args.large and name in args.large_releasers else sizes
        for name in SPARSE
    }
    bins = QUICK_DENSE_BINS if args.quick else DENSE_BINS

    global dp
    import opendp.prelude as dp

    dp.enable_features("contrib")
    start = time.perf_counter()
    dpplug.registry()
    loading = time.perf_counter() - start
    source = default_source(None)  # what a release draws from when given no source
    console.print(
        f"[bold]dpplug histogram benchmark[/bold]: dpplug {version('dpplug')}, OpenDP "
        f"{version('opendp')}, python-flint {version('python-flint')}. One process; "
        f"time.perf_counter; dpplug's default source ({type(source).__name__}); registry loaded "
        f"once before timing ({loading:.2f} s, not counted)."
    )
    input_rng = np.random.default_rng(args.seed)  # builds the inputs only
    blanket_sizes = QUICK_BLANKET_SIZES if args.quick else BLANKET_SIZES
    largest = max(*blanket_sizes, *(max(p) for p in plan.values()))
    labels = distinct_labels(input_rng, largest, 1 << 64)
    if args.blanket_only:
        blanket_comparison(labels, blanket_sizes, args.blanket_rounds, args.large)
        write_headlines(args.headlines)
        return
    runs = sparse_releases(plan, labels, args.repeats, args.large_repeats, source)
    console.print()
    compact_evaluation(
        runs,
        plan["compact-histogram"],
        labels,
        input_rng,
        args.single_labels,
        args.batch,
        args.repeats,
    )
    console.print()
    dense_comparison(
        bins,
        args.basic_n or bins,
        args.repeats,
        args.basic_fastsample_repeats,
        args.seed + 1,
        source,
    )
    console.print()
    blanket_comparison(labels, blanket_sizes, args.blanket_rounds, args.large)
    write_headlines(args.headlines)


if __name__ == "__main__":
    main()
