"""Sparse-vector sessions: the structure an interactive query releaser declares when its answers
come in rounds of a two-sided AboveThreshold test, each round ended by one noisy answer (Dwork &
Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Alg. 1 and Thm 3.23; the
wrapper of Blum & Roth 2013's sparse multiplicative weights), so that the conformance suite can
check its guarantee and its draws exactly (:meth:`dpplug.QueryReleaser.sparse_vector`,
docs/conformance.md#sparse-vector-sessions).

**The structure.** All quantities are integers in grid units
(:mod:`dpplug.kinds.query_releaser.queries`). A session keeps a public hypothesis H(q) for each
query q, a function of the queries that ended rounds and their released answers, so it changes only
when a round ends. A round draws ρ ~ DLap(b_thr) when it starts; a query with gap g = A − H (true
scaled answer minus hypothesis) draws ν⁺, ν⁻ ~ DLap(b_q) and ends the round iff g + ν⁺ ≥ τ + ρ or −g
+ ν⁻ ≥ τ + ρ; the query is then answered clamp(A + DLap(b_ans)) to [0, n·W], and otherwise H. At
most c rounds end; the session then refuses further queries. A session of at most k queries thus has
at most min(c, k) rounds, ended or not. DLap(b) is the discrete Laplace of
:mod:`dpplug.discrete_noise`, Pr[Y = y] ∝ e^{−|y|/b}.

**Privacy** (one row added or removed moves every A by at most W and no H).

- A round is ε_r-DP with ε_r = W/b_thr + 2W/b_q (:meth:`SparseVectorRounds.round_loss`). For
  gaps g and g′ with |g_i − g′_i| ≤ W, compare the term of ρ under g with the term of ρ + W
  under g′: Pr[ρ] ≤ e^{W/b_thr}·Pr[ρ + W]; a query that does not end the round under g does not
  under g′ either (both of its thresholds τ + ρ ∓ g rise by at least 0), and the last query's
  events ν ≥ τ + ρ ∓ g have thresholds at most 2W higher under g′, where the discrete Laplace
  loses at most a factor e^{−2W/b_q} (its law is e^{1/b}-Lipschitz in ratio); for the union of
  two independent events, 1 − (1 − λp)(1 − λp′) ≥ λ(1 − (1 − p)(1 − p′)) for λ ≤ 1. A round that
  has not ended needs the first step only.
- An answer is ε_a-DP with ε_a = W/b_ans (:meth:`SparseVectorRounds.answer_loss`): the discrete
  Laplace's ratio e^{|y − A′| − |y − A|}/b_ans, which clamping only lowers.
- A session is at most r = min(c, k) rounds and r answers, adaptively chosen: 2r steps of loss at
  most max(ε_r, ε_a), composed by :mod:`dpplug.composition`'s theorems.

**The law of a round** (:meth:`SparseVectorRounds.continuing`). With y = τ + ρ, query i does
not end the round with probability B(g_i, y) = F(y − g_i − 1)·F(y + g_i − 1), F the CDF of
DLap(b_q), so the round survives queries of gaps g_1, …, g_t with probability
E[Π_i B(g_i, y)]. F(x) is 1 − q^{x+1}/(1 + q) for x ≥ 0 and q^{−x}/(1 + q) for x < 0
(q = e^{−1/b_q}), so between the breakpoints (y = 1 ± g_i, and y = τ where |ρ| changes form)
the product is a Laurent polynomial in u = q^y, and each of its monomials times ρ's weight
(1 − s)/(1 + s)·s^{|y − τ|} (s = e^{−1/b_thr}) sums over the piece as a geometric series. The
sum is evaluated in balls (:mod:`dpplug.bounds`); no float and no truncated tail enter it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gmpy2 import mpq

from dpplug.bounds import Ball, ball
from dpplug.exact import Rat
from dpplug.kinds.query_releaser.queries import SparseQuery
from dpplug.structures import ExactStructure

#: A Laurent polynomial in u = q^y: exponent → coefficient (a ball).
Laurent = dict[int, Ball]


@dataclass(frozen=True)
class SparseVectorRounds(ExactStructure):
    """The declared structure of a sparse-vector session (see the module docstring): threshold
    τ, the scales b_thr, b_q and b_ans of the threshold's, each query test's and each answer's
    discrete Laplace noise, at most ``rounds`` (c) ended rounds, answers clamped to
    [0, ``scale``] (n·W), ``sensitivity`` W, and ``hypothesis(query, updates)``: the public
    answer H a session gives *query* after the rounds that ended with *updates*, the (query,
    released answer) pairs in order (``()`` before any has ended)."""

    threshold: int
    threshold_scale: Rat
    query_scale: Rat
    answer_scale: Rat
    rounds: int
    scale: int
    sensitivity: int
    hypothesis: Callable[[SparseQuery, Sequence[tuple[SparseQuery, int]]], int]

    def __post_init__(self) -> None:
        scales = (self.threshold_scale, self.query_scale, self.answer_scale)
        if not all(mpq(b) > 0 for b in scales):
            raise ValueError(f"a sparse-vector session needs noise scales > 0, got {scales}")
        if min(self.rounds, self.scale, self.sensitivity) < 1:
            raise ValueError("a sparse-vector session needs c, n·W and W ≥ 1")

    def round_loss(self) -> Rat:
        """ε_r = W/b_thr + 2W/b_q, exactly: each round's pure guarantee (the module docstring's
        two-sided Thm 3.23)."""
        return self.sensitivity / mpq(self.threshold_scale) + 2 * self.sensitivity / mpq(
            self.query_scale
        )

    def answer_loss(self) -> Rat:
        """ε_a = W/b_ans, exactly: each noisy answer's pure guarantee."""
        return self.sensitivity / mpq(self.answer_scale)

    def continuing(self, gaps: Sequence[int]) -> Ball:
        """Pr[a round survives queries of gaps g_1, …, g_t], E_ρ[Π_i B(g_i, τ + ρ)], as a ball at
        the working precision (see the module docstring)."""
        q_log, s_log = -1 / mpq(self.query_scale), -1 / mpq(self.threshold_scale)
        q, s = ball(q_log).exp(), ball(s_log).exp()
        weight = (1 - s) / (1 + s)
        offsets = [d for g in gaps for d in (-g, g)]  # factor F(y + d − 1), form A from y = 1 − d
        cuts = sorted({1 - d for d in offsets} | {self.threshold})
        pieces: list[tuple[int | None, int | None]] = [(None, cuts[0] - 1)]
        pieces += [(a, b - 1) for a, b in itertools.pairwise(cuts)]
        pieces.append((cuts[-1], None))
        total = ball(0)
        for low, high in pieces:
            where = high if low is None else low
            assert where is not None
            product: Laurent = {0: ball(1)}
            for d in offsets:
                product = _times(product, _factor(d, where >= 1 - d, q, q_log))
            # ρ = y − τ ≥ 0: weight·s^{−τ}·s^y, else weight·s^{τ}·s^{−y}
            sign = 1 if where >= self.threshold else -1
            side = weight * ball(-sign * s_log * self.threshold).exp()
            for exponent, coefficient in product.items():
                log_ratio = sign * s_log + exponent * q_log
                total += side * coefficient * _geometric(log_ratio, low, high)
        return total

    def update_time(self, gap: int, queries: int) -> list[Ball]:
        """The law of the first of *queries* queries of the same gap that ends a round
        (Pr[T = 1], …, Pr[T = queries], then Pr[no query ends it]), as balls:
        Pr[T = t] = M_{t−1} − M_t with M_j = :meth:`continuing` of j such queries."""
        survive = [self.continuing([gap] * j) for j in range(queries + 1)]
        return [survive[t - 1] - survive[t] for t in range(1, queries + 1)] + [survive[-1]]


def _factor(d: int, form_a: bool, q: Ball, q_log: Rat) -> Laurent:
    """F(y + d − 1) as a Laurent polynomial in u = q^y (q = e^{q_log}): 1 − q^d/(1 + q)·u where
    y + d − 1 ≥ 0 (form A), q^{1−d}/(1 + q)·u^{−1} below."""
    if form_a:
        return {0: ball(1), 1: -ball(q_log * d).exp() / (1 + q)}
    return {-1: ball(q_log * (1 - d)).exp() / (1 + q)}


def _times(a: Laurent, b: Laurent) -> Laurent:
    product: Laurent = {}
    for i, x in a.items():
        for j, y in b.items():
            product[i + j] = product.get(i + j, ball(0)) + x * y
    return product


def _geometric(log_ratio: Rat, low: int | None, high: int | None) -> Ball:
    """Σ_{y=low}^{high} R^y for R = e^{log_ratio} (a rational logarithm), either end possibly
    infinite (the sum then converges: R < 1 upwards, R > 1 downwards)."""
    if low is not None and high is not None:
        count = high - low + 1
        if log_ratio == 0:
            return ball(count)
        return (
            (ball(log_ratio * low)).exp()
            * ball(log_ratio * count).expm1()
            / ball(log_ratio).expm1()
        )
    if high is None:
        assert low is not None and log_ratio < 0, (low, log_ratio)
        return (ball(log_ratio * low)).exp() / -ball(log_ratio).expm1()
    assert log_ratio > 0, (high, log_ratio)
    return (ball(log_ratio * high)).exp() / -(-ball(log_ratio)).expm1()
