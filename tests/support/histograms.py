"""Shared helpers of the histogram-releaser tests (not a test module).

- :class:`TernaryResponse`, a counting-query sampler with a fixed guarantee and no ``n`` or
  ``epsilon`` parameter (counts in [0, 2]), registered at run time in :func:`plugin_registry`.
- Exact tools: all datasets of a tiny universe, their replace-one neighbours, the hockey-stick
  divergence and the largest likelihood ratio of two exact laws.
- Synthetic Zipf data and the one-sided binomial test of the empirical accuracy checks.
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from gmpy2 import mpq
from scipy.stats import binomtest

import dpplug
from dpplug.guarantee import COUNT_SENSITIVITY_1


class TernaryResponse(dpplug.CountingQuerySampler):
    """Keep a count c ∈ {0, 1, 2} with probability 1/2, else move it to each other value with
    probability 1/4: M(c, u) = c for u ≤ 2, c+1 mod 3 for u = 3, c+2 mod 3 for u = 4.
    Every likelihood ratio is at most (1/2)/(1/4) = 2."""

    name = "ternary-response"
    summary = "Keep a count in {0,1,2} with probability 1/2, else move it (e^ε = 2)."
    reference = "test sampler (randomized response on three values)"
    schema = dpplug.Schema(())

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.n = 2
        self.d = 4

    @property
    def guarantee(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(2, 0, COUNT_SENSITIVITY_1)

    def _output(self, count: int, u: int) -> int:
        return count if u <= 2 else (count + u - 2) % 3

    def _scaled_cdf(self, z: int, count: int) -> int:
        return sum(1 for u in range(1, 5) if self._output(count, u) <= z)

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        bound = dpplug.ErrorBound(0 if beta >= mpq(1, 2) else 2, beta)
        return dpplug.Accuracy(bound, bound, formula="a = 0 if β ≥ 1/2, else 2")


@cache
def plugin_registry() -> dpplug.Registry:
    """The built-ins plus :class:`TernaryResponse`, registered through the sampler hook."""

    def register_samplers(register: Any) -> None:
        register(TernaryResponse)

    plugin = types.ModuleType("ternary_response_plugin")
    plugin.register_samplers = dpplug.hookimpl(register_samplers)  # type: ignore[attr-defined]
    return dpplug.Registry.load([plugin], entry_points=False)


# --- exact tools -------------------------------------------------------------------------------

Dataset = tuple[int, ...]  # the count of every label, by index


def datasets(size: int, rows: int) -> list[Dataset]:
    """Every count vector over *size* labels with exactly *rows* rows."""
    if size == 1:
        return [(rows,)]
    return [(c, *rest) for c in range(rows + 1) for rest in datasets(size - 1, rows - c)]


def replace_one(data: Dataset) -> Iterator[Dataset]:
    """Every dataset that differs from *data* by replacing one row with another label."""
    for x, count in enumerate(data):
        if count:
            for y in range(len(data)):
                if y != x:
                    other = list(data)
                    other[x] -= 1
                    other[y] += 1
                    yield tuple(other)


def neighbour_pairs(size: int, n: int) -> Iterator[tuple[Dataset, Dataset]]:
    """Every ordered replace-one pair of datasets of 0 … n rows over *size* labels."""
    for rows in range(n + 1):
        for data in datasets(size, rows):
            for other in replace_one(data):
                yield data, other


def as_mapping(data: Dataset) -> dict[int, int]:
    """A dataset as the mapping label → count a releaser takes (range universes from 0)."""
    return {label: count for label, count in enumerate(data) if count}


def hockey_stick(p: Mapping[Any, Any], q: Mapping[Any, Any], exp_epsilon: Any) -> Any:
    """Σ_o max(0, P(o) − e^ε·Q(o)), exactly."""
    return sum((max(mpq(0), prob - exp_epsilon * q.get(o, 0)) for o, prob in p.items()), mpq(0))


def max_ratio(p: Mapping[Any, Any], q: Mapping[Any, Any]) -> Any:
    """max_o P(o)/Q(o) over the support of P; an error if Q misses an outcome of P."""
    worst = mpq(0)
    for outcome, prob in p.items():
        if prob:
            assert q.get(outcome, 0) > 0, f"{outcome} has probability 0 under the neighbour"
            worst = max(worst, prob / q[outcome])
    return worst


def total_variation(p: Mapping[Any, Any], q: Mapping[Any, Any]) -> Any:
    return sum((abs(p.get(o, 0) - q.get(o, 0)) for o in set(p) | set(q)), mpq(0)) / 2


# --- statistics --------------------------------------------------------------------------------


def zipf_counts(rows: int, labels: int, exponent: float = 1.3) -> list[int]:
    """Deterministic Zipf data: label i gets about rows·i^{−s}/H, rounded down, and the rows
    left over go to the heaviest labels, so the counts sum to exactly *rows*."""
    weights = [1 / (i + 1) ** exponent for i in range(labels)]
    total = sum(weights)
    counts = [int(rows * w / total) for w in weights]
    for i in range(rows - sum(counts)):
        counts[i % labels] += 1
    return counts


def exceeds(failures: int, trials: int, beta: Any, false_alarm: float) -> bool:
    """Whether *failures* out of *trials* is significantly more than a rate of β: the one-sided
    binomial test rejects "failure probability ≤ β" at level *false_alarm* (so a releaser that
    keeps its promise is flagged with probability at most *false_alarm*)."""
    test = binomtest(failures, trials, float(beta), alternative="greater")
    return bool(test.pvalue < false_alarm)
