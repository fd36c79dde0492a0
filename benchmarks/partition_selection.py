"""Benchmark dpplug's partition selectors against python-dp (what PipelineDP calls) and OpenDP.

Everything runs in one process on the same input: ``--partitions`` partitions (10^6 by default)
whose unit counts follow a Zipf law, ``numpy.random.Generator.zipf(a=1.5)`` clipped to
[1, 10^9], drawn once from a generator seeded with ``--seed``. The seed only builds the input; no
mechanism uses it. ε = 1 and δ = 1e-5 for one partition per unit (ℓ₀ = 1) throughout.

1. **Throughput** (nanoseconds per partition): CPU time (``timing.cpu_seconds``) of
   ``--rounds`` interleaved rounds, each running every row once, with the load average printed;
   the median per row and the median of the paired ratios (with their range):

   - dpplug's vectorised ``select`` on the numpy array of counts, drawing from the default source
     (``dpplug.SystemSource``: a ChaCha20 keystream keyed from the OS), for
     ``optimal-partition-selection``,
     ``laplace-thresholding`` and ``gaussian-thresholding`` (exact keep decisions, one 63-bit draw
     per partition) and ``truncated-geometric-thresholding`` (exact big-integer k-TSGD noise per
     partition, releases noisy counts; timed on the first ``--tg-partitions`` partitions if that
     is set, otherwise on all of them). One extra row draws the optimal selector's bits from
     ``dpplug.SeededSource`` (numpy PCG64, *not for real releases*), and two time the random
     bytes alone: ``os.urandom`` and the default source;
   - python-dp 1.1.5's strategies: ``should_keep(n)`` in a Python loop over the counts as a list
     of ints, for ``create_truncated_geometric_partition_strategy`` (the optimal π) and
     ``create_laplace_partition_strategy``, each strategy built once and reused; and the
     truncated geometric as PipelineDP 0.3.1's filter calls it, the strategy built for every
     partition (``pipeline_dp.partition_selection.create_partition_selection_strategy``). The
     ndarray → list conversion is not timed;
   - OpenDP 0.16's ``make_laplace_threshold`` on ``map_domain(atom_domain(T=str),
     atom_domain(T="i64"))`` with ``l01inf_distance(absolute_distance(T="i64"))``, scale 1/ε and
     the smallest integer threshold whose true δ is at most 1e-5 (``anchors.py``: the threshold
     ``opendp_adapter.py`` uses too), called on a dict {partition key (str) → count} built
     before the rounds.

   Ratios are python-dp loop / dpplug (optimal against optimal) and OpenDP / dpplug, against
   the targets of ≥ 30× and ≥ 100×.

2. **Midpoints**: the smallest unit count n with keep probability π(n) ≥ 1/2 (exact rationals) for
   optimal, Laplace and Gaussian selection, ε ∈ {0.1, 0.5, 1, 2}, δ ∈ {1e-5, 1e-10}, ℓ₀ = 1.

3. **ℓ₀ crossover** (Desfontaines et al. §5, Fig. 4): midpoints against ℓ₀ at ε = 1, δ = 1e-5 for
   the optimal selector, which splits (ε, δ) over the ℓ₀ partitions, and Gaussian thresholding,
   calibrated jointly for ℓ₂ sensitivity √ℓ₀ (Gopi et al.), with the first ℓ₀ from which the
   Gaussian keeps half the partitions sooner.

4. **Plot**: π(n) of the three keep-only selectors at ε = 1, δ = 1e-5, linear and log scale,
   saved with matplotlib's Agg backend to ``--plot``.

Run from the repository root (about two minutes on 2 cores; OpenDP, about 17 µs per partition,
dominates)::

    python benchmarks/partition_selection.py [--partitions N] [--rounds R] [--plot PATH]
        [--tg-partitions N] [--seed S] [--headlines FILE]
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import partial
from importlib.metadata import version
from typing import Any

import numpy as np
import numpy.typing as npt
from anchors import opendp_laplace_threshold
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
    write_headlines,
)

import dpplug

Counts = npt.NDArray[np.int64]

EPSILON = Fraction(1)
DELTA = Fraction(1, 10**5)
ZIPF_A = 1.5
MAX_UNITS = 10**9
KEEP_ONLY = ("optimal-partition-selection", "laplace-thresholding", "gaussian-thresholding")
MIDPOINT_EPSILONS = (Fraction(1, 10), Fraction(1, 2), Fraction(1), Fraction(2))
MIDPOINT_DELTAS = (Fraction(1, 10**5), Fraction(1, 10**10))
L0S = (1, 2, 3, 4, 5, 6, 8, 10, 16, 32, 64)
TARGET_PYDP = 30.0
TARGET_OPENDP = 100.0


def selector(name: str, epsilon: Fraction = EPSILON, delta: Fraction = DELTA) -> Any:
    """``dpplug.create`` narrowed to a partition selector."""
    mechanism = dpplug.create(name, epsilon=epsilon, delta=delta)
    if not isinstance(mechanism, dpplug.PartitionSelector):
        raise TypeError(f"{name} is a {mechanism.kind}, not a partition selector")
    return mechanism


def describe(guarantee: Any) -> str:
    """(ε, δ) of a dpplug guarantee as floats."""
    return f"ε = {guarantee.epsilon:.6g}, δ = {float(guarantee.delta):.4g}"


def keep_loop(strategy: Any, counts: list[int]) -> list[bool]:
    """One python-dp ``should_keep`` call per partition, one strategy reused for all."""
    return [strategy.should_keep(n) for n in counts]


def keep_loop_per_partition(make: Callable[[], Any], counts: list[int]) -> list[bool]:
    """What PipelineDP 0.3.1's filter does per partition: build the strategy, then decide."""
    return [make().should_keep(n) for n in counts]


def throughput(counts: Counts, rounds: int, tg_partitions: int | None) -> None:
    """Section 1: ns per partition for dpplug, python-dp's loops and OpenDP."""
    from pipeline_dp import PartitionSelectionStrategy
    from pipeline_dp import partition_selection as pdp_selection
    from pydp.algorithms import partition_selection as pydp_ps

    size = counts.size
    system = dpplug.SystemSource()
    epsilon, delta = float(EPSILON), float(DELTA)
    selectors = {name: selector(name) for name in KEEP_ONLY}
    optimal = selectors["optimal-partition-selection"]
    seeded = dpplug.SeededSource(0)
    tg = selector("truncated-geometric-thresholding")
    tg_counts = counts if tg_partitions is None else counts[:tg_partitions]
    count_list: list[int] = counts.tolist()
    reused = pydp_ps.create_truncated_geometric_partition_strategy(epsilon, delta, 1)
    laplace_reused = pydp_ps.create_laplace_partition_strategy(epsilon, delta, 1)
    geometric = PartitionSelectionStrategy.TRUNCATED_GEOMETRIC
    per_partition = partial(
        pdp_selection.create_partition_selection_strategy, geometric, epsilon, delta, 1
    )
    measurement, threshold = opendp_laplace_threshold(epsilon, delta)
    data = {str(i): n for i, n in enumerate(count_list)}

    rows: dict[str, tuple[str, str, int, Callable[[], Any]]] = {
        name: (
            f"dpplug {name}",
            f"exact, {describe(sel.guarantee)}, default source",
            size,
            partial(sel.select, counts, system),
        )
        for name, sel in selectors.items()
    }
    rows |= {
        "seeded": (
            "dpplug optimal-partition-selection",
            "same, SeededSource (PCG64): not for real releases",
            size,
            partial(optimal.select, counts, seeded),
        ),
        "urandom": (
            "os.urandom(8 bytes × partitions)",
            "the OS CSPRNG alone",
            size,
            partial(os.urandom, 8 * size),
        ),
        "keystream": (
            "default source (8 bytes × partitions)",
            "its ChaCha20 keystream alone",
            size,
            partial(system.random_bytes, 8 * size),
        ),
        "truncated-geometric-thresholding": (
            "dpplug truncated-geometric-thresholding",
            f"exact k-TSGD (k = {tg.k}), noisy counts, {describe(tg.guarantee)}"
            + ("" if tg_counts.size == size else f", first {tg_counts.size:,} partitions"),
            tg_counts.size,
            partial(tg.select, tg_counts, system),
        ),
        "pydp-optimal": (
            "python-dp truncated geometric: should_keep loop",
            "float, one strategy reused",
            size,
            partial(keep_loop, reused, count_list),
        ),
        "pydp-per-partition": (
            "python-dp truncated geometric: should_keep loop",
            "float, one strategy per partition (as PipelineDP's filter)",
            size,
            partial(keep_loop_per_partition, per_partition, count_list),
        ),
        "pydp-laplace": (
            "python-dp Laplace: should_keep loop",
            "float, one strategy reused",
            size,
            partial(keep_loop, laplace_reused, count_list),
        ),
        "opendp": (
            "OpenDP make_laplace_threshold",
            f"exact, scale {1 / epsilon:g}, threshold {threshold} (true δ ≤ {delta:g}), "
            "on a {str: int} dict",
            size,
            partial(measurement, data),
        ),
    }
    console.print(f"[dim]section 1: {load_average()}[/dim]")
    times = interleaved({key: call for key, (_, _, _, call) in rows.items()}, rounds)
    per = {key: [t / rows[key][2] for t in seconds] for key, seconds in times.items()}
    base = per["optimal-partition-selection"]
    table = Table(
        title=(
            f"1. Partition selection on {size:,} partitions (Zipf a = {ZIPF_A} units), "
            f"ε = {epsilon:g}, δ = {delta:g}, ℓ₀ = 1: CPU time, median of {rounds} "
            "interleaved rounds"
        )
    )
    table.add_column("mechanism")
    table.add_column("what")
    table.add_column("ns / partition", justify="right")
    table.add_column("÷ dpplug optimal (paired rounds)", justify="right")
    for key, (label, note, _, _) in rows.items():
        table.add_row(
            label, note, f"{float(np.median(per[key])) * 1e9:,.1f}", ratio_text(per[key], base)
        )
    console.print(table)
    console.print(f"Not timed above: building the {{str: int}} dict for OpenDP. {load_average()}")

    laplace = per["laplace-thresholding"]
    bench = "partition_selection"
    ratios = [
        ("python-dp optimal loop (one reused) / dpplug optimal", "pydp-optimal", base, TARGET_PYDP),
        (
            "python-dp optimal, one per partition (as PipelineDP) / dpplug",
            "pydp-per-partition",
            base,
            None,
        ),
        ("… with SeededSource (not for releases)", "pydp-optimal", per["seeded"], None),
        ("OpenDP make_laplace_threshold / dpplug Laplace", "opendp", laplace, TARGET_OPENDP),
        (
            "OpenDP / dpplug truncated-geometric (noisy counts)",
            "opendp",
            per["truncated-geometric-thresholding"],
            None,
        ),
    ]
    for label, key, denominator, target in ratios:
        ratio = median_ratio(per[key], denominator)
        verdict = (
            ""
            if target is None
            else f" (target ≥ {target:g}×: {'met' if ratio >= target else 'NOT met'})"
        )
        console.print(f"{label}: {ratio_text(per[key], denominator)}{verdict}")
        headline(bench, label, ratio, target)


def midpoint(sel: Any) -> int:
    """The smallest n with π(n) ≥ 1/2 (exact)."""
    return next(n for n in range(sel.saturation + 1) if sel.keep_probability(n) >= Fraction(1, 2))


def midpoints() -> None:
    """Section 2: midpoints of the keep-only selectors."""
    table = Table(title="2. Midpoints: smallest n with π(n) ≥ 1/2 (ℓ₀ = 1)")
    table.add_column("ε", justify="right")
    table.add_column("δ", justify="right")
    for name in KEEP_ONLY:
        table.add_column(name, justify="right")
    for delta in MIDPOINT_DELTAS:
        for epsilon in MIDPOINT_EPSILONS:
            values = [str(midpoint(selector(name, epsilon, delta))) for name in KEEP_ONLY]
            table.add_row(f"{float(epsilon):g}", f"{float(delta):g}", *values)
    console.print(table)


def crossover() -> None:
    """Section 3: midpoints against ℓ₀ for the split optimal selector and the joint Gaussian."""
    names = ("optimal-partition-selection", "gaussian-thresholding")
    table = Table(
        title=f"3. ℓ₀ crossover: midpoints at ε = {float(EPSILON):g}, δ = {float(DELTA):g}"
    )
    table.add_column("ℓ₀", justify="right")
    table.add_column("optimal (ε/ℓ₀, δ_c per partition)", justify="right")
    table.add_column("gaussian (ℓ₂ sensitivity √ℓ₀)", justify="right")
    first = None
    for l0 in L0S:
        values = [
            midpoint(
                dpplug.create(name, epsilon=EPSILON, delta=DELTA, max_partitions_contributed=l0)
            )
            for name in names
        ]
        if first is None and values[1] < values[0]:
            first = l0
        table.add_row(str(l0), *map(str, values))
    console.print(table)
    console.print(
        f"Gaussian thresholding keeps half the partitions with fewer units than the optimal "
        f"selector from ℓ₀ = {first} on (Desfontaines et al. §5: from ℓ₀ ≈ 4)."
    )
    label = "ℓ₀ from which Gaussian beats split optimal"
    headline("partition_selection", label, first or 0, unit="")


def plot_curves(path: str) -> None:
    """Section 4: π(n) of the keep-only selectors at ε = 1, δ = 1e-5."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    selectors = {name: selector(name) for name in KEEP_ONLY}
    top = max(sel.saturation for sel in selectors.values()) + 2
    units = np.arange(top + 1)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, sel in selectors.items():
        curve = np.array([float(sel.keep_probability(int(n))) for n in units])
        label = f"{name} (midpoint {midpoint(sel)})"
        axes[0].step(units, curve, where="mid", label=label)
        axes[1].semilogy(units[1:], curve[1:], marker=".", label=label)
    axes[0].axhline(0.5, color="grey", linewidth=0.5)
    axes[0].set_ylabel("keep probability π(n)")
    axes[1].set_ylabel("π(n), log scale")
    for ax in axes:
        ax.set_xlabel("privacy units in the partition, n")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        f"dpplug keep probabilities, ε = {float(EPSILON):g}, δ = {float(DELTA):g}, ℓ₀ = 1 "
        "(exact, 2^-63 grid)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    console.print(f"4. Keep-probability curves saved to {path}")


def zipf_counts(size: int, seed: int) -> Counts:
    """Units per partition: Zipf(a = 1.5) clipped to [1, 10^9] (the seed builds the input only)."""
    rng = np.random.default_rng(seed)
    counts: Counts = np.clip(rng.zipf(ZIPF_A, size), 1, MAX_UNITS).astype(np.int64)
    return counts


def summary(counts: Counts) -> str:
    quantiles: Sequence[float] = np.quantile(counts, [0.5, 0.9, 0.99]).tolist()
    return (
        f"{counts.size:,} partitions; units: mean {counts.mean():,.1f}, median {quantiles[0]:g}, "
        f"90% {quantiles[1]:g}, 99% {quantiles[2]:g}, max {counts.max():,}; "
        f"{np.mean(counts == 1):.1%} have 1 unit"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=10**6, help="number of partitions")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--seed", type=int, default=20240601, help="seed of the input only")
    parser.add_argument(
        "--tg-partitions",
        type=int,
        default=None,
        help="time truncated-geometric-thresholding on the first N partitions only",
    )
    parser.add_argument(
        "--plot",
        default=output_file("partition_keep_curves.png"),
        help="where to save the curves (PNG)",
    )
    add_headlines_option(parser)
    args = parser.parse_args()
    if args.partitions < 1 or args.rounds < 1:
        parser.error("--partitions and --rounds must be positive")
    if args.tg_partitions is not None and args.tg_partitions < 1:
        parser.error("--tg-partitions must be positive")

    import opendp.prelude as dp

    dp.enable_features("contrib")
    console.print(
        f"[bold]dpplug partition-selection benchmark[/bold]: dpplug {version('dpplug')}, "
        f"python-dp {version('python-dp')} (PipelineDP {version('pipeline-dp')}), "
        f"OpenDP {version('opendp')}. One process, same input; CPU time of interleaved rounds."
    )
    counts = zipf_counts(args.partitions, args.seed)
    console.print(f"Input (seed {args.seed}): {summary(counts)}")
    throughput(counts, args.rounds, args.tg_partitions)
    console.print()
    midpoints()
    console.print()
    crossover()
    console.print()
    plot_curves(args.plot)
    write_headlines(args.headlines)


if __name__ == "__main__":
    main()
