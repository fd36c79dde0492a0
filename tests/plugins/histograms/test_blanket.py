"""blanket-sparse-histogram (docs/blanket-histogram.md): the release law of the code against an
independent enumeration of the mechanism, the declared guarantee on every replace-one *and*
add/remove pair of tiny universes (the empty dataset included), the selection ramp's properties,
the padding's exact law, the wide-index arithmetic, the cost's independence of the universe,
canonical order, bad parameters, and the declared accuracy (sound, within 10% of a lower bound
on the truth, within 1.5× of pure-sparse-histogram's)."""

from __future__ import annotations

import math
import random
import re
import warnings
from fractions import Fraction
from itertools import combinations, product
from pathlib import Path
from typing import Any

import gmpy2
import numpy as np
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.plugins.histograms.padding import Padding, floyd, floyd_draws
from dpplug.plugins.histograms.wide_indices import WORD, Indices

NAME = "blanket-sparse-histogram"
CASES = [
    {"universe": "range:0:4", "n": 2, "epsilon": 2, "k": 1, "selection_share": Fraction(1, 2)},
    {"universe": "range:0:4", "n": 2, "epsilon": 1, "k": 2, "sampler": "geosample"},
    {"universe": "range:0:3", "n": 1, "epsilon": 3, "k": 2, "selection_share": Fraction(3, 4)},
    {"universe": "range:0:5", "n": 2, "epsilon": Fraction(1, 2), "k": 1},
]


def create(**params: Any) -> Any:
    return dpplug.create(NAME, **params)


def datasets(size: int, n: int) -> list[tuple[int, ...]]:
    """Every count vector over *size* labels with at most *n* rows."""
    return [c for c in product(range(n + 1), repeat=size) if sum(c) <= n]


def independent_law(releaser: Any, counts: tuple[int, ...]) -> dict[Any, Any]:
    """The release law from the mechanism's definition: for every set S of L labels,
    Pr[S] = Σ_{J ⊆ S ∩ A} Π_{x∈J} q(h_x)·Π_{x∈A∖J} (1 − q(h_x)) / C(|X| − |J|, L − |J|), then
    independent noisy counts on S, the positive ones released."""
    size, labels = len(counts), releaser.labels
    support = [x for x, c in enumerate(counts) if c]
    keep = {x: releaser.selection.keep(counts[x]) for x in support}
    law: dict[Any, Any] = {}
    for chosen in combinations(range(size), labels):
        inside = [x for x in support if x in chosen]
        mass = mpq(0)
        for r in range(len(inside) + 1):
            for kept in combinations(inside, r):
                p = mpq(1, math.comb(size - r, labels - r))
                for x in support:
                    p *= keep[x] if x in kept else 1 - keep[x]
                mass += p
        pmfs = [releaser.sampler.pmf(counts[x]) for x in chosen]
        for noisy in product(*(list(pmf.items()) for pmf in pmfs)):
            p = mass
            for _, q in noisy:
                p *= q
            out = tuple((x, z) for x, (z, _) in zip(chosen, noisy, strict=True) if z > 0)
            law[out] = law.get(out, mpq(0)) + p
    return {out: p for out, p in law.items() if p}


def worst_ratio(first: dict[Any, Any], second: dict[Any, Any]) -> Any:
    """The largest likelihood ratio between two laws in either direction (None: infinite)."""
    worst = mpq(1)
    for out in first.keys() | second.keys():
        p, q = first.get(out, mpq(0)), second.get(out, mpq(0))
        if not p or not q:
            return None
        worst = max(worst, p / q, q / p)
    return worst


@pytest.mark.parametrize("case", CASES, ids=str)
def test_release_law_is_the_independent_enumeration_and_private_for_both_relations(
    case: dict[str, Any],
) -> None:
    releaser = create(**case)
    size, n = releaser.universe.size, releaser.n
    laws = {}
    for counts in datasets(size, n):
        law = releaser.release_law({x: c for x, c in enumerate(counts) if c})
        assert sum(law.values(), mpq(0)) == 1
        assert law == independent_law(releaser, counts), counts
        laws[counts] = law
    bound, pairs = releaser.guarantee.exp_epsilon, 0
    for counts in laws:
        for i in range(size):
            added = tuple(c + (x == i) for x, c in enumerate(counts))
            if added in laws:  # one row added (from the empty dataset too)
                ratio = worst_ratio(laws[counts], laws[added])
                assert ratio is not None and ratio <= bound, (counts, added, ratio)
                pairs += 1
            for j in range(size):
                moved = tuple(c + (x == i) - (x == j) for x, c in enumerate(counts))
                if i != j and counts[j] and moved > counts:  # one row replaced
                    ratio = worst_ratio(laws[counts], laws[moved])
                    assert ratio is not None and ratio <= bound, (counts, moved, ratio)
                    pairs += 1
    assert pairs >= 2 * size


EPSILONS = [Fraction(1, 100), Fraction(1, 2), 1, 3, 20, 64]


@pytest.mark.parametrize("epsilon", EPSILONS, ids=str)
@pytest.mark.parametrize("sampler", ["oblivious-laplace", "fixedpoint-geometric", "geosample"])
def test_guarantee_spends_epsilon_and_never_more(epsilon: Any, sampler: str) -> None:
    """Λ = (λ·λ_M)² with e^{0.98ε} ≤ Λ ≤ e^ε (rigorous 512-bit bounds on e^ε; geosample spends
    at least 63/64 of its share)."""
    releaser = create(universe="bytes:8", n=1000, epsilon=epsilon, sampler=sampler)
    lam, lam_m = releaser.selection.ratio, releaser.sampler.guarantee.exp_epsilon
    exp_epsilon = releaser.guarantee.exp_epsilon
    assert exp_epsilon == (lam * lam_m) ** 2 and releaser.guarantee.pure
    with gmpy2.context(precision=512, round=gmpy2.RoundDown):
        below = mpq(gmpy2.exp(gmpy2.mpfr(mpq(epsilon))))
    with gmpy2.context(precision=512, round=gmpy2.RoundUp):
        spent = mpq(gmpy2.exp(gmpy2.mpfr(mpq(epsilon) * mpq(98, 100))))
    assert spent <= exp_epsilon <= below


@pytest.mark.parametrize(
    "params",
    [
        {"universe": "bytes:8", "n": 10**4, "epsilon": 1},
        {"universe": "range:0:99", "n": 30, "epsilon": Fraction(1, 10), "k": 5},
        {"universe": "bytes:127", "n": 50, "epsilon": 2, "selection_share": Fraction(1, 16)},
    ],
    ids=["bytes:8", "small", "2^1016"],
)
def test_selection_ramp_has_every_property_the_proof_needs(params: dict[str, Any]) -> None:
    """q(1) small enough for the blanket and for dropping, both ratios ≤ λ, q < 1, checked
    here from the steps (the ramp checks itself too)."""
    releaser = create(**params)
    ramp = releaser.selection
    lam, lam_m, rho = ramp.ratio, releaser.sampler.guarantee.exp_epsilon, releaser.rho
    top = 1 << ramp.bits
    q1 = mpq(ramp.steps[0], top)
    assert 1 + q1 * (rho - 1) <= lam and 1 / (1 - q1) <= lam * lam_m
    assert rho == mpq(releaser.universe.size - releaser.n + 1, releaser.k + 1)
    for low, high in zip(ramp.steps, ramp.steps[1:], strict=False):
        assert low <= high <= lam * low and top - low <= lam * (top - high)
    assert 0 < ramp.steps[0] and ramp.steps[-1] < top
    if len(ramp.steps) < releaser.n:  # the ramp reached its plateau: it drops almost nothing
        assert ramp.drop(releaser.n) * releaser.n < mpq(1, 1 << 60)
    assert ramp.keep(0) == 0 and ramp.keep(len(ramp.steps) + 5) == ramp.keep(len(ramp.steps))


@pytest.mark.parametrize(("size", "taken", "count"), [(6, (), 3), (7, (1, 4), 3), (5, (0,), 4)])
def test_padding_law_is_uniform_over_the_free_sets(
    size: int, taken: tuple[int, ...], count: int
) -> None:
    law = Padding(size, Indices.of(taken), count).law()
    free = [x for x in range(size) if x not in taken]
    assert law == {s: mpq(1, math.comb(len(free), count)) for s in combinations(free, count)}


def test_vectorised_floyd_is_the_sequential_algorithm_on_the_same_draws() -> None:
    """The fast path (no collision possible) and the step-by-step one agree, on small free sets
    where collisions are common and on 2^64-sized ones; drawn sets are distinct, in range and
    of the right size."""
    for free, count in [(10, 4), (10, 10), (50, 3), (WORD + 7, 20), (3 * WORD, 40), (1 << 200, 9)]:
        for seed in range(20):
            draws = floyd_draws(free, count, dpplug.SeededSource(seed))
            chosen = floyd(draws, free).tolist()
            values = (
                [(h << 64) | w for h, w in zip(draws[0].tolist(), draws[1].tolist(), strict=True)]
                if isinstance(draws, tuple)
                else draws
            )
            assert all(0 <= t <= free - count + i for i, t in enumerate(values))
            assert chosen == floyd(values, free).tolist()  # the sequential steps
            assert len(set(chosen)) == count == len(chosen) and chosen == sorted(chosen)
            assert all(0 <= r < free for r in chosen)


def test_wide_indices_against_python_ints() -> None:
    rng = random.Random(9)  # test inputs only
    pools = [range(0, 40), range(WORD - 30, WORD + 30), range((1 << 130) - 5, (1 << 130) + 5)]
    for _ in range(300):
        universe = sorted({rng.choice(pool) for pool in pools for _ in range(rng.randint(0, 12))})
        taken = sorted(rng.sample(universe, rng.randint(0, len(universe))))
        free = [x for x in universe if x not in taken]
        sub = Indices.of(taken)
        ranks = sorted(rng.sample(range(len(free)), rng.randint(0, len(free))))
        # free labels of ranks, when the universe is all of [0, max]: checked on a dense copy
        dense_free = [x for x in range(0, 45) if x not in taken]
        small_ranks = [r for r in ranks if r < len(dense_free)]
        assert sub.shifted_by_rank(Indices.of(small_ranks)).tolist() == [
            dense_free[r] for r in small_ranks
        ]
        values = Indices.of(universe)
        assert values.tolist() == universe
        queries = sorted({*taken, *(x + 1 for x in taken)})
        assert values.lookup(Indices.of(queries)).tolist() == [
            universe.index(x) if x in universe else -1 for x in queries
        ]
        mask = np.array([rng.random() < 0.5 for _ in universe], dtype=bool)
        assert values.pick(mask).tolist() == [x for x, m in zip(universe, mask, strict=True) if m]
        assert sub.union(Indices.of(free)).tolist() == universe


def test_free_labels_past_2_to_the_64() -> None:
    """Ranks whose free label crosses 2^64 (taken labels below it push them over)."""
    taken = Indices.of([5, WORD - 3, WORD - 1, WORD + 2])
    ranks = Indices.of([0, 4, 5, WORD - 5, WORD - 4, WORD - 3, WORD - 2, WORD + 10])
    expected = []
    taken_list = taken.tolist()
    for r in ranks.tolist():
        label = r
        for t in taken_list:  # the r-th free label: step over each taken label at or below it
            if t <= label:
                label += 1
        expected.append(label)
    assert taken.shifted_by_rank(ranks).tolist() == expected


@pytest.mark.parametrize("universe", ["range:0:9999", "bytes:8", "bytes:16", "bytes:127"])
def test_cost_does_not_grow_with_the_universe(universe: str) -> None:
    """The draws of a release are the selection's (one per nonempty bin), the padding's (one
    per padded label, two words past 2^64, fewer than two tries each on average) and the
    noise's (two per chosen label), whatever |X|: from 10^4 to 2^1016 labels."""
    releaser = create(universe=universe, n=200, epsilon=1)
    source = dpplug.SeededSource(12)
    data = [releaser.universe.label(i) for i in range(0, 600, 3)]  # 200 rows, 200 bins
    release = releaser.release(data, source)
    labels = releaser.labels
    assert 200 + labels + 2 * labels <= source.draws <= 200 + 6 * labels + 2 * labels
    assert len(release) <= labels


def test_releases_are_in_canonical_order_on_both_sides_of_2_to_the_64() -> None:
    releaser = create(universe="bytes:8", n=300, epsilon=4, k=20000)
    size = releaser.universe.size
    high = [releaser.universe.label(size - 1 - i) for i in range(100)]  # indices past 2^64
    low = [releaser.universe.label(i) for i in range(100)]
    rows = (high + low + high)[:300]
    shuffled = list(rows)
    random.Random(1).shuffle(shuffled)
    first = releaser.release(rows, dpplug.SeededSource(2))
    assert list(first.indices) == sorted(set(first.indices))
    assert any(i >= WORD for i in first.indices) and any(i < WORD for i in first.indices)
    assert first.to_dict() == releaser.release(shuffled, dpplug.SeededSource(2)).to_dict()
    assert list(first.to_dict()) == [releaser.universe.label(i) for i in first.indices]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"universe": "range:0:2", "n": 3}, "|X| ≥ n \\+ 1"),
        ({"universe": "range:0:9", "n": 4, "k": 7}, "use k ≤ 6"),
        ({"universe": "range:0:9", "n": 4, "selection_share": Fraction(1, 10**6)}, "larger"),
        ({"universe": "range:0:9", "n": 4, "sampler": "discrete-laplace"}, "sampler"),
        ({"universe": "range:0:9", "n": 4, "epsilon": None}, "epsilon"),
        ({"universe": "range:0:9", "n": 4, "selection_share": 1}, "selection_share"),
        ({"universe": "range:0:9", "n": 4, "k": 0}, "k"),
    ],
)
def test_bad_parameters_say_what_to_change(params: dict[str, Any], message: str) -> None:
    given = {"epsilon": 1, **params}
    with pytest.raises(dpplug.BadParameter, match=message):
        create(**{k: v for k, v in given.items() if v is not None})


BETA = Fraction(1, 20)


@pytest.mark.parametrize(
    ("n", "epsilon", "universe"),
    [(10**4, 1, "bytes:8"), (1000, Fraction(1, 2), "bytes:4"), (2000, 2, "range:0:99999")],
    ids=str,
)
def test_simultaneous_bound_is_sound_and_within_ten_percent_of_a_lower_bound(
    n: int, epsilon: Any, universe: str
) -> None:
    """Two datasets the true worst case is at least as bad as: the empty one (L empty labels
    chosen, each failing if its noise exceeds a, exactly from the sampler's pmf), and ⌊n/(a+1)⌋
    bins of count a + 1 (each fails if dropped and not padded back, probability at least
    (1 − q(a+1))·(1 − L/(|X| − n))). The declared a is at most 10% above the smallest a at which
    both are at most β; soundness is the bound the releaser proves (union over L labels and the
    drops), recomputed here."""
    releaser = create(universe=universe, n=n, epsilon=epsilon)
    declared = releaser.accuracy(BETA).simultaneous.a
    zero, labels, size = releaser.sampler.pmf(0), releaser.labels, releaser.universe.size
    ramp = releaser.selection

    def lower(a: int) -> Any:
        empty = 1 - (1 - sum((p for z, p in zero.items() if z > a), mpq(0))) ** labels
        bins = n // (a + 1)
        lost = ramp.drop(a + 1) * (1 - mpq(labels, size - n))
        return max(empty, 1 - (1 - lost) ** bins)

    truth = next(a for a in range(n + 1) if lower(a) <= BETA)
    assert truth <= declared <= 1.1 * truth, (truth, declared)
    tails = max(
        sum((p for z, p in releaser.sampler.pmf(c).items() if abs(z - c) > declared), mpq(0))
        for c in range(0, n + 1, max(1, n // 50))
    )
    assert labels * tails + n * ramp.drop(declared + 1) / (declared + 1) <= BETA


@pytest.mark.parametrize(("n", "epsilon"), [(10**4, 1), (10**5, 1), (10**4, Fraction(1, 2))])
def test_simultaneous_error_within_one_and_a_half_of_pure_sparse(n: int, epsilon: Any) -> None:
    blanket = create(universe="bytes:8", n=n, epsilon=epsilon).accuracy(BETA).simultaneous.a
    pure = dpplug.create("pure-sparse-histogram", universe="bytes:8", n=n, epsilon=epsilon)
    assert blanket <= 1.5 * pure.accuracy(BETA).simultaneous.a


PROOF_PAGE = Path(__file__).parents[3] / "docs" / "blanket-histogram.md"


@pytest.mark.parametrize(
    "block", re.findall(r"```python\n(.*?)```", PROOF_PAGE.read_text(encoding="utf-8"), re.S)
)
def test_the_proof_pages_code_blocks_run(block: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpplug.AccuracyWarning)
        exec(compile(block, str(PROOF_PAGE), "exec"), {"__name__": "proof_page"})
