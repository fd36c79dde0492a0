"""m-sparse queries answered from a histogram release (``dpplug.HistogramQueries``): answers are
the rounded query on the released counts, exactly; the declared α = m·a/n holds for the worst
m-sparse query of each release (a binomial test at false-alarm rate 10⁻⁶, with a power check);
bad queries and releases are refused."""

from __future__ import annotations

from fractions import Fraction

import pytest
from scipy.stats import binom

import dpplug
from dpplug.errors import BadData, BadParameter

BETA = Fraction(1, 20)
UNIVERSE, SIZE, N = "range:0:199", 200, 60
DATA = dict(enumerate([12, 9, 7, 5, 4, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]))  # 60 rows


def release(name: str, seed: int, **params: object) -> object:
    releaser = dpplug.create(name, universe=UNIVERSE, n=N, epsilon=1, beta=BETA, **params)
    return releaser.release(DATA, dpplug.SeededSource(seed))


def test_answers_are_the_rounded_query_on_the_released_counts() -> None:
    released = release("basic-histogram", 1)
    answers = dpplug.HistogramQueries(released, n=N, sparsity=3, grid=8)
    query = {0: 1, 5: 0.3, 199: Fraction(1, 16)}  # 0.3 → 2/8, 1/16 → 1/8 (halves up)
    weights = {0: 8, 5: 2, 199: 1}
    total = sum(w * released.count(x) for x, w in weights.items())
    assert answers.answer(query) == Fraction(min(max(total, 0), N * 8), N * 8)
    assert answers.guarantee == released.guarantee
    a = released.accuracy.simultaneous.a
    assert answers.alpha == Fraction(3 * a, N) and answers.accuracy.simultaneous.beta == BETA
    compact = release("compact-histogram", 2)
    from_compact = dpplug.HistogramQueries(compact, n=N, sparsity=2)
    expected = Fraction(compact.count(3) + compact.count(4), N)
    assert from_compact.answers([{3: 1, 4: 1}]) == [min(max(expected, Fraction(0)), Fraction(1))]


@pytest.mark.parametrize("name", ["basic-histogram", "stability-histogram"])
def test_the_worst_m_sparse_query_of_each_release_is_within_alpha(name: str) -> None:
    """For each release the query of weight 1 on the m labels whose errors add up most (one
    sign) is the worst m-sparse one; its error exceeds α in at most a β share of releases."""
    extra = {"delta": Fraction(1, 10**4)} if name == "stability-histogram" else {}
    m, releases, failures, under = 4, 400, 0, 0
    for seed in range(releases):
        released = release(name, 1000 + seed, **extra)
        answers = dpplug.HistogramQueries(released, n=N, sparsity=m)
        errors = {x: released.count(x) - DATA.get(x, 0) for x in range(SIZE)}
        worst = 0
        for sign in (1, -1):
            labels = sorted(errors, key=lambda x: -sign * errors[x])[:m]
            true = Fraction(sum(DATA.get(x, 0) for x in labels), N)
            worst = max(worst, abs(answers.answer(dict.fromkeys(labels, 1)) - true))
        failures += worst > answers.alpha
        under += worst > answers.alpha / 4
    limit = int(binom.isf(1e-6, releases, float(BETA))) + 1  # Pr[Bin ≥ limit] ≤ 10⁻⁶
    assert failures < limit
    assert under >= limit  # power: a quarter of α is flagged


def test_bad_queries_and_releases_are_refused() -> None:
    answers = dpplug.HistogramQueries(release("basic-histogram", 3), n=N, sparsity=2)
    with pytest.raises(BadData, match="more than 2 labels"):
        answers.answer({0: 1, 1: 1, 2: 1})
    with pytest.raises(BadData):
        answers.answer({500: 1})  # not in the universe
    with pytest.raises(BadData, match="in \\[0, 1\\]"):
        answers.answer({0: 2})
    with pytest.raises(BadParameter, match="histogram release"):
        dpplug.HistogramQueries({0: 1}, n=N, sparsity=2)  # type: ignore[arg-type]
    with pytest.raises(BadParameter, match="sparsity must be a positive int"):
        dpplug.HistogramQueries(release("basic-histogram", 3), n=N, sparsity=0)
