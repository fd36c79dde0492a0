"""PureSparseHistogram's mixing step (Balcer & Vadhan, full version Lemma 3.2 / Alg. 6.9;
docs/mechanisms.md#pure-sparse-histogram), exactly.

The random histogram of step 2 is enumerated with program.law on tiny universes: its support is
all of H_{n,n}(X) (the range of KeepHeavy) and its smallest probability is exactly
p_min = n!/((n+1)^n·|X|^n). The releaser's δ = 2^{−delta_bits} then satisfies the mixing condition

    δ ≤ ((e^ε − 1)/(e^ε + 1)) · (β₂/(1 − β₂)) · min_h Pr[random histogram = h]

with e^ε the releaser's guarantee, exactly (rationals), and is within a factor 4 of it (the
directed rounding loses at most two bits); its precision b gives total_variation_bound ≤ δ.
Finally the whole release program is enumerated (n = 1, precision lowered to 6 bits): it is the
β₂-mixture of KH′ and the random histogram, within (1 − β₂)·total_variation_bound of the mixture
with KeepHeavy.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache, partial
from itertools import combinations, product
from math import factorial
from typing import Any

import pytest
from gmpy2 import mpq

import dpplug
from dpplug import program
from dpplug.plugins.histograms.keep_heavy import keep_heavy
from dpplug.plugins.histograms.order_statistics import total_variation_bound
from dpplug.plugins.histograms.pure_sparse import random_histogram

from support.histograms import plugin_registry, total_variation


def all_sparse_histograms(size: int, n: int) -> set[tuple[tuple[int, int], ...]]:
    """H_{n,n}(X): at most n bins, counts in [1, n], in index order."""
    return {
        tuple(zip(bins, counts, strict=True))
        for k in range(n + 1)
        for bins in combinations(range(size), k)
        for counts in product(range(1, n + 1), repeat=k)
    }


@cache
def random_histogram_law(size: int, n: int) -> dict[Any, Any]:
    return program.law(partial(random_histogram, size, n))


SMALL = [(8, 2), (9, 2), (12, 3), (4, 1), (20, 1)]


@pytest.mark.parametrize(("size", "n"), SMALL)
def test_random_histogram_has_full_support_on_the_range_of_keep_heavy(size: int, n: int) -> None:
    law = random_histogram_law(size, n)
    assert sum(law.values()) == 1
    assert set(law) == all_sparse_histograms(size, n)
    smallest = min(law.values())
    bound = mpq(factorial(n), (n + 1) ** n * size**n)  # the releaser's p_min (module docstring)
    assert smallest == bound  # attained by the histograms with n bins
    assert smallest >= mpq(1, (6 * size) ** n)  # the paper's (6|X|)^{−n}


CASES = [
    {"universe": "range:0:7", "n": 2, "epsilon": 2, "sampler": "geosample"},
    {"universe": "range:0:7", "n": 2, "epsilon": 1},
    {"universe": "range:0:8", "n": 2, "epsilon": Fraction(1, 2), "beta": Fraction(1, 7)},
    {"universe": "range:0:11", "n": 3, "epsilon": 1, "sampler": "fixedpoint-geometric"},
    {"universe": "range:0:3", "n": 1, "epsilon": 4, "sampler": "geosample"},
    {"universe": "range:0:19", "n": 1, "epsilon": 1, "beta": Fraction(1, 3)},
    {"universe": "range:0:7", "n": 2, "sampler": "ternary-response"},
]


def case_id(params: dict[str, Any]) -> str:
    return "-".join(f"{v}" for v in params.values())


def allowed_delta(releaser: Any, smallest: Any) -> Any:
    """The largest δ the mixing lemma allows, exactly."""
    exp_epsilon, beta2 = releaser.guarantee.exp_epsilon, releaser.beta2
    return (exp_epsilon - 1) / (exp_epsilon + 1) * beta2 / (1 - beta2) * smallest


@pytest.mark.parametrize("params", CASES, ids=case_id)
def test_delta_satisfies_the_mixing_condition_exactly(params: dict[str, Any]) -> None:
    releaser = plugin_registry().create("pure-sparse-histogram", **params)
    size, n = releaser.universe.size, releaser.n
    assert releaser.guarantee.pure
    assert releaser.guarantee.exp_epsilon == releaser.sampler.guarantee.exp_epsilon**2
    beta2 = releaser.beta2
    assert beta2 == mpq(1, int(1 / beta2)) and beta2 <= mpq(params.get("beta", mpq(1, 20))) / 6

    smallest = min(random_histogram_law(size, n).values())
    allowed = allowed_delta(releaser, smallest)
    delta = mpq(1, 1 << releaser.delta_bits)
    assert delta <= allowed < 4 * delta  # valid, and at most two bits below the largest


@pytest.mark.parametrize("params", CASES, ids=case_id)
def test_precision_bits_give_total_variation_at_most_delta(params: dict[str, Any]) -> None:
    releaser = plugin_registry().create("pure-sparse-histogram", **params)
    n, bits, delta = releaser.n, releaser.bits, mpq(1, 1 << releaser.delta_bits)
    assert total_variation_bound(n, n + 1, bits) <= delta
    assert total_variation_bound(n, n + 1, bits - 1) > delta  # the smallest such b
    assert releaser.derived["precision_bits"] == bits


@pytest.mark.parametrize(
    ("universe", "n"), [("bytes:8", 50), ("text:4", 200), ("range:0:999999", 1000)]
)
def test_mixing_condition_on_large_universes(universe: str, n: int) -> None:
    """Beyond enumeration: the condition with p_min, which the small cases show is the true
    minimum, in exact rationals."""
    releaser = dpplug.create("pure-sparse-histogram", universe=universe, n=n, epsilon=1)
    size = releaser.universe.size
    allowed = allowed_delta(releaser, mpq(factorial(n), (n + 1) ** n * size**n))
    delta = mpq(1, 1 << releaser.delta_bits)
    assert delta <= allowed < 4 * delta
    assert total_variation_bound(n, n + 1, releaser.bits) <= delta


@pytest.mark.parametrize(
    ("universe", "n", "sampler"),
    [("bytes:127", 4096, "geosample"), ("text:50", 1000, "geosample"), ("range:0:3", 1, None)],
)
def test_delta_is_valid_and_tight_at_the_largest_universe(
    universe: str, n: int, sampler: str | None
) -> None:
    """|X| up to 2^1016 (the exact bound has millions of bits, checked in exact rationals)."""
    extra = {"sampler": sampler} if sampler else {}
    releaser = dpplug.create("pure-sparse-histogram", universe=universe, n=n, epsilon=1, **extra)
    size = releaser.universe.size
    allowed = allowed_delta(releaser, mpq(factorial(n), (n + 1) ** n * size**n))
    delta = mpq(1, 1 << releaser.delta_bits)
    assert delta <= allowed < 4 * delta


@pytest.mark.parametrize(("size", "data"), [(4, {3: 1}), (4, {}), (5, {0: 1})])
def test_release_program_is_the_mixture_with_keep_heavy(
    size: int, data: dict[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole release, enumerated: with probability β₂ the random histogram, else KH′ with
    the approximate order statistics, within (1 − β₂)·total_variation_bound of the same
    mixture with KeepHeavy. The precision is lowered to 6 bits so that the law is enumerable
    (and the approximation visible)."""
    releaser = dpplug.create(
        "pure-sparse-histogram",
        universe=f"range:0:{size - 1}",
        n=1,
        epsilon=2,
        sampler="geosample",
        beta=Fraction(1, 2),
    )
    beta2 = releaser.beta2
    assert beta2 == mpq(1, 12)
    monkeypatch.setattr(releaser, "bits", 6)
    counts = releaser.true_counts(data)
    law = program.law(partial(releaser.program, counts))
    heavy = program.law(
        partial(keep_heavy, releaser.sampler, size, counts.indices, [int(c) for c in counts.counts])
    )
    mixture = {
        h: (1 - beta2) * heavy.get(h, 0) + beta2 * p
        for h, p in random_histogram_law(size, 1).items()
    }
    assert sum(law.values()) == 1 and set(law) == set(mixture)
    assert 0 < total_variation(law, mixture) <= (1 - beta2) * total_variation_bound(1, 2, 6)
