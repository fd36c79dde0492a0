"""The declared (α, β) of every built-in query releaser holds on real data: k = 1,000 random
m-sparse queries, fixed before any release, on Zipf-distributed rows over ``bytes:16`` labels.

For each releaser, RELEASES independent releases (fixed seed) answer all k queries; a release
fails when its largest error exceeds the declared simultaneous a. The number of failures is
tested against β with a one-sided binomial test at false alarm 1e-6 / (number of tests). Power:
the same test on the same data must reject a broken variant of each releaser, whose noise is
larger than the accuracy it declares.
"""

from __future__ import annotations

import dataclasses
import random
from fractions import Fraction
from typing import Any

import pytest
from gmpy2 import mpq
from scipy.stats import binom

import dpplug
from dpplug.kinds import QueryReleaser
from dpplug.plugins.queries.independent import IndependentLaplace
from dpplug.plugins.queries.projection import SparseProjectionReleaser
from dpplug.plugins.queries.sparse_mw import Design, SparseMultiplicativeWeights
from dpplug.randomness import SeededSource

K, M, RELEASES = 1000, 4, 12
TESTS = 4
FALSE_ALARM = 1e-6 / TESTS


def zipf_data(n: int, labels: int, seed: int) -> tuple[dict[bytes, int], list[bytes]]:
    """n rows over *labels* random 16-byte labels, Zipf(1.1) frequencies, as counts."""
    rng = random.Random(seed)
    pool = [rng.randbytes(16) for _ in range(labels)]
    weights = [1 / (i + 1) ** 1.1 for i in range(labels)]
    counts: dict[bytes, int] = {}
    for label in rng.choices(pool, weights, k=min(n, 200_000)):
        counts[label] = counts.get(label, 0) + 1
    scale = n // sum(counts.values())
    return {x: c * scale for x, c in counts.items()}, pool


def random_queries(seed: int, pool: list[bytes]) -> list[dict[bytes, Fraction]]:
    """K queries of M labels: half from the data's labels, half from 200 fresh ones, weights
    uniform in {1/4, …, 1}."""
    rng = random.Random(seed)
    fresh = [rng.randbytes(16) for _ in range(200)]
    queries = []
    for _ in range(K):
        support = rng.sample(pool, M // 2) + rng.sample(fresh, M - M // 2)
        queries.append({x: Fraction(rng.randint(1, 4), 4) for x in support})
    return queries


def failures(
    releaser: QueryReleaser,
    data: dict[bytes, int],
    queries: list[Any],
    seed: int,
    declared: QueryReleaser | None = None,
) -> int:
    """Releases (of RELEASES) whose largest error exceeds the declared simultaneous a (of
    *declared*, the releaser itself unless a broken one borrows another's declaration)."""
    n, grid = releaser.n, releaser.workload.grid
    a = (declared or releaser).accuracy(releaser.beta).simultaneous.a
    truths = [sum(w * data.get(x, 0) for x, w in q.items()) / n for q in queries]
    source = SeededSource(seed)
    missed = 0
    for _ in range(RELEASES):
        answers = releaser.start(data, source).answers(queries)
        worst = max(abs(answer - truth) for answer, truth in zip(answers, truths, strict=True))
        missed += worst * n * grid > a
    return missed


def rejected(missed: int, beta: Any) -> bool:
    """One-sided binomial test of H₀: failure rate ≤ β."""
    return float(binom.sf(missed - 1, RELEASES, float(beta))) < FALSE_ALARM


class LoudIndependent(IndependentLaplace):
    """Declares the accuracy of its parameters but adds 4 times the noise (a wrong scale)."""

    name = "test-loud-independent"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.noise_scale *= 4


class LoudProjection(SparseProjectionReleaser):
    """Declares the accuracy of its parameters but adds 100 times the noise (100² the
    variance)."""

    name = "test-loud-projection"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.noise_parameter *= 100 if self.noise == "laplace" else 100**2


@dataclasses.dataclass(frozen=True)
class _LoudDesign(Design):
    @property
    def answer_scale(self) -> Any:
        return 1000 * super().answer_scale


class LoudWeights(SparseMultiplicativeWeights):
    """Declares the accuracy of its parameters but answers its updates with 1000 times the
    noise (its sparse-vector noise, not its answers' noise, dominates the declared a)."""

    name = "test-loud-smw"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.design = _LoudDesign(**vars(self.design))


CASES: dict[str, tuple[type[QueryReleaser], type[QueryReleaser], dict[str, Any]]] = {
    "independent-laplace": (
        IndependentLaplace,
        LoudIndependent,
        {"n": 10**4, "epsilon": 1, "delta": mpq(1, 10**6)},
    ),
    "sparse-multiplicative-weights": (
        SparseMultiplicativeWeights,
        LoudWeights,
        {"n": 10**6, "epsilon": 1, "delta": mpq(1, 10**6)},
    ),
    "sparse-projection-laplace": (
        SparseProjectionReleaser,
        LoudProjection,
        {
            "universe": "bytes:16",
            "n": 10**4,
            "epsilon": 1,
            "delta": mpq(1, 10**6),
            "dimension": 4096,
        },
    ),
    "sparse-projection-gaussian": (
        SparseProjectionReleaser,
        LoudProjection,
        {
            "universe": "bytes:16",
            "n": 10**4,
            "epsilon": 1,
            "delta": mpq(1, 10**6),
            "dimension": 4096,
            "noise": "gaussian",
        },
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_declared_accuracy_holds_over_a_thousand_queries(case: str) -> None:
    honest_cls, broken_cls, params = CASES[case]
    params = {**params, "max_queries": K, "sparsity": M}
    honest: QueryReleaser = honest_cls(**params)
    a = honest.accuracy(honest.beta).simultaneous.a
    assert a < honest.n * honest.workload.grid, "a trivial declared accuracy would test nothing"
    data, pool = zipf_data(honest.n, 300, seed=1)
    queries = random_queries(2, pool)
    missed = failures(honest, data, queries, seed=3)
    assert not rejected(missed, honest.beta), f"{missed}/{RELEASES} releases exceeded a = {a}"
    broken: QueryReleaser = broken_cls(**params)
    assert rejected(failures(broken, data, queries, seed=4, declared=honest), honest.beta)


def test_the_test_data_is_zipf_over_byte_strings() -> None:
    data, pool = zipf_data(10**4, 300, seed=1)
    counts = sorted(data.values(), reverse=True)
    assert all(len(x) == 16 for x in data) and sum(counts) <= 10**4
    assert counts[0] > 10 * counts[len(counts) // 2]  # heavy head, long tail
    release = dpplug.create(
        "independent-laplace", n=10**4, epsilon=1, max_queries=K, sparsity=M
    ).start(data, SeededSource(5))
    assert len(release.answers(random_queries(2, pool)[:5])) == 5
