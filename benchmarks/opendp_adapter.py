"""Benchmark the OpenDP adapter (``dpplug.adapters.opendp``): what wrapping a plugin as an OpenDP
0.16 measurement costs, against calling the plugin directly and against OpenDP's native
measurements.

Everything runs in one process on the same inputs. The seed only builds the inputs; no mechanism
uses it (every mechanism draws from its default source: the OS CSPRNG for dpplug, OpenDP's own
for OpenDP). Times are CPU time (``timing.cpu_seconds``) of interleaved rounds, each running
every row once (``--calls`` calls of each in section 1, one release in section 2), medians over
the rounds and medians of the paired ratios or differences; the load average is printed.

1. **Per call** (µs per call, one count c = n/2 with n = 1000, ε = 1):

   - dpplug ``fixedpoint-geometric`` called directly, ``sampler.sample(np.array([c]))[0]``;
   - the same plugin through the adapter, ``make_measurement("fixedpoint-geometric",
     atom_domain(T="i64"), absolute_distance(T="i64"), n=1000, epsilon=1)(c)``;
   - OpenDP's ``make_user_measurement`` with an identity function on the same domain: the
     round trip (Python → Rust → Python callback → Rust → Python) every user measurement pays,
     whatever it computes;
   - a bare ``make_user_measurement`` whose function calls the same sampler with none of
     dpplug's checks;
   - OpenDP's native ``make_geometric`` with scale 1/ε, unbounded and with ``bounds=(0, n)``
     (the constant-time sampler on the same n + 1 outputs).

   "Adapter adds" is adapter − direct. The identity user measurement is OpenDP's share of it,
   the floor of every user measurement (Python → Rust → Python callback → Rust → Python, with
   its argument and result conversions); adapter − identity is what dpplug adds beyond it, and
   adapter − bare its wrapper (argument check, array, output conversion).

2. **10^6-key partition selection** (ns per key, ε = 1, δ = 1e-5, one partition per unit):
   ``--keys`` labels with Zipf(a = 1.5) unit counts clipped to [1, 10^9], drawn once from
   ``numpy.random.default_rng(--seed)``, as a dict {label (str) → count}; building the dict is
   timed separately. On that dict:

   - the adapter's ``optimal-partition-selection`` and ``laplace-thresholding`` on
     ``map_domain(atom_domain(T=str), atom_domain(T="i64"))`` with
     ``l01inf_distance(absolute_distance(T="i64"))``;
   - OpenDP's native ``make_laplace_threshold`` on the same space, scale 1/ε, at the smallest
     integer threshold whose *true* δ, Pr[1 + X ≥ τ] for its discrete Laplace noise X, is at
     most δ (``anchors.py``, the threshold ``partition_selection.py`` uses too: τ = 13; its own
     map certifies τ = 12, one step too low: OpenDP issue #2922, see
     tests/adapters/test_opendp.py);
   - OpenDP's ``make_user_measurement`` with a function returning ``len(data)``: the cost of
     converting the dict into Rust and back into the Python callback, the floor of any user
     measurement on this input;
   - dpplug's ``select`` on the numpy array of counts, no OpenDP (the plugins alone).

   Ratios are native / adapter. Targets: the adapter adds ≤ 100 µs per call (or, where OpenDP's
   round trip alone costs more, dpplug adds ≤ 100 µs beyond it); the 10^6-key release through
   the adapter is ≥ 10× faster than ``make_laplace_threshold``. The script prints whether each
   is met.

Run from the repository root (about two minutes on 2 cores; OpenDP's dict conversion and
``make_laplace_threshold`` dominate)::

    python benchmarks/opendp_adapter.py [--keys N] [--rounds R] [--calls C] [--seed S]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from functools import partial
from importlib.metadata import version
from typing import Any

import numpy as np
import numpy.typing as npt
from anchors import opendp_laplace_threshold
from timing import (
    add_headlines_option,
    headline,
    interleaved,
    load_average,
    median_ratio,
    ratio_text,
    write_headlines,
)

import dpplug

#: OpenDP and the adapter, imported by :func:`main` (so ``--help`` works without OpenDP).
dp: Any = None
make_measurement: Any = None

N = 1000
EPSILON = 1.0
DELTA = 1e-5
ZIPF_A = 1.5
MAX_UNITS = 10**9
SELECTORS = ("optimal-partition-selection", "laplace-thresholding")
TARGET_OVERHEAD_US = 100.0
TARGET_SPEEDUP = 10.0


def per_call_seconds(times: dict[str, list[float]], key: str) -> float:
    """The median over rounds of one call's CPU seconds."""
    return float(np.median(times[key]))


def paired_difference(times: dict[str, list[float]], a: str, b: str) -> float:
    """The median over rounds of a − b (seconds per call), paired round by round."""
    return float(np.median([x - y for x, y in zip(times[a], times[b], strict=True)]))


def i64_space() -> tuple[Any, Any]:
    return dp.atom_domain(T="i64"), dp.absolute_distance(T="i64")


def counts_space() -> tuple[Any, Any]:
    return (
        dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T="i64")),
        dp.l01inf_distance(dp.absolute_distance(T="i64")),
    )


def privacy_map(measurement: Any, d_in: Any) -> Any:
    """``measurement.map(d_in)`` (OpenDP leaves ``map`` untyped)."""
    return measurement.map(d_in)


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def per_call(rounds: int, calls: int) -> None:
    """Section 1: µs per call of one count."""
    count = N // 2
    sampler = dpplug.create("fixedpoint-geometric", n=N, epsilon=EPSILON)
    assert isinstance(sampler, dpplug.CountingQuerySampler)
    adapter = make_measurement("fixedpoint-geometric", *i64_space(), n=N, epsilon=EPSILON)
    identity = dp.m.make_user_measurement(
        *i64_space(), dp.max_divergence(), lambda x: x, lambda d_in: float(d_in), TO="i64"
    )
    bare = dp.m.make_user_measurement(
        *i64_space(),
        dp.max_divergence(),
        lambda x: int(sampler.sample(np.array([x], dtype=np.int64))[0]),
        lambda d_in: float(d_in),
        TO="i64",  # as the adapter declares for a sampler
    )
    unbounded = dp.m.make_geometric(*i64_space(), scale=1 / EPSILON)
    bounded = dp.m.make_geometric(*i64_space(), scale=1 / EPSILON, bounds=(0, N))
    one = np.array([count], dtype=np.int64)
    rows: dict[str, tuple[str, str, Callable[[], Any]]] = {
        "direct": (
            "dpplug fixedpoint-geometric, direct",
            "sampler.sample(np.array([c]))[0]",
            lambda: sampler.sample(one)[0],
        ),
        "adapter": (
            "dpplug fixedpoint-geometric, adapter",
            f"make_measurement(...)(c), map(1) = {privacy_map(adapter, 1):.12g}",
            lambda: adapter(count),
        ),
        "identity": (
            "OpenDP make_user_measurement, identity",
            "the callback round trip alone",
            lambda: identity(count),
        ),
        "bare": (
            "OpenDP make_user_measurement, bare sampler",
            "same sampler call, none of dpplug's checks",
            lambda: bare(count),
        ),
        "unbounded": (
            "OpenDP make_geometric, unbounded",
            f"scale 1/ε, map(1) = {privacy_map(unbounded, 1):.10g}",
            lambda: unbounded(count),
        ),
        "bounded": (
            "OpenDP make_geometric, bounds (0, n)",
            f"constant-time, map(1) = {privacy_map(bounded, 1):.10g}",
            lambda: bounded(count),
        ),
    }
    print(f"   [section 1: {load_average()}]")
    times = interleaved({key: row[2] for key, row in rows.items()}, rounds, per_call=calls)
    assert 0 <= adapter(count) <= N
    print(
        f"1. Per call: one count c = {count}, n = {N}, ε = {EPSILON:g}; CPU time, median of "
        f"{rounds} interleaved rounds of {calls} calls each"
    )
    print(f"   {'measurement':<42} {'µs/call':>9}  note")
    for key, (label, note, _) in rows.items():
        print(f"   {label:<42} {per_call_seconds(times, key) * 1e6:9.2f}  {note}")

    added = paired_difference(times, "adapter", "direct") * 1e6
    trip = paired_difference(times, "identity", "direct") * 1e6
    own = paired_difference(times, "adapter", "identity") * 1e6
    wrapper = paired_difference(times, "adapter", "bare") * 1e6
    print(f"   adapter adds (adapter − direct):                    {added:8.2f} µs per call")
    print(f"     OpenDP's round trip (identity − direct):           {trip:8.2f} µs")
    print(f"     dpplug beyond the round trip (adapter − identity): {own:8.2f} µs")
    print(f"     dpplug's wrapper (adapter − bare sampler):         {wrapper:8.2f} µs")
    print(
        f"   adapter / native unbounded make_geometric: "
        f"{ratio_text(times['adapter'], times['unbounded'])}"
    )
    headline("opendp_adapter", "µs the adapter adds per call", added, TARGET_OVERHEAD_US, unit="µs")
    headline(
        "opendp_adapter",
        "µs of one OpenDP user-measurement round trip (identity)",
        per_call_seconds(times, "identity") * 1e6,
        unit="µs",
    )
    headline(
        "opendp_adapter",
        "µs dpplug adds beyond that round trip",
        own,
        TARGET_OVERHEAD_US,
        unit="µs",
    )
    print(
        f"   target: adapter adds ≤ {TARGET_OVERHEAD_US:g} µs per call: "
        f"{verdict(added <= TARGET_OVERHEAD_US)} end to end ({added:.1f} µs); "
        f"{verdict(own <= TARGET_OVERHEAD_US)} beyond OpenDP's round trip ({own:.1f} µs)"
    )


def zipf_counts(keys: int, seed: int) -> npt.NDArray[np.int64]:
    rng = np.random.default_rng(seed)
    return np.minimum(rng.zipf(ZIPF_A, keys), MAX_UNITS).astype(np.int64)


def partitions(keys: int, seed: int, rounds: int) -> None:
    """Section 2: ns per key for a dict of *keys* labels."""
    counts = zipf_counts(keys, seed)
    data = {f"k{i:07d}": int(c) for i, c in enumerate(counts.tolist())}
    native, tau = opendp_laplace_threshold(EPSILON, DELTA)
    below = dp.m.make_laplace_threshold(*counts_space(), scale=1 / EPSILON, threshold=tau - 1)
    floor = dp.m.make_user_measurement(
        *counts_space(),
        dp.approximate(dp.max_divergence()),
        lambda x: len(x),
        lambda d_in: (0.0, 0.0),
    )

    print(
        f"\n2. Partition selection: {keys:,} keys, Zipf(a = {ZIPF_A}) unit counts clipped to "
        f"[1, {MAX_UNITS:.0e}], seed {seed}; ε = {EPSILON:g}, δ = {DELTA:g}, ℓ₀ = 1; CPU time, "
        f"median of {rounds} interleaved rounds"
    )
    print(
        f"   dict {{str → int}} built before the rounds; {int(counts.sum()):,} units, median "
        f"count {int(np.median(counts))}"
    )
    print(
        f"   native threshold τ = {tau} (true δ ≤ {DELTA:g}, anchors.py); its own map gives "
        f"δ = {privacy_map(native, (1, 1, 1))[1]:.3g} at τ and "
        f"{privacy_map(below, (1, 1, 1))[1]:.3g} at τ − 1 = "
        f"{tau - 1} (#2922: the map omits the mass at exactly τ)"
    )

    rows: dict[str, tuple[str, Callable[[], Any]]] = {}
    for name in SELECTORS:
        measurement = make_measurement(name, *counts_space(), epsilon=EPSILON, delta=DELTA)
        eps_out, delta_out = privacy_map(measurement, (1, 1, 1))
        rows[f"adapter {name}"] = (
            f"map(1,1,1) = ({eps_out:.6g}, {delta_out:.4g})",
            partial(measurement, data),
        )
    eps_out, delta_out = privacy_map(native, (1, 1, 1))
    rows["OpenDP make_laplace_threshold"] = (
        f"scale {1 / EPSILON:g}, τ = {tau}, map = ({eps_out:.6g}, {delta_out:.4g})",
        partial(native, data),
    )
    rows["OpenDP make_user_measurement, len()"] = (
        "dict conversion + callback only",
        partial(floor, data),
    )
    source = dpplug.SystemSource()
    for name in SELECTORS:
        selector = dpplug.create(name, epsilon=EPSILON, delta=DELTA)
        assert isinstance(selector, dpplug.PartitionSelector)
        rows[f"dpplug {name}.select"] = (
            "numpy array, no OpenDP",
            partial(selector.select, counts, source),
        )
    print(f"   [section 2: {load_average()}]")
    times = interleaved({label: call for label, (_, call) in rows.items()}, rounds)
    print(f"   {'release':<42} {'ns/key':>9} {'s/run':>7}  note")
    for label, (note, _) in rows.items():
        seconds = per_call_seconds(times, label)
        print(f"   {label:<42} {seconds / keys * 1e9:9.0f} {seconds:7.2f}  {note}")

    native_s = times["OpenDP make_laplace_threshold"]
    for name in SELECTORS:
        ratio = median_ratio(native_s, times[f"adapter {name}"])
        print(
            f"   make_laplace_threshold / adapter {name}: "
            f"{ratio_text(native_s, times[f'adapter {name}'])} "
            f"(target ≥ {TARGET_SPEEDUP:g}×: {verdict(ratio >= TARGET_SPEEDUP)})"
        )
        label = f"make_laplace_threshold / adapter {name}"
        headline("opendp_adapter", label, ratio, TARGET_SPEEDUP)
    floor_s = times["OpenDP make_user_measurement, len()"]
    print(
        f"   best ratio any user measurement can reach on this dict "
        f"(make_laplace_threshold / conversion floor): {ratio_text(native_s, floor_s)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--keys", type=int, default=10**6)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per section")
    parser.add_argument("--calls", type=int, default=2000, help="calls per round in section 1")
    parser.add_argument("--seed", type=int, default=2024)
    add_headlines_option(parser)
    args = parser.parse_args()

    global dp, make_measurement
    import opendp.prelude as dp

    from dpplug.adapters.opendp import enable_features, make_measurement

    enable_features()  # what make_measurement does; the native rows need "contrib" too
    print(
        f"dpplug {version('dpplug')}, opendp {version('opendp')}, numpy {np.__version__}, "
        f"Python {platform.python_version()} on {platform.machine()}"
    )
    start = time.perf_counter()
    per_call(args.rounds, args.calls)
    partitions(args.keys, args.seed, max(3, args.rounds // 2))
    print(f"\ntotal {time.perf_counter() - start:.0f} s")
    write_headlines(args.headlines)


if __name__ == "__main__":
    main()
