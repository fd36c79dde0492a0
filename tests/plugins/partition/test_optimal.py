"""The optimal primitive π_{ε,δ} (Desfontaines et al. Lemma 1, Thm 1–2; docs/mechanisms.md) at the
function level (``keep_probabilities``, ``breakpoints``, ``closed_form``), exactly, and the
optimal-partition-selection selector against it."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from gmpy2 import mpq

from dpplug.plugins.partition.optimal import breakpoints, closed_form, keep_probabilities

from support.selectors import (
    GRID,
    OPTIMAL,
    b1_slack,
    case_id,
    grid_cases,
    grid_selector,
    selector,
    slow_marked,
)

#: Rational e^ε ∈ [1.01, 20] and δ ∈ [1e-6, 0.99].
LS = [mpq(101, 100), mpq(11, 10), mpq(3, 2), mpq(2), mpq(27, 10), mpq(7), mpq(20)]
DELTAS = [mpq(1, 10**6), mpq(1, 1000), mpq(1, 10), mpq(1, 3), mpq(9, 10), mpq(99, 100)]
FUNCTION_CASES = [(L, d) for L in LS for d in DELTAS]


def fid(case: tuple[Any, Any]) -> str:
    return f"L{case[0]}-delta{case[1]}"


def recurrence(L: Any, delta: Any, n: int) -> Any:
    """π(n) by Lemma 1, written out independently: π(0) = 0,
    π(n+1) = min(Lπ(n) + δ, 1 − (1 − δ − π(n))/L, 1)."""
    p = mpq(0)
    for _ in range(n):
        p = min(L * p + delta, 1 - (1 - delta - p) / L, mpq(1))
    return p


def largest_power_at_most(L: Any, bound: Any) -> int:
    """The largest m ≥ 0 with L^m ≤ bound (bound ≥ 1, L > 1)."""
    m, power = 0, mpq(1)
    while power * L <= bound:
        power *= L
        m += 1
    return m


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=fid)
def test_keep_probabilities_is_the_optimal_recurrence(case: tuple[Any, Any]) -> None:
    """The list is Lemma 1's recurrence up to its first 1; every step is tight for one of the
    inequalities of B1 (optimality), all four hold at (L, δ), and π is increasing."""
    L, delta = case
    pi = keep_probabilities(L, delta)
    assert pi[0] == 0 and pi[-1] == 1 and all(p < 1 for p in pi[:-1])
    assert pi[1] == delta
    assert pi[-1] == recurrence(L, delta, len(pi) - 1)
    for n in range(len(pi) - 1):
        lo, hi = pi[n], pi[n + 1]
        assert lo < hi
        assert hi in (L * lo + delta, 1 - (1 - delta - lo) / L, 1)
        assert b1_slack(lo, hi, L) <= delta
    assert b1_slack(mpq(1), mpq(1), L) <= delta  # beyond the list π stays 1


def closed_form_units(n1: int, n2: int) -> list[int]:
    """Every n ≤ n₂ + 2 when n₂ ≤ 300; otherwise (L = 1.01, δ = 1e-6, n₂ = 1711: each
    closed_form call recomputes the breakpoints on rationals of thousands of bits) n ≤ 30, every
    n within 3 of n₁ and n₂, and 20 evenly spaced n."""
    if n2 <= 300:
        return list(range(n2 + 3))
    spaced = range(0, n2, max(1, n2 // 20))
    near = [n for c in (n1, n2) for n in range(c - 3, c + 4)]
    return sorted({*range(31), *near, *spaced, n2 + 1, n2 + 2})


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=fid)
def test_closed_form_equals_recurrence(case: tuple[Any, Any]) -> None:
    L, delta = case
    pi = keep_probabilities(L, delta)
    n1, n2 = breakpoints(L, delta)
    for n in closed_form_units(n1, n2):
        assert closed_form(L, delta, n) == pi[min(n, len(pi) - 1)], n


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=fid)
def test_breakpoints_thm1(case: tuple[Any, Any]) -> None:
    """n₁ = 1 + ⌊log_L((L + 2δ − 1)/((L + 1)δ))⌋ (= 1 + ⌊ln(1 + tanh(ε/2)(1/δ − 1))/ε⌋) and
    n₂ = n₁ + ⌊log_L(1 + (L − 1)(1 − π(n₁))/δ)⌋, exactly; the geometric formula holds up to n₁
    and not at n₁ + 1; π = 1 from n₂ + 1 on and π(n₂ − 1) < 1."""
    L, delta = case
    n1, n2 = breakpoints(L, delta)
    ratio = (L + 2 * delta - 1) / ((L + 1) * delta)
    assert ratio == 1 + (L - 1) / (L + 1) * (1 / delta - 1)  # tanh(ε/2) = (L − 1)/(L + 1)
    assert n1 == 1 + largest_power_at_most(L, ratio)
    pi = keep_probabilities(L, delta)
    assert n2 == n1 + largest_power_at_most(L, 1 + (L - 1) * (1 - pi[n1]) / delta)
    geometric = [delta * (L**n - 1) / (L - 1) for n in range(n1 + 2)]
    assert pi[: n1 + 1] == geometric[: n1 + 1]
    if n1 + 1 < len(pi):
        assert pi[n1 + 1] < geometric[n1 + 1]
    assert len(pi) - 1 <= n2 + 1  # π(n₂ + 1) = 1
    assert pi[n2 - 1] < 1


#: Cases where the floor of Thm 1 lands exactly on an integer: L^{n₂−n₁} equals
#: 1 + (L − 1)(1 − π(n₁))/δ, so π(n₂) = 1 already (δ = 1/2 does it for every L).
BOUNDARY_CASES = [(mpq(2), mpq(1, 10)), (mpq(3, 2), mpq(1, 2)), (mpq(101, 100), mpq(1, 2))]


@pytest.mark.parametrize("case", FUNCTION_CASES + BOUNDARY_CASES, ids=fid)
def test_breakpoints_n2_boundary(case: tuple[Any, Any]) -> None:
    """π(n) < 1 before n₂ and π = 1 after it; π(n₂) = 1 exactly when the logarithm in n₂ is an
    integer (L^{n₂−n₁} = 1 + (L − 1)(1 − π(n₁))/δ), else π(n₂) < 1. (Until the working-tree
    docstring change, optimal.py called n₂ 'the last n with π < 1', false in the boundary case.)"""
    L, delta = case
    n1, n2 = breakpoints(L, delta)
    pi = keep_probabilities(L, delta)
    first_one = len(pi) - 1
    on_boundary = L ** (n2 - n1) == 1 + (L - 1) * (1 - pi[n1]) / delta
    assert first_one == (n2 if on_boundary else n2 + 1)
    assert (closed_form(L, delta, n2) == 1) == on_boundary
    assert on_boundary == (case in BOUNDARY_CASES or case[1] == mpq(1, 2))


@pytest.mark.parametrize("L", LS)
@pytest.mark.parametrize("delta", [mpq(9, 10), mpq(99, 100), mpq(999, 1000)])
def test_thm2_delta_close_to_one(L: Any, delta: Any) -> None:
    """For δ close to 1, n₁ = 1 and π(1) = δ; the closed form still applies."""
    n1, n2 = breakpoints(L, delta)
    assert n1 == 1
    assert closed_form(L, delta, 1) == delta == keep_probabilities(L, delta)[1]
    pi = keep_probabilities(L, delta)
    assert all(closed_form(L, delta, n) == pi[min(n, len(pi) - 1)] for n in range(n2 + 3))


@pytest.mark.parametrize("delta", [mpq(3, 1000), mpq(1, 7), mpq(1, 2)])
def test_thm2_epsilon_zero(delta: Any) -> None:
    """ε = 0 (L = 1): π(n) = min(1, nδ)."""
    pi = keep_probabilities(1, delta)
    assert pi == [min(mpq(1), n * delta) for n in range(len(pi))]


@pytest.mark.parametrize("L", LS)
def test_thm2_delta_one(L: Any) -> None:
    """δ ≥ 1: π(n) = 1 for every n ≥ 1."""
    assert keep_probabilities(L, 1) == [0, 1]


# --- the selector against the exact recurrence --------------------------------------------

OPT_CASES = [c for c in grid_cases((OPTIMAL,))]
MAX_SATURATION = 2000  # exact recurrence on 48-bit-dyadic L: rationals of 48·n bits


@pytest.mark.parametrize(
    "case", slow_marked(OPT_CASES, lambda s: s.saturation > MAX_SATURATION), ids=case_id
)
def test_selector_below_exact_recurrence(case: tuple[str, Fraction, Fraction, int]) -> None:
    """π̂(n) ≤ π_{L,δ}(n) with L, δ the selector's per-partition guarantee (π is the pointwise
    largest (L, δ)-DP curve, Def. 4), and close to the recurrence the table rounds, π = π_{L,δ_c}
    with δ_c the budget's δ (``selector.budget.delta`` ≥ the declared δ):

    - π(n) − π̂(n) ≤ 2^-63·(L·π(n₁)/δ_c + n + 1), the bound optimal.py states;
    - π(n) − π̂(n) ≤ 2^-63·(L·π(n)/δ_c + n + 1), tighter below n₁.

    Both follow from rounding down each step of the recurrence: each step loses < 2^-63 and the
    geometric phase multiplies earlier losses by L, so the loss there is relative, ≈ 2^-63/δ_c.
    (Within (n + 1)·2^-63 does NOT hold: 420 224·2^-63 at n = 14 for ε = 1, δ = 1e-6, ℓ₀ = 1.)
    Unit counts up to saturation + 2; slow_grid above saturation 2000 (ε = 0.01 with small δ or
    ℓ₀ ≥ 2, ε = 0.1 with ℓ₀ = 10)."""
    s = grid_selector(case)
    L, delta = s.per_partition.exp_epsilon, s.per_partition.delta
    delta_c = s.budget.delta
    assert delta <= delta_c
    best = keep_probabilities(L, delta)
    rounded = keep_probabilities(L, delta_c)
    n1, _ = breakpoints(L, delta_c)
    for n in range(s.saturation + 3):
        got = s.keep_probability(n)
        exact = best[min(n, len(best) - 1)]
        target = rounded[min(n, len(rounded) - 1)]
        assert got <= exact <= target, n
        assert target - got <= GRID * (L * rounded[n1] / delta_c + n + 1), n
        assert target - got <= GRID * (L * target / delta_c + n + 1), n


@pytest.mark.parametrize(
    "params",
    [
        {"epsilon": Fraction(1), "delta": Fraction(1, 10**5)},
        {"epsilon": Fraction(1, 2), "delta": Fraction(1, 1000), "max_partitions_contributed": 2},
        {"epsilon": Fraction(2), "delta": Fraction(1, 3)},
    ],
)
def test_selector_output_pmf_is_keep_or_drop(params: dict[str, Any]) -> None:
    """Selectors that only decide release 1 (kept) with probability π(n), else 0."""
    s = selector(OPTIMAL, **params)
    for n in range(s.saturation + 2):
        law = s.output_pmf(n)
        assert set(law) <= {0, 1}
        assert law.prob(1) == s.keep_probability(n)
        assert law.total() == 1
