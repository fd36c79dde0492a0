"""KeepHeavy and its exact simulation KH′ (Balcer & Vadhan, full version Alg. 6.1, Alg. 6.4,
Prop. 6.5, App. A; docs/mechanisms.md#keepheavy-and-kh): identical output laws, by exact
enumeration of the two programs (program.law) on tiny universes. KH′ uses the corrected binomial
order statistics; with
the ITCS order statistics instead, the laws differ, which shows the comparison has power."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import partial
from itertools import combinations, permutations, product
from typing import Any

import pytest
from gmpy2 import mpq

import dpplug
from dpplug import program
from dpplug.plugins.histograms.keep_heavy import cut, distinct_elements, keep_heavy, kh_prime
from dpplug.plugins.histograms.order_statistics import exact_order_statistics
from dpplug.program import Categorical, Program

from support.histograms import plugin_registry, total_variation

Cdf = Callable[[int], int]

SAMPLERS = {
    "geosample": {"n": 2, "epsilon": Fraction(1, 2)},
    "fastsample": {"n": 2, "epsilon": Fraction(1, 2), "gamma": Fraction(1, 10)},
    "fixedpoint-geometric": {"n": 2, "epsilon": 1},
    "ternary-response": {},
}
#: Datasets over |X| = 5 with at most n = 2 rows, as (nonempty indices, counts).
DATASETS = [((), ()), ((0,), (1,)), ((4,), (2,)), ((1, 3), (1, 1)), ((0, 2), (1, 1)), ((2,), (1,))]


def sampler(name: str) -> Any:
    return plugin_registry().create(name, **SAMPLERS[name])


def empty_cdf(noise: Any) -> Cdf:
    return lambda v: 0 if v < 0 else int(noise.scaled_cdf(v, 0))


def itcs_order_statistics(cdf: Cdf, top: int, m: int, k: int) -> Program[tuple[int, ...]]:
    """ITCS OrdSample (ITCS version Alg. 6) as a program: v_i has CDF (F(z)/F(v_{i−1}))^{m−i}."""
    values: list[int] = []
    previous = top
    for i in range(k):
        power = m - i
        total = cdf(previous) ** power
        steps = {z: cdf(z) ** power - cdf(z - 1) ** power for z in range(previous + 1)}
        previous = yield Categorical({z: mpq(s, total) for z, s in steps.items() if s})
        values.append(previous)
    return tuple(values)


def all_sparse_histograms(size: int, n: int) -> set[tuple[tuple[int, int], ...]]:
    """H_{n,n}(X): at most n bins, counts in [1, n], in index order."""
    result = set()
    for k in range(n + 1):
        for bins in combinations(range(size), k):
            for counts in product(range(1, n + 1), repeat=k):
                result.add(tuple(zip(bins, counts, strict=True)))
    return result


def laws(
    name: str,
    size: int,
    data: tuple[tuple[int, ...], tuple[int, ...]],
    order: Callable[..., Program[tuple[int, ...]]],
) -> tuple[dict[Any, Any], dict[Any, Any]]:
    noise = sampler(name)
    top = noise.count_bounds[1]
    reference = program.law(partial(keep_heavy, noise, size, *data))
    statistics = partial(order, empty_cdf(noise), top)
    simulated = program.law(partial(kh_prime, noise, size, *data, lambda m, k: statistics(m, k)))
    return reference, simulated


@pytest.mark.parametrize("data", DATASETS, ids=str)
@pytest.mark.parametrize("name", SAMPLERS)
def test_kh_prime_has_the_law_of_keep_heavy(name: str, data: Any) -> None:
    reference, simulated = laws(name, 5, data, exact_order_statistics)
    assert sum(reference.values()) == 1
    assert simulated == reference
    # KeepHeavy's range is H_{n,n}(X), and here all of it has positive probability.
    assert set(reference) == all_sparse_histograms(5, 2)


@pytest.mark.parametrize(
    ("size", "data"),
    [(3, ((), ())), (3, ((1,), (1,))), (4, ((0,), (1,))), (6, ((5,), (1,)))],
)
def test_kh_prime_has_the_law_of_keep_heavy_for_n_one(size: int, data: Any) -> None:
    noise = dpplug.create("geosample", n=1, epsilon=Fraction(1, 3))
    reference = program.law(partial(keep_heavy, noise, size, *data))
    order = partial(exact_order_statistics, empty_cdf(noise), 1)
    simulated = program.law(partial(kh_prime, noise, size, *data, lambda m, k: order(m, k)))
    assert simulated == reference


@pytest.mark.parametrize("data", DATASETS[:3], ids=str)
@pytest.mark.parametrize("name", ["geosample", "fastsample"])
def test_kh_prime_with_itcs_order_statistics_is_not_keep_heavy(name: str, data: Any) -> None:
    reference, simulated = laws(name, 5, data, itcs_order_statistics)
    assert sum(simulated.values()) == 1
    assert total_variation(simulated, reference) > mpq(1, 1000)


def test_distinct_elements_are_a_uniform_sequence() -> None:
    """App. A: a uniformly random sequence of k distinct elements of [0, size) ∖ taken."""
    for size, taken, k in [(7, (1, 4), 3), (6, (), 6), (9, (0, 1, 2, 8), 5), (4, (3,), 1)]:

        def as_tuple(size: int = size, taken: Any = taken, k: int = k) -> Program[tuple[int, ...]]:
            return tuple((yield from distinct_elements(size, taken, k)))

        law = program.law(as_tuple)
        free = [x for x in range(size) if x not in taken]
        sequences = set(permutations(free, k))
        assert set(law) == sequences
        assert set(law.values()) == {mpq(1, len(sequences))}


def test_cut_keeps_counts_strictly_above_the_n_plus_first() -> None:
    assert cut([(0, 2), (1, 2), (2, 1)], 1) == ()  # a tie at the top: never "the top n"
    assert cut([(0, 2), (1, 2), (2, 1)], 2) == ((0, 2), (1, 2))
    assert cut([(3, 1), (0, 2), (1, 1), (2, 0)], 2) == ((0, 2),)
    assert cut([(5, 3), (2, 1), (1, 0)], 2) == ((2, 1), (5, 3))  # index order
    assert cut([(5, 3), (2, 1)], 2) == ((2, 1), (5, 3))  # at most n candidates: all of them
