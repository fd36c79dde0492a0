"""Options shared by the four selectors (budget.py; docs/mechanisms.md): pre-threshold,
replace-one, public partitions, and the accuracy threshold."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest
from gmpy2 import mpq

import dpplug
from dpplug.conformance.divergence import hockey_stick

from support.selectors import (
    GAUSSIAN,
    GRID_SELECTORS,
    SELECTORS,
    TGT,
    b1_slack,
    exp_lower_bound,
    exp_upper_bound,
    selector,
)

BASE = [
    {"epsilon": Fraction(1), "delta": Fraction(1, 10**5)},
    {"epsilon": Fraction(1, 2), "delta": Fraction(1, 1000), "max_partitions_contributed": 2},
    {"epsilon": Fraction(2), "delta": Fraction(1, 10), "max_partitions_contributed": 3},
]


def pid(params: dict[str, Any]) -> str:
    return "-".join(f"{k[:5]}{v}" for k, v in params.items())


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("params", BASE, ids=pid)
@pytest.mark.parametrize("m", [2, 5])
def test_pre_threshold_shifts_the_curve(name: str, params: dict[str, Any], m: int) -> None:
    """π_m(n) = 0 for n < m and π_m(n) = π_1(n − m + 1) for n ≥ m; saturation moves by m − 1;
    the guarantee is unchanged (the pre-threshold is post-processing of the unit count)."""
    base, s = selector(name, **params), selector(name, **params, pre_threshold=m)
    assert s.saturation == base.saturation + m - 1
    assert s.per_partition == base.per_partition
    assert s.guarantee == base.guarantee
    for n in range(s.saturation + 3):
        expected = 0 if n < m else base.keep_probability(n - m + 1)
        assert s.keep_probability(n) == expected, n


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("params", BASE, ids=pid)
def test_replace_one_halves_the_per_partition_budget(name: str, params: dict[str, Any]) -> None:
    """replace_one with ℓ₀ splits (ε, δ) over 2ℓ₀ coordinates: the per-partition release is the
    add-remove one with 2ℓ₀ (same L, δ, curve), L ≤ e^{ε/(2ℓ₀)} (Gaussian: calibrated for 2ℓ₀
    coordinates jointly, L ≤ e^ε), and the whole guarantee is stated for replace-one with
    max_partitions = ℓ₀."""
    l0 = params.get("max_partitions_contributed", 1)
    bounded = selector(name, **params, replace_one=True)
    doubled = selector(name, **{**params, "max_partitions_contributed": 2 * l0})
    single = selector(name, **params)
    assert bounded.per_partition == doubled.per_partition
    share = mpq(params["epsilon"]) / (2 * l0)
    if name == GAUSSIAN:  # calibrated jointly: one partition's table may spend the whole ε
        share = mpq(params["epsilon"])
    L = bounded.per_partition.exp_epsilon
    assert L <= exp_lower_bound(share)
    if name != TGT:  # rounded down by at most ε/1024 relative; truncated-geometric runs
        # below ε where that spends 95% of δ (test_truncated_geometric_thresholding.py)
        assert exp_upper_bound(share * mpq(1023, 1024)) <= L
    assert bounded.saturation == doubled.saturation
    for n in range(bounded.saturation + 2):
        assert bounded.keep_probability(n) == doubled.keep_probability(n)
    g = bounded.guarantee
    assert g.neighbouring.relation is dpplug.Relation.REPLACE_ONE
    assert g.neighbouring.max_partitions == l0
    assert g.exp_epsilon == doubled.guarantee.exp_epsilon
    assert g.delta == doubled.guarantee.delta
    assert single.guarantee.neighbouring.relation is dpplug.Relation.ADD_REMOVE


@pytest.mark.parametrize("name", GRID_SELECTORS)
def test_public_partitions_not_supported(name: str) -> None:
    s = selector(name, epsilon=1, delta=Fraction(1, 1000))
    source = dpplug.SeededSource(0)
    for public in ([True, False, True], [False, False, False]):
        with pytest.raises(dpplug.NotSupported):
            s.select([0, 3, 7], source, public=public)
    assert source.draws == 0
    with pytest.raises(dpplug.BadParameter):
        dpplug.create(name, epsilon=1, delta=Fraction(1, 1000), public_threshold=1)


# --- accuracy --------------------------------------------------------------------------------

BETAS = [Fraction(1, 2), Fraction(1, 10), Fraction(1, 1000), Fraction(1, 10**9), 1e-3]
ACCURACY_PARAMS = [*BASE, {"epsilon": Fraction(1), "delta": Fraction(1, 10**5), "pre_threshold": 4}]


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("params", ACCURACY_PARAMS, ids=pid)
def test_accuracy_threshold(name: str, params: dict[str, Any]) -> None:
    """accuracy(β).threshold = (smallest n with π(n) ≥ 1 − β) − 1, exactly: partitions with more
    than ``threshold`` units are kept with probability ≥ 1 − β, and one fewer unit is not."""
    s = selector(name, **params)
    for beta in BETAS:
        b = mpq(beta)
        acc = s.accuracy(beta)
        first = next(n for n in range(s.saturation + 1) if s.keep_probability(n) >= 1 - b)
        assert acc.threshold == first - 1
        assert s.keep_probability(acc.threshold + 1) >= 1 - b
        assert s.keep_probability(acc.threshold) < 1 - b
        assert acc.per_query.beta == b
        if name != TGT:
            assert acc.per_query.a == 0  # membership only, no count released


@pytest.mark.parametrize("params", BASE, ids=pid)
def test_tgt_count_accuracy(params: dict[str, Any]) -> None:
    """For the released counts: a is the smallest with Pr[|X| > a] ≤ β (X the k-TSGD noise,
    read from the law of an always-released partition)."""
    s = selector(TGT, **params)
    n = s.saturation
    law = s.output_pmf(n)
    assert law.prob(0) == 0

    def miss(a: int) -> Any:
        return sum((p for z, p in law.items() if abs(z - n) > a), mpq(0))

    for beta in BETAS:
        a = s.accuracy(beta).per_query.a
        assert 0 <= a <= s.k
        assert miss(a) <= mpq(beta)
        assert a == 0 or miss(a - 1) > mpq(beta)


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("beta", [0, 1, -0.5, 1.5, float("nan"), None, "0.1"])
def test_accuracy_bad_beta(name: str, beta: Any) -> None:
    with pytest.raises(dpplug.BadParameter):
        selector(name, epsilon=1, delta=Fraction(1, 1000)).accuracy(beta)


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize(
    "extra",
    [{"pre_threshold": 3}, {"replace_one": True}, {"pre_threshold": 2, "replace_one": True}],
    ids=pid,
)
def test_options_keep_per_partition_privacy(name: str, extra: dict[str, Any]) -> None:
    """The four inequalities of B1 (and, for the released counts, the hockey-stick divergence)
    at the per-partition guarantee, for every n up to saturation + 2, with the options on."""
    s = selector(name, epsilon=Fraction(1), delta=Fraction(1, 100), **extra)
    L, delta = s.per_partition.exp_epsilon, s.per_partition.delta
    pi = [s.keep_probability(n) for n in range(s.saturation + 4)]
    assert max(b1_slack(lo, hi, L) for lo, hi in itertools.pairwise(pi)) <= delta
    if name == TGT:
        laws = [s.output_pmf(n) for n in range(s.saturation + 4)]
        worst = max(
            max(hockey_stick(p, q, L), hockey_stick(q, p, L)) for p, q in itertools.pairwise(laws)
        )
        assert worst == delta
