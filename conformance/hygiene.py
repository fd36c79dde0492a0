"""Contract 7, hygiene: outputs of the declared type, shape and range; randomness only from the
RandomSource (same seed, same output; something drawn); partitions absent from the data never
released; and, for plugins that claim strict running time, a number of draws that does not depend
on the data."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from dpplug.conformance.cases import probes
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.kinds import CountingQuerySampler, Mechanism, PartitionSelector, Selection
from dpplug.randomness import SeededSource
from dpplug.registry import Entry

NAME = "hygiene"
_SHAPE = (8, 8)


def _inputs(mechanism: Mechanism, seed: int) -> dict[str, npt.NDArray[np.int64]]:
    if isinstance(mechanism, CountingQuerySampler):
        low, high = mechanism.count_bounds if mechanism.n is not None else (-5, 5)
    else:
        assert isinstance(mechanism, PartitionSelector)
        low, high = 0, mechanism.saturation + 5
    rng = np.random.default_rng(seed)  # builds test inputs only, never a mechanism's noise
    return {
        "low": np.full(_SHAPE, low, dtype=np.int64),
        "high": np.full(_SHAPE, high, dtype=np.int64),
        "mixed": rng.integers(low, high, size=_SHAPE, endpoint=True, dtype=np.int64),
    }


def _sampler_output(
    sampler: CountingQuerySampler, counts: npt.NDArray[np.int64], out: Any
) -> list[str]:
    if not isinstance(out, np.ndarray) or out.dtype.kind not in "iu":
        return [f"outputs are {getattr(out, 'dtype', type(out))}, not integers"]
    problems = [] if out.shape == counts.shape else [f"output shape {out.shape} for {_SHAPE}"]
    if sampler.n is not None and (out.min() < 0 or out.max() > sampler.n):
        problems.append(f"outputs outside [0, {sampler.n}]")
    return problems


def _selector_output(
    _selector: PartitionSelector, counts: npt.NDArray[np.int64], out: Any
) -> list[str]:
    if not isinstance(out, Selection) or np.asarray(out.keep).dtype != np.bool_:
        return ["select() must return a Selection with a boolean keep mask"]
    problems = [] if out.keep.shape == counts.shape else [f"keep shape {out.keep.shape}"]
    if np.any(out.keep[counts == 0]):
        problems.append("a partition with 0 units was released")
    if out.noisy_counts is not None and (
        out.noisy_counts.dtype.kind not in "iu" or out.noisy_counts.shape != counts.shape
    ):
        problems.append("noisy counts must be an integer array of the input's shape")
    return problems


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, Selection) and isinstance(b, Selection):
        same_counts = (a.noisy_counts is None and b.noisy_counts is None) or (
            a.noisy_counts is not None
            and b.noisy_counts is not None
            and np.array_equal(a.noisy_counts, b.noisy_counts)
        )
        return bool(np.array_equal(a.keep, b.keep)) and same_counts
    return bool(np.array_equal(a, b))


def _problems(mechanism: Mechanism, strict: bool, seed: int) -> list[str]:
    run: Callable[[npt.NDArray[np.int64], SeededSource], Any]
    check: Callable[[npt.NDArray[np.int64], Any], list[str]]
    if isinstance(mechanism, CountingQuerySampler):
        run, check = mechanism.sample, partial(_sampler_output, mechanism)
    else:
        assert isinstance(mechanism, PartitionSelector)
        run, check = mechanism.select, partial(_selector_output, mechanism)
    problems: list[str] = []
    draws: dict[str, int] = {}
    for label, counts in _inputs(mechanism, seed).items():
        source = SeededSource(seed)
        out = run(counts, source)
        draws[label] = source.draws
        problems += check(counts, out)
        if source.draws == 0:
            problems.append("drew nothing from the RandomSource")
        if not _equal(out, run(counts, SeededSource(seed))):
            problems.append(
                "the same seeded source gave different outputs: randomness comes "
                "from somewhere other than the RandomSource"
            )
    if strict and len(set(draws.values())) > 1:
        problems.append(
            f"claims strict running time but the number of draws depends on the data: {draws}"
        )
    return problems


def check(entry: Entry, settings: Settings) -> ContractResult:
    for probe in probes(entry):
        problems = _problems(probe.mechanism, entry.cls.strict_time, settings.seed)
        if problems:
            return ContractResult(NAME, Outcome.FAILED, f"{probe.where}: {problems[0]}")
    strict = "data-independent draw count, " if entry.cls.strict_time else ""
    return ContractResult(
        NAME,
        Outcome.PASSED,
        f"outputs of the declared type, shape and range, {strict}reproducible from the "
        "RandomSource",
    )
