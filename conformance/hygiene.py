"""Contract 7, hygiene: integer outputs of the declared shape and range, randomness only from the
RandomSource (same seed, same output; something drawn), and, for plugins that claim strict
running time, a number of draws that does not depend on the data."""

from __future__ import annotations

import numpy as np

from dpplug.conformance.cases import describe_case, instances
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.kinds import CountingQuerySampler
from dpplug.randomness import SeededSource
from dpplug.registry import Entry

NAME = "hygiene"
_SIZE = 64


def _sampler_problems(sampler: CountingQuerySampler, strict: bool, seed: int) -> list[str]:
    low, high = sampler.count_bounds if sampler.n is not None else (-5, 5)
    rng = np.random.default_rng(seed)  # builds test inputs only, never a mechanism's noise
    inputs = {
        "low": np.full(_SIZE, low, dtype=np.int64),
        "high": np.full(_SIZE, high, dtype=np.int64),
        "mixed": rng.integers(low, high, size=_SIZE, endpoint=True, dtype=np.int64),
    }
    problems: list[str] = []
    draws: dict[str, int] = {}
    for label, counts in inputs.items():
        source = SeededSource(seed)
        out = sampler.sample(counts.reshape(8, 8), source)
        draws[label] = source.draws
        if not isinstance(out, np.ndarray) or out.dtype.kind not in "iu":
            return [f"outputs are {getattr(out, 'dtype', type(out))}, not integers"]
        if out.shape != (8, 8):
            problems.append(f"output shape {out.shape} for input shape (8, 8)")
        if sampler.n is not None and (out.min() < 0 or out.max() > sampler.n):
            problems.append(f"outputs outside [0, {sampler.n}]")
        if source.draws == 0:
            problems.append("sample() drew nothing from the RandomSource")
        again = sampler.sample(counts.reshape(8, 8), SeededSource(seed))
        if not np.array_equal(out, again):
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
    for params, mechanism in instances(entry):
        if not isinstance(mechanism, CountingQuerySampler):
            return ContractResult(NAME, Outcome.SKIPPED, f"no hygiene check for a {entry.kind}")
        problems = _sampler_problems(mechanism, entry.cls.strict_time, settings.seed)
        if problems:
            return ContractResult(NAME, Outcome.FAILED, f"{describe_case(params)}: {problems[0]}")
    strict = "data-independent draw count, " if entry.cls.strict_time else ""
    return ContractResult(
        NAME,
        Outcome.PASSED,
        f"integer outputs in range and shape, {strict}reproducible from the RandomSource",
    )
