"""Benchmark dpplug's anonymized-histogram releasers: PrivHist (Suresh 2019) against the
sorted-histogram baseline (Hay et al. 2010), utility, estimators and time.

Inputs come from a numpy Generator seeded with ``--seed``; the seed only builds the inputs, and
no mechanism uses it: every release draws from ``dpplug.SystemSource()`` (the OS CSPRNG, the
default). Times are ``time.perf_counter``, best of ``--repeats`` runs.

Four data sets, each a multinomial sample of n items (the counts' anonymized histogram is the
input, given as prevalences):

- ``zipf``: Zipf(1.1), p_i ∝ i^{−1.1} over k = 10⁶ symbols;
- ``geometric``: p_i ∝ (1 − 10⁻⁴)^i over k = 2·10⁵ symbols;
- ``staircase``: p_i ∝ i over k = 10³ symbols (counts in even steps, few labels);
- ``words``: the English word frequencies of the ``wordfreq`` package (its "large" list, about
  3.2·10⁵ words, shipped inside the package: no download), scaled to n.

1. **Sorted-ℓ₁ error** (Suresh's utility measure) of ``privhist`` (its defaults: ε₁ = ε/20,
   ε₂ = ε₃, PRIVHIST-HIGHPRIVACY up to ε = 1/8), ``privhist`` with the paper's rules (thirds,
   HIGHPRIVACY for ε ≤ 1: the defaults before), ``privhist`` with N free (not private: the
   total's noise at ε = 16 and 99% of ε on the rest, a measured lower bound on what PrivHist's
   representation reaches when the total costs nothing), and ``sorted-histogram`` with length
   d = the data set's k (its public domain size) and, where k ≤ 10⁴, d = 10k (a public bound ten
   times loose; a release costs O(d) exact steps), averaged over ``--releases`` releases
   (``--baseline-releases`` for the baseline, which costs O(d)), for
   n ∈ {10³, …, 10⁸} and ε ∈ {0.1, 0.5, 1, 2, 5}; the ratio to Aldà–Simon's lower bound
   √(n/ε); the growth exponent (least-squares slope of log error against log n over
   10⁴ … 10⁸), and whether PrivHist is below the baseline. ``--plot`` saves the log-log plot.
2. **Estimators** at n = 10⁶, ε = 1: entropy (nats) and support size from a PrivHist release
   (plug-in with the released N) against the true plug-in values, mean absolute error over the
   releases; against the Laplace mechanism on the plug-in estimator itself, whose expected
   absolute error is exactly its scale Δ/ε (n taken as public, which favours it): Δ = 1 for the
   support size, and Δ = 2(1 + ln n)/n for the plug-in entropy under one item added or removed.
3. **Time**: ``release_prevalences`` of PrivHist on the Zipf histogram of n = 10⁹ items (the
   paper's sub-linear claim: O(√n) work, not O(n)); and a PrivHist release through PipelineDP on
   Spark ``local[2]`` from ``--spark-rows`` rows (one row per privacy unit, Zipf labels), end to
   end (counts per label, counts of counts and the release). **3b**: PrivHist against the
   sorted-histogram baseline (d = 10⁶, the Zipf symbols) on the Zipf histogram of 10¹² items
   (10⁹ with ``--quick``), CPU time of ``--repeats`` interleaved rounds, the median of the
   paired ratios (issue 32's target: no slower than the baseline), with the load average.

Run from the repository root (about 10 minutes)::

    python benchmarks/anonymized_histograms.py [--quick] [--releases R] [--baseline-releases R]
        [--repeats R] [--spark-rows N] [--plot PATH] [--seed S] [--headlines FILE]

``--quick`` stops at n = 10⁶ and skips Spark (a smoke test).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from importlib.metadata import version
from typing import Any

import numpy as np
import numpy.typing as npt
from rich.table import Table
from timing import (
    add_headlines_option,
    console,
    headline,
    interleaved,
    load_average,
    median_ratio,
    output_file,
    ratio_text,
    timed,
    write_headlines,
)

import dpplug

EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
#: The baseline is also run at d = 10k for data sets with at most this many symbols k.
LOOSE_UP_TO = 10**4
#: PrivHist with the paper's rules: thirds, PRIVHIST-HIGHPRIVACY for ε ≤ 1.
PAPER = {"total_share": Fraction(1, 3), "smoothing_share": Fraction(1, 3), "smoothing_up_to": 1}
SIZES = tuple(10**e for e in range(3, 9))
FIT_FROM = 10**4
Weights = npt.NDArray[np.float64]


def zipf_weights() -> Weights:
    weights = np.arange(1, 10**6 + 1, dtype=np.float64) ** -1.1
    return weights / weights.sum()


def geometric_weights() -> Weights:
    weights = (1 - 1e-4) ** np.arange(2 * 10**5, dtype=np.float64)
    return weights / weights.sum()


def staircase_weights() -> Weights:
    weights = np.arange(1, 10**3 + 1, dtype=np.float64)
    return weights / weights.sum()


def word_weights() -> Weights:
    import wordfreq

    frequencies = np.array(list(wordfreq.get_frequency_dict("en", wordlist="large").values()))
    return frequencies / frequencies.sum()


DATASETS: dict[str, Callable[[], Weights]] = {
    "zipf": zipf_weights,
    "geometric": geometric_weights,
    "staircase": staircase_weights,
    "words": word_weights,
}


def total_free(epsilon: float) -> Any:
    """PrivHist whose released total is (all but surely) the true one: its block-1 noise is at
    ε = 16 and the other blocks get 99% of ε. Not private; a measured lower bound on the error
    of PrivHist's representation (T split, fake counts, cumulative prevalences)."""
    mechanism = dpplug.create("privhist", epsilon=epsilon, total_share=Fraction(1, 100))
    mechanism.total_sampler = dpplug.create("discrete-laplace", epsilon=16)
    return mechanism


def prevalences(n: int, weights: Weights, rng: np.random.Generator) -> dict[int, int]:
    """The anonymized histogram of a multinomial sample of n items, as prevalences."""
    counts = rng.multinomial(n, weights)
    values, labels = np.unique(counts[counts > 0], return_counts=True)
    return {int(r): int(phi) for r, phi in zip(values, labels, strict=True)}


def mean_error(mechanism: Any, data: dict[int, int], releases: int) -> float:
    errors = [
        dpplug.sorted_l1(data, mechanism.release_prevalences(data).prevalences)
        for _ in range(releases)
    ]
    return float(np.mean(errors))


def slope(sizes: list[int], errors: list[float]) -> str:
    """The least-squares slope of log error against log n ("-" with fewer than two positive
    errors)."""
    points = [(n, e) for n, e in zip(sizes, errors, strict=True) if e > 0]
    if len(points) < 2:
        return "-"
    x, y = np.log([n for n, _ in points]), np.log([e for _, e in points])
    return f"{float(np.polyfit(x, y, 1)[0]):.3f}"


def utility(args: argparse.Namespace, rng: np.random.Generator) -> dict[str, Any]:
    """Section 1: the error grid, its tables, and the data for the plot."""
    sizes = [n for n in SIZES if n <= args.max_n]
    results: dict[str, Any] = {}
    for name, build in DATASETS.items():
        weights = build()
        privhist = {eps: dpplug.create("privhist", epsilon=eps) for eps in EPSILONS}
        paper = {eps: dpplug.create("privhist", epsilon=eps, **PAPER) for eps in EPSILONS}
        free = {eps: total_free(eps) for eps in EPSILONS}
        baseline = {
            eps: dpplug.create("sorted-histogram", epsilon=eps, length=weights.size)
            for eps in EPSILONS
        }
        loose = {
            eps: dpplug.create("sorted-histogram", epsilon=eps, length=10 * weights.size)
            for eps in EPSILONS
            if weights.size <= LOOSE_UP_TO
        }
        table = Table(
            title=f"1. Mean sorted-ℓ₁ error, {name} (k = {weights.size:,}; "
            f"{args.releases} / {args.baseline_releases} releases)"
        )
        columns = (
            "n",
            "labels",
            "ε",
            "privhist",
            "paper's",
            "N free",
            "sorted d=k",
            "d=10k",
            "ratio",
        )
        for column in (*columns, "÷ √(n/ε)"):
            table.add_column(column, justify="right")
        grid: dict[float, dict[str, list[float]]] = {
            eps: {"privhist": [], "sorted-histogram": []} for eps in EPSILONS
        }
        for n in sizes:
            data = prevalences(n, weights, rng)
            for eps in EPSILONS:
                ours = mean_error(privhist[eps], data, args.releases)
                rules = mean_error(paper[eps], data, args.releases)
                bound = mean_error(free[eps], data, args.releases)
                theirs = mean_error(baseline[eps], data, args.baseline_releases)
                looser = (
                    f"{mean_error(loose[eps], data, args.baseline_releases):,.0f}"
                    if eps in loose
                    else "—"
                )
                grid[eps]["privhist"].append(ours)
                grid[eps]["sorted-histogram"].append(theirs)
                table.add_row(
                    f"{n:.0e}",
                    f"{sum(data.values()):,}",
                    f"{eps:g}",
                    f"{ours:,.0f}",
                    f"{rules:,.0f}",
                    f"{bound:,.0f}",
                    f"{theirs:,.0f}",
                    looser,
                    f"{ours / theirs:.2f}" if theirs else "∞",
                    f"{ours / math.sqrt(n / eps):.2f}",
                )
        console.print(table)
        results[name] = grid
    targets = Table(
        title=f"1. Growth exponents over n = {FIT_FROM:.0e} … {sizes[-1]:.0e} and the targets"
    )
    for column in ("data", "ε", "privhist", "sorted-histogram", "≤ 0.55", "below baseline"):
        targets.add_column(column, justify="right")
    fitted = [i for i, n in enumerate(sizes) if n >= FIT_FROM]
    for name, grid in results.items():
        for eps in EPSILONS:
            ours = [grid[eps]["privhist"][i] for i in fitted]
            theirs = [grid[eps]["sorted-histogram"][i] for i in fitted]
            fit_sizes = [sizes[i] for i in fitted]
            below = all(a < b for a, b in zip(ours, theirs, strict=True))
            exponent = slope(fit_sizes, ours)
            targets.add_row(
                name,
                f"{eps:g}",
                exponent,
                slope(fit_sizes, theirs),
                "yes" if exponent != "-" and float(exponent) <= 0.55 else "no",
                ("yes" if below else "no") + ("" if eps <= 1 else " (ε > 1: no target)"),
            )
    console.print(targets)
    zipf = results["zipf"][1.0]
    label = f"privhist / sorted-histogram sorted-ℓ₁ error, Zipf, n = {sizes[-1]:.0e}, ε = 1"
    headline("anonymized_histograms", label, zipf["privhist"][-1] / zipf["sorted-histogram"][-1])
    return {"sizes": sizes, "results": results}


def plot(path: str, data: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = np.array(data["sizes"], dtype=np.float64)
    fig, axes = plt.subplots(1, len(data["results"]), figsize=(20, 5), sharey=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (name, grid) in zip(axes, data["results"].items(), strict=True):
        for colour, eps in zip(colours, EPSILONS, strict=False):
            shown = {  # a mean error of 0 (nothing wrong in any release) has no logarithm
                key: np.where(np.array(errors) > 0, errors, np.nan)
                for key, errors in grid[eps].items()
            }
            ax.loglog(
                sizes, shown["privhist"], "-o", color=colour, ms=3, label=f"privhist ε={eps:g}"
            )
            ax.loglog(sizes, shown["sorted-histogram"], "--", color=colour, alpha=0.7)
        ax.loglog(sizes, np.sqrt(sizes), ":", color="black", label="√n")
        ax.set_title(f"{name} (dashed: sorted-histogram)")
        ax.set_xlabel("items n")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("mean sorted-ℓ₁ error")
    axes[0].legend(fontsize=8)
    fig.suptitle("dpplug anonymized histograms: PrivHist (solid) vs sorted histogram (dashed)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    console.print(f"Plot saved to {path}")


def entropy(data: dict[int, int], total: int) -> float:
    return sum(phi * (r / total) * math.log(total / r) for r, phi in data.items())


def estimators(args: argparse.Namespace, rng: np.random.Generator) -> None:
    """Section 2: entropy and support size at n = 10⁶, ε = 1."""
    n, eps = 10**6, 1.0
    table = Table(title=f"2. Estimators at n = {n:.0e}, ε = {eps:g} ({args.releases} releases)")
    for column in ("data", "property", "true plug-in", "privhist error", "Laplace on plug-in"):
        table.add_column(column, justify="right")
    mechanism = dpplug.create("privhist", epsilon=eps)
    for name in ("zipf", "words"):
        data = prevalences(n, DATASETS[name](), rng)
        releases = [mechanism.release_prevalences(data) for _ in range(args.releases)]
        truth = {"entropy (nats)": entropy(data, n), "support size": float(sum(data.values()))}
        ours = {
            "entropy (nats)": [r.entropy().value for r in releases],
            "support size": [r.support_size().value for r in releases],
        }
        laplace = {"entropy (nats)": 2 * (1 + math.log(n)) / n / eps, "support size": 1 / eps}
        for prop, value in truth.items():
            error = float(np.mean([abs(v - value) for v in ours[prop]]))
            table.add_row(name, prop, f"{value:,.4f}", f"{error:.4g}", f"{laplace[prop]:.4g}")
    console.print(table)


def timings(args: argparse.Namespace, rng: np.random.Generator) -> None:
    """Section 3: a release from the prevalences of 10⁹ items, and through Spark."""
    data = prevalences(10**9, zipf_weights(), rng)
    table = Table(title=f"3. privhist release_prevalences, n = 1e9 ({len(data):,} pairs)")
    for column in ("ε", "best (s)", "first (s)", "CPU (s)"):
        table.add_column(column, justify="right")
    for eps in (0.1, 1.0, 2.0):
        mechanism = dpplug.create("privhist", epsilon=eps)
        timing = timed(partial(mechanism.release_prevalences, data), args.repeats)
        table.add_row(f"{eps:g}", f"{timing.best:.3f}", f"{timing.first:.3f}", f"{timing.cpu:.3f}")
        if eps == 1.0:
            label = "privhist release_prevalences at n = 10^9, ε = 1 (CPU)"
            headline("anonymized_histograms", label, timing.cpu, unit="s")
    console.print(table)
    against_baseline(args, rng)
    if args.spark_rows:
        spark(args.spark_rows, rng)


def against_baseline(args: argparse.Namespace, rng: np.random.Generator) -> None:
    """Section 3b: PrivHist and the sorted-histogram baseline (d = the 10⁶ Zipf symbols) on the
    prevalences of 10¹² items (10⁹ with ``--quick``), CPU time of interleaved rounds."""
    weights = zipf_weights()
    items = 10**9 if args.quick else 10**12
    data = prevalences(items, weights, rng)
    privhist = dpplug.create("privhist", epsilon=1)
    baseline = dpplug.create("sorted-histogram", epsilon=1, length=weights.size)
    console.print(f"[dim]before section 3b: {load_average()}[/dim]")
    rounds = interleaved(
        {
            "privhist": partial(privhist.release_prevalences, data),
            "sorted-histogram": partial(baseline.release_prevalences, data),
        },
        args.repeats,
    )
    ratio = ratio_text(rounds["sorted-histogram"], rounds["privhist"])
    console.print(
        f"3b. Zipf, n = {items:.0e} items ({len(data):,} pairs), ε = 1, CPU seconds, median of "
        f"{args.repeats} interleaved rounds: privhist {np.median(rounds['privhist']):.3f}, "
        f"sorted-histogram (d = {weights.size:,}) {np.median(rounds['sorted-histogram']):.3f}; "
        f"baseline / privhist {ratio}. {load_average()}"
    )
    headline(
        "anonymized_histograms",
        f"sorted-histogram / privhist release time, Zipf n = {items:.0e}, ε = 1 (CPU)",
        median_ratio(rounds["sorted-histogram"], rounds["privhist"]),
        target=None if args.quick else 1.0,  # issue 32's target is at 10¹² items
    )


def _zipf_row(bounds: npt.NDArray[np.int64], unit: int) -> tuple[int, int]:
    return unit, int(np.searchsorted(bounds, unit, side="right"))


def spark(rows: int, rng: np.random.Generator) -> None:
    import operator

    import pipeline_dp
    import pyspark

    from dpplug.adapters.pipelinedp import DPEngine, central_release

    conf = (
        pyspark.SparkConf()
        .setMaster("local[2]")
        .setAppName("dpplug-anonymized-benchmark")
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.pyspark.python", sys.executable)
        .set("spark.pyspark.driver.python", sys.executable)
        .set("spark.driver.memory", "4g")
    )
    context = pyspark.SparkContext(conf=conf)
    context.setLogLevel("ERROR")
    try:
        bounds = np.cumsum(rng.multinomial(rows, zipf_weights()))
        col = context.range(rows, numSlices=8).map(partial(_zipf_row, bounds))
        accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1, total_delta=1e-6)
        engine = DPEngine(accountant, pipeline_dp.SparkRDDBackend(context))
        extractors = pipeline_dp.DataExtractors(
            privacy_id_extractor=operator.itemgetter(0),
            partition_extractor=operator.itemgetter(1),
            value_extractor=lambda row: 1,
        )
        start = time.perf_counter()
        released = engine.release(col, central_release("privhist"), extractors)
        accountant.compute_budgets()
        (histogram,) = released.collect()
        elapsed = time.perf_counter() - start
        console.print(
            f"3. PipelineDP on Spark local[2], {rows:.0e} rows (one per unit, Zipf labels): "
            f"{elapsed:.1f} s end to end; released N = {histogram.total:,}, "
            f"{len(histogram.prevalences):,} distinct counts"
        )
    finally:
        context.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="n ≤ 10^6 and no Spark")
    parser.add_argument("--releases", type=int, default=4, help="PrivHist releases per point")
    parser.add_argument("--baseline-releases", type=int, default=2, help="baseline releases")
    parser.add_argument("--repeats", type=int, default=5, help="runs per timing (best is kept)")
    parser.add_argument("--spark-rows", type=int, default=10**7, help="rows for Spark (0: skip)")
    parser.add_argument(
        "--plot", default=output_file("anonymized_histograms.png"), help="PNG of section 1"
    )
    parser.add_argument("--seed", type=int, default=20240601, help="seed of the inputs only")
    add_headlines_option(parser)
    args = parser.parse_args()
    if min(args.releases, args.baseline_releases, args.repeats) < 1 or args.spark_rows < 0:
        parser.error("--releases, --baseline-releases and --repeats must be positive")
    args.max_n = 10**6 if args.quick else SIZES[-1]
    if args.quick:
        args.spark_rows = 0
    dpplug.registry()
    console.print(
        f"[bold]dpplug anonymized-histogram benchmark[/bold]: dpplug {version('dpplug')}, "
        f"wordfreq {version('wordfreq')}, PipelineDP {version('pipeline-dp')}; inputs seeded "
        f"with {args.seed}, releases from the OS CSPRNG"
    )
    rng = np.random.default_rng(args.seed)  # builds the inputs only
    grid = utility(args, rng)
    plot(args.plot, grid)
    estimators(args, rng)
    timings(args, rng)
    write_headlines(args.headlines)


if __name__ == "__main__":
    main()
