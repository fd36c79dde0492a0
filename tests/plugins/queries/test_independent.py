"""The independent-Laplace baseline: each query with its own discrete Laplace noise of scale
W/ε₀, composed over k (basic for δ = 0, otherwise the optimal composition theorem up to 32,768
queries and the better of basic and advanced beyond); accuracy
from the exact tail, per query at β and for all k at β/k."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from gmpy2 import mpq
from scipy.stats import binomtest

import dpplug
from dpplug.composition import step_budget
from dpplug.discrete_noise import laplace_tail
from dpplug.guarantee import within_budget
from dpplug.randomness import SeededSource

PARAMS = {"n": 200, "epsilon": 1, "max_queries": 20, "sparsity": 3, "grid": 16}


#: The ε the releaser composes to when asked for ε = 1: 2^-10 below it, so that the rational
#: bound on e^ε it declares is at most e^1 (declared_loss).
RUN = 1 - mpq(1, 1 << 10)


def test_pure_releaser_composes_by_basic_composition() -> None:
    releaser = dpplug.create("independent-laplace", **PARAMS)
    assert releaser.budget.rule == "basic" and releaser.budget.epsilon0 == RUN / 20
    assert releaser.noise_scale == 16 / (RUN / 20)  # sensitivity W over ε₀
    assert releaser.guarantee.pure and within_budget(releaser.guarantee, 1)
    assert releaser.guarantee.epsilon == pytest.approx(float(RUN), rel=1e-15)  # 2^-10 below 1
    assert releaser.guarantee.neighbouring.relation is dpplug.Relation.ADD_REMOVE


@pytest.mark.parametrize("epsilon", [Fraction(1, 10**30), 0.1, 1, 16])
@pytest.mark.parametrize("delta", [0, Fraction(1, 10**6)])
def test_the_declared_loss_is_at_most_the_one_asked_for(epsilon: object, delta: object) -> None:
    """e^ε and δ declared are at most the ones asked for, exactly (they were 5e-21 above: a
    compositor whose share was the request refused the releaser), and ε is spent up to 2^-10."""
    releaser = dpplug.create(
        "independent-laplace", **{**PARAMS, "epsilon": epsilon, "delta": delta}
    )
    assert within_budget(releaser.guarantee, epsilon, delta)
    assert not within_budget(releaser.guarantee, mpq(epsilon) * (1 - mpq(1, 1 << 9)), delta)


def test_approximate_releaser_takes_the_best_composition() -> None:
    for k, rule in [(1, "basic"), (2, "optimal"), (60, "optimal"), (40_000, "advanced")]:
        releaser = dpplug.create(
            "independent-laplace", **{**PARAMS, "max_queries": k, "delta": Fraction(1, 10**6)}
        )
        assert releaser.budget == step_budget(RUN, mpq(1, 10**6), k)
        assert releaser.budget.rule == rule
        assert releaser.guarantee.delta == (0 if rule == "basic" else mpq(1, 10**6))


def test_accuracy_is_the_exact_laplace_tail() -> None:
    releaser = dpplug.create("independent-laplace", **PARAMS)
    beta = Fraction(1, 20)
    accuracy = releaser.accuracy(beta)
    scale = releaser.noise_scale
    levels = [(accuracy.per_query.a, mpq(1, 20)), (accuracy.simultaneous.a, mpq(1, 400))]
    for bound, level in levels:
        assert laplace_tail(scale, bound) <= level < laplace_tail(scale, bound - 1)
    with mpmath.workdps(40):
        q = mpmath.exp(-1 / mpmath.mpf(Fraction(int(scale.numerator), int(scale.denominator))))
        assert 2 * q ** (accuracy.per_query.a + 1) / (1 + q) <= mpmath.mpf(beta)


def test_answers_are_clamped_noisy_answers_with_the_declared_per_query_error() -> None:
    """600 sessions: the first answer's error exceeds the declared per-query a in at most a
    β = 1/20 fraction (binomial test, false alarm 1e-6), and a mechanism answering with twice
    the error would be caught by the same test."""
    releaser = dpplug.create("independent-laplace", **PARAMS)
    data = {"a": 60, "b": 30}
    a = releaser.accuracy(Fraction(1, 20)).per_query.a
    source = SeededSource(21)
    errors = []
    for _ in range(600):
        answer = releaser.start(data, source).answer({"a": 1, "b": Fraction(1, 2)})
        assert 0 <= answer <= 1
        errors.append(abs(answer - Fraction(75, 200)) * 200 * 16)
    errors_array = np.array([float(e) for e in errors])
    misses = int(np.count_nonzero(errors_array > a))
    assert binomtest(misses, 600, 0.05, alternative="greater").pvalue > 1e-6
    doubled = int(np.count_nonzero(2 * errors_array > a))
    assert binomtest(doubled, 600, 0.05, alternative="greater").pvalue < 1e-6
    median = float(releaser.noise_scale) * math.log(2)  # of |Laplace| at this scale, about
    assert math.isclose(float(np.median(errors_array)), median, rel_tol=0.3)
