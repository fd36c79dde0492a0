"""Benchmark dpplug's counting-query samplers against OpenDP and a numpy floor.

Everything runs in one process on the same input.

1. **Throughput on one vector of true counts.** ``--size`` counts (10^6 by default), drawn once in
   [0, ``--bound``] from a seeded numpy Generator. The seed only builds the input; no mechanism
   uses it. On that vector we time:

   - dpplug ``fixedpoint-geometric`` (vectorised, exact, pure DP) drawing from the default
     source (``dpplug.SystemSource``: a ChaCha20 keystream keyed from the OS CSPRNG), and beside
     it from ``dpplug.SeededSource`` (numpy PCG64, for tests and reports only);
   - dpplug ``discrete-laplace`` (exact, unbounded, default source);
   - OpenDP's native exact integer noise ``dp.m.make_geometric`` on
     ``vector_domain(atom_domain(T="i64"))`` / ``l1_distance(T="i64")`` with scale = 1/ε. It is
     called on a Python list, since that is what OpenDP accepts. Only the call is timed; the
     ndarray → list conversion is timed and reported separately;
   - numpy's float geometric (two draws, subtracted) as a speed floor. It is float and **not
     private**.

   We report nanoseconds per element and ratios: CPU time (``timing.cpu_seconds``) of
   ``--rounds`` interleaved rounds (each round runs every mechanism once), the median per
   mechanism and the median of the paired ratios (with their range), with the load average.

2. **Growth with n.** Microseconds per sample for ``geosample``, ``fastsample`` (γ = 1/1000) and
   ``fixedpoint-geometric`` at n = 10^2 … 10^5 (10^6 for geosample and 2^40 for the others with
   ``--extremes``), on ``--growth-samples`` counts equal to n // 2, with construction times and
   the randomness size d in bits. geosample's d grows linearly in n (d = (a+b)·a^(n−1) for
   e^ε̃ = a/b), fastsample's logarithmically, and fixedpoint-geometric's is 2^63.

3. **Time-oblivious noise.** ``oblivious-laplace`` (an alias table mixed with the uniform law;
   two draws and the same operations per count) against ``fixedpoint-geometric`` and OpenDP's
   ``make_geometric`` on the vector of section 1, CPU time (this process and its children) in
   ``--rounds`` interleaved rounds, medians and medians of the paired ratios, with the load
   average before and after. Then oblivious-laplace on three vectors of the same size (every
   count 0, every count n/2, the uniform counts of section 1): the median paired ratios of their
   CPU times, and the draws per count, show that neither depends on the counts.

Run from the repository root::

    python benchmarks/samplers.py [--size N] [--repeats R] [--rounds R] [--epsilon EPS]
        [--extremes] [--headlines FILE]

Times come from CPU time of interleaved rounds (sections 1 and 3; the headline ratios) and
``time.perf_counter`` (section 2).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from importlib.metadata import version

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
    ratio_text,
    timed,
    write_headlines,
)

import dpplug

Counts = npt.NDArray[np.int64]

GROWTH_NS = (10**2, 10**3, 10**4, 10**5)
#: The largest n of each sampler's schema (``--extremes``).
EXTREME_NS = {"geosample": 10**6, "fastsample": 1 << 40, "fixedpoint-geometric": 1 << 40}
FASTSAMPLE_GAMMA = Fraction(1, 1000)
TARGET_OPENDP = 250.0


def sampler(name: str, **params: object) -> dpplug.CountingQuerySampler:
    """``dpplug.create`` narrowed to a counting-query sampler."""
    mechanism = dpplug.create(name, **params)
    if not isinstance(mechanism, dpplug.CountingQuerySampler):
        raise TypeError(f"{name} is a {mechanism.kind}, not a counting-query sampler")
    return mechanism


def mean_abs_noise(noisy: npt.ArrayLike, counts: Counts) -> float:
    """Mean |output − count|: a sanity check that the noise scales are comparable."""
    return float(np.mean(np.abs(np.asarray(noisy, dtype=np.int64) - counts)))


def throughput(counts: Counts, bound: int, epsilon: float, rounds: int, seed: int) -> float:
    """Section 1; returns the headline ratio OpenDP time / fixedpoint-geometric time."""
    import opendp.prelude as dp

    size = counts.size
    system = dpplug.SystemSource()

    build = timed(lambda: sampler("fixedpoint-geometric", n=bound, epsilon=epsilon), 3)
    fixedpoint: dpplug.CountingQuerySampler = build.result
    seeded = dpplug.SeededSource(seed)
    laplace = sampler("discrete-laplace", epsilon=epsilon)
    measurement = dp.m.make_geometric(
        dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), scale=1 / epsilon
    )
    privacy_map: Callable[[int], float] = measurement.map  # opendp leaves it untyped
    as_list = timed(counts.tolist, 3)
    count_list: list[int] = as_list.result
    p = -math.expm1(-epsilon)  # Pr[stop] of a geometric with ratio e^−ε
    rng = np.random.default_rng(seed)  # benchmark floor only, never a mechanism

    calls: dict[str, Callable[[], npt.ArrayLike]] = {
        "fixedpoint": partial(fixedpoint.sample, counts, system),
        "seeded": partial(fixedpoint.sample, counts, seeded),
        "laplace": partial(laplace.sample, counts),
        "opendp": partial(measurement, count_list),
        "floor": lambda: counts + rng.geometric(p, size) - rng.geometric(p, size),
    }
    notes = {
        "fixedpoint": (
            "dpplug fixedpoint-geometric",
            f"exact, ε = {fixedpoint.guarantee.epsilon:.6g}, default source",
        ),
        "seeded": ("dpplug fixedpoint-geometric", "same, SeededSource (PCG64): not for releases"),
        "laplace": (
            "dpplug discrete-laplace",
            f"exact, ε = {laplace.guarantee.epsilon:.6g}, default source",
        ),
        "opendp": (
            "OpenDP make_geometric",
            f"exact, ε = {privacy_map(1):.6g}, scale = {1 / epsilon:.6g}, call only",
        ),
        "floor": ("numpy Generator.geometric ×2", "float, not private (floor)"),
    }
    console.print(f"[dim]section 1: {load_average()}[/dim]")
    times = interleaved(calls, rounds)
    noise = {key: mean_abs_noise(call(), counts) for key, call in calls.items()}

    title = (
        f"1. Noisy counts for {size:,} true counts in [0, {bound:,}], ε = {epsilon}: CPU time, "
        f"median of {rounds} interleaved rounds"
    )
    table = Table(title=title)
    table.add_column("mechanism")
    table.add_column("what")
    table.add_column("ns / element", justify="right")
    table.add_column("÷ fixedpoint (paired rounds)", justify="right")
    table.add_column("÷ numpy floor", justify="right")
    table.add_column("mean |noise|", justify="right")
    for key, seconds in times.items():
        label, note = notes[key]
        table.add_row(
            label,
            note,
            f"{float(np.median(seconds)) / size * 1e9:,.1f}",
            ratio_text(seconds, times["fixedpoint"]),
            f"{median_ratio(seconds, times['floor']):.2f}",
            f"{noise[key]:.3f}",
        )
    console.print(table)
    console.print(
        f"fixedpoint-geometric construction (n = {bound:,}): {build.best * 1e3:.2f} ms; "
        f"ndarray → list for OpenDP (not in its row): "
        f"{as_list.best / size * 1e9:.1f} ns / element ({as_list.best * 1e3:.1f} ms). "
        f"{load_average()}"
    )
    ratio = median_ratio(times["opendp"], times["fixedpoint"])
    headline("samplers", "OpenDP make_geometric / fixedpoint-geometric", ratio, TARGET_OPENDP)
    headline(
        "samplers",
        "… with SeededSource (not for releases)",
        median_ratio(times["opendp"], times["seeded"]),
    )
    headline(
        "samplers",
        "OpenDP make_geometric / discrete-laplace",
        median_ratio(times["opendp"], times["laplace"]),
    )
    return ratio


def growth(epsilon: float, repeats: int, samples: int, extremes: bool) -> None:
    """Section 2: per-sample cost against n for the bounded samplers."""
    system = dpplug.SystemSource()
    table = Table(
        title=(
            f"2. Growth with n: {samples:,} samples at count n // 2 per run, ε = {epsilon}, "
            f"best of {repeats} (first run shows cold caches)"
        )
    )
    table.add_column("n", justify="right")
    table.add_column("sampler")
    table.add_column("d bits", justify="right")
    table.add_column("achieved ε", justify="right")
    table.add_column("construct ms", justify="right")
    table.add_column("µs / sample (first)", justify="right")
    table.add_column("µs / sample (best)", justify="right")
    configs: tuple[tuple[str, dict[str, object]], ...] = (
        ("geosample", {}),
        ("fastsample", {"gamma": FASTSAMPLE_GAMMA}),
        ("fixedpoint-geometric", {}),
    )
    sizes = [*GROWTH_NS, *(["extreme"] if extremes else [])]
    for size in sizes:
        for name, extra in configs:
            n = EXTREME_NS[name] if size == "extreme" else int(size)
            count = min(samples, 100) if size == "extreme" else samples
            counts = np.full(count, n // 2, dtype=np.int64)
            build = timed(partial(sampler, name, n=n, epsilon=epsilon, **extra), 1)
            s: dpplug.CountingQuerySampler = build.result
            run = timed(partial(s.sample, counts, system), repeats)
            d = s.d
            if d is None:
                raise TypeError(f"{name} has no finite randomness size")
            table.add_row(
                f"{n:,}",
                name,
                f"{d.bit_length():,}",
                f"{s.guarantee.epsilon:.4g}",
                f"{build.best * 1e3:.2f}",
                f"{run.first / count * 1e6:,.2f}",
                f"{run.best / count * 1e6:,.2f}",
            )
        table.add_section()
    console.print(table)
    console.print(
        "geosample and fastsample draw one exact U(d) per count (rejection on ⌈log₂ d⌉ random "
        "bits) and invert a big-integer CDF element by element, each comparison decided from "
        "128-bit enclosures (exact); their cost follows d's bit length through the random bits "
        "of U(d). fixedpoint-geometric draws 63 bits per count and looks them up in a table "
        "(vectorised)."
    )


def oblivious(counts: Counts, bound: int, epsilon: float, rounds: int) -> None:
    """Section 3 (module docstring)."""
    import opendp.prelude as dp

    console.print(f"[dim]before section 3: {load_average()}[/dim]")
    system = dpplug.SystemSource()
    alias = sampler("oblivious-laplace", n=bound, epsilon=epsilon)
    fixedpoint = sampler("fixedpoint-geometric", n=bound, epsilon=epsilon)
    measurement = dp.m.make_geometric(
        dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), scale=1 / epsilon
    )
    count_list = counts.tolist()
    times = interleaved(
        {
            "oblivious-laplace": partial(alias.sample, counts, system),
            "fixedpoint-geometric": partial(fixedpoint.sample, counts, system),
            "OpenDP make_geometric": partial(measurement, count_list),
        },
        rounds,
    )
    size = counts.size
    table = Table(
        title=(
            f"3. Time-oblivious noise for {size:,} true counts in [0, {bound:,}], ε = {epsilon}, "
            f"CPU time, median of {rounds} interleaved rounds"
        )
    )
    table.add_column("mechanism")
    table.add_column("ns / element", justify="right")
    table.add_column("÷ oblivious-laplace (median of paired ratios)", justify="right")
    table.add_column("mean |noise|", justify="right")
    noise = {
        "oblivious-laplace": mean_abs_noise(alias.sample(counts, system), counts),
        "fixedpoint-geometric": mean_abs_noise(fixedpoint.sample(counts, system), counts),
        "OpenDP make_geometric": mean_abs_noise(measurement(count_list), counts),
    }
    for name, seconds in times.items():
        table.add_row(
            name,
            f"{float(np.median(seconds)) / size * 1e9:,.1f}",
            f"{median_ratio(seconds, times['oblivious-laplace']):.2f}",
            f"{noise[name]:.3f}",
        )
    console.print(table)
    derived = alias.derived
    console.print(
        f"oblivious-laplace: ε = {alias.guarantee.epsilon:.6g}, γ = {float(derived['gamma']):.3g}, "
        f"window ±{derived['window']}, 2^{derived['column_bits']} columns, "
        f"{derived['position_bits']}-bit positions; OpenDP is called on a Python list (the "
        f"conversion is not timed). {load_average()}."
    )
    vectors = {
        "every count 0": np.zeros(size, dtype=np.int64),
        "every count n/2": np.full(size, bound // 2, dtype=np.int64),
        "uniform counts": counts,
    }
    draws = {}
    for name, vector in vectors.items():
        source = dpplug.SeededSource(1)
        alias.sample(vector, source)
        draws[name] = source.draws / size
    by_data = interleaved(
        {name: partial(alias.sample, vector, system) for name, vector in vectors.items()}, rounds
    )
    console.print(
        "oblivious-laplace on other counts, CPU time ÷ uniform counts (median of paired "
        "ratios): "
        + ", ".join(
            f"{name} {median_ratio(seconds, by_data['uniform counts']):.3f}"
            for name, seconds in by_data.items()
            if name != "uniform counts"
        )
        + "; draws per count: "
        + ", ".join(f"{name} {value:g}" for name, value in draws.items())
    )
    headline(
        "samplers",
        "OpenDP make_geometric / oblivious-laplace",
        median_ratio(times["OpenDP make_geometric"], times["oblivious-laplace"]),
    )
    headline(
        "samplers",
        "fixedpoint-geometric / oblivious-laplace",
        median_ratio(times["fixedpoint-geometric"], times["oblivious-laplace"]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10**6, help="number of true counts")
    parser.add_argument("--repeats", type=int, default=3, help="runs per timing (best is kept)")
    parser.add_argument("--epsilon", type=float, default=1.0, help="ε for every mechanism")
    parser.add_argument(
        "--rounds", type=int, default=5, help="interleaved rounds of sections 1 and 3"
    )
    parser.add_argument("--bound", type=int, default=10**6, help="counts lie in [0, bound]")
    parser.add_argument("--seed", type=int, default=20240601, help="seed of the input only")
    parser.add_argument(
        "--growth-samples", type=int, default=2000, help="samples per run in section 2"
    )
    parser.add_argument(
        "--extremes", action="store_true", help="add each sampler's largest n to section 2"
    )
    add_headlines_option(parser)
    args = parser.parse_args()
    if min(args.size, args.repeats, args.growth_samples, args.bound, args.rounds) < 1:
        parser.error("--size, --repeats, --rounds, --growth-samples and --bound must be positive")

    import opendp.prelude as dp

    dp.enable_features("contrib")
    console.print(
        "[bold]dpplug sampler benchmark[/bold]: exact pure-DP integer noise, dpplug vs OpenDP "
        f"{version('opendp')} "
        "(make_geometric), with numpy's float geometric as a non-private floor. "
        f"One process, same input; CPU time of {args.rounds} interleaved rounds (section 2: "
        f"best of {args.repeats} runs, time.perf_counter)."
    )
    input_rng = np.random.default_rng(args.seed)  # builds the input only
    counts: Counts = input_rng.integers(0, args.bound, size=args.size, endpoint=True)

    ratio = throughput(counts, args.bound, args.epsilon, args.rounds, args.seed)
    console.print()
    growth(args.epsilon, args.repeats, args.growth_samples, args.extremes)
    console.print()
    oblivious(counts, args.bound, args.epsilon, args.rounds)
    console.print()
    console.print(
        f"[bold]fixedpoint-geometric vs OpenDP make_geometric: {ratio:.1f}× faster per element"
        f"[/bold] ({args.size:,} counts, ε = {args.epsilon}, CPU time, median of {args.rounds} "
        f"paired rounds, default source; target ≥ {TARGET_OPENDP:g}×: "
        f"{'met' if ratio >= TARGET_OPENDP else 'NOT met'})"
    )
    write_headlines(args.headlines)


if __name__ == "__main__":
    main()
