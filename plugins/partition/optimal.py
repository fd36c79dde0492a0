"""The optimal partition selection primitive π_{ε,δ} (Desfontaines, Voss, Gipson, Mandayam 2020,
Def. 3–4, Lemma 1–5, Thm 1–3; docs/mechanisms.md#optimal-partition-selection), exact.

With L = e^ε rational, :func:`keep_probabilities` is the recurrence of Lemma 1,
π(0) = 0, π(n+1) = min(L·π(n) + δ, 1 − (1 − δ − π(n))/L, 1), and :func:`closed_form` the closed
form of Thm 1 with its breakpoints n₁ (end of the geometric growth) and n₂ (end of the second
branch: π(n) < 1 before n₂, π(n₂) ≤ 1 with equality exactly when the logarithm in n₂ is an
integer, and π = 1 after n₂),
both in exact rationals; they agree exactly. The mechanism keeps each partition with the
recurrence evaluated on the 2^-63 grid (:class:`KeepTable`), exactly DP and never above π. Each
step rounds down and the geometric phase multiplies earlier losses by e^ε, so the grid curve is
below π by at most about 2^-63·(e^ε·π(n₁)/δ + n + 1): under 1e-12 for δ ≥ 1e-5, about 1e-7 at
δ = 1e-12 (measured against python-dp in tests/plugins/partition/test_against_python_dp.py).
"""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq

from dpplug.plugins.partition.grid_selector import GridSelector


def keep_probabilities(exp_epsilon: Any, delta: Any) -> list[Any]:
    """[π(0), π(1), …] by the recurrence of Lemma 1, exactly, up to the first π(n) = 1 (which is
    n₂, or n₂ + 1 when the logarithm in n₂ is not an integer)."""
    L, delta = mpq(exp_epsilon), mpq(delta)
    pi = [mpq(0)]
    while pi[-1] < 1:
        p = pi[-1]
        pi.append(min(L * p + delta, 1 - (1 - delta - p) / L, mpq(1)))
    return pi


def breakpoints(exp_epsilon: Any, delta: Any) -> tuple[int, int]:
    """(n₁, n₂) of Thm 1, exactly: n₁ is the last n of the geometric phase (π(n−1) ≤ (1−δ)/(L+1))
    and n₂ = n₁ + the largest m with L^m ≤ 1 + (L − 1)(1 − π(n₁))/δ."""
    L, delta = mpq(exp_epsilon), mpq(delta)
    n1, p = 1, delta  # π(1) = δ
    while p <= (1 - delta) / (L + 1):  # π(n₁) ≤ (1−δ)/(L+1): the geometric branch continues
        n1 += 1
        p = L * p + delta
    bound, m, power = 1 + (L - 1) * (1 - p) / delta, 0, mpq(1)
    while power * L <= bound:
        power *= L
        m += 1
    return n1, n1 + m


def closed_form(exp_epsilon: Any, delta: Any, n: int) -> Any:
    """π(n) by Thm 1: δ(Lⁿ − 1)/(L − 1) up to n₁, then
    π(n₁) + (1 − π(n₁) + δ/(L−1))(1 − L^{−(n−n₁)}) up to n₂, then 1."""
    L, delta = mpq(exp_epsilon), mpq(delta)
    n1, n2 = breakpoints(L, delta)
    if n <= 0:
        return mpq(0)
    if n <= n1:
        return delta * (L**n - 1) / (L - 1)
    if n <= n2:
        p1 = delta * (L**n1 - 1) / (L - 1)
        return p1 + (1 - p1 + delta / (L - 1)) * (1 - L ** (n1 - n))
    return mpq(1)


class OptimalPartitionSelection(GridSelector):
    name = "optimal-partition-selection"
    summary = "The optimal keep probability π_{ε,δ}(n), exact on a 2^-63 grid, one draw each."
    reference = (
        "Desfontaines, Voss, Gipson, Mandayam, Differentially private partition selection: "
        "Def. 4, Lemma 1, Thm 1–3"
    )
    conformance_cases = (
        {"epsilon": 1, "delta": mpq(1, 10**5)},
        {"epsilon": mpq(1, 2), "delta": mpq(1, 1000), "max_partitions_contributed": 2},
        {"epsilon": 2, "delta": mpq(1, 100), "pre_threshold": 3, "replace_one": True},
    )
