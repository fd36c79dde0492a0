"""Sparse multiplicative weights as an (ε, δ)-DP interactive mechanism (Blum & Roth, "Fast
Private Data Release Algorithms for Sparse Queries", RANDOM 2013, Alg. 1, Thm 3.5 and Thm 3.8
through Thm 3.3; docs/mechanisms.md#sparse-multiplicative-weights).

Thm 3.3 (Gupta, Roth, Ullman 2011) turns the IDC of :mod:`.multiplicative_weights` into a private
mechanism, but its wrapper is not in the paper; this is the explicit sparse-vector wrapper of the
project's catalogue, with exact integer noise. Everything private is in grid units
(:mod:`dpplug.kinds.query_releaser.queries`): the scaled answer A = n·W·Q(D) is an integer that one
row added or removed moves by at most Δ = W, and the hypothesis's answer is rounded to the grid, H =
round(n·W·Q(𝒟_t)), a public value.

**The wrapper.** With α the IDC's accuracy (α_g = α·n·W grid units), s and c = ⌊4(ln s + 1)/α²⌋
(the most updates, Thm 3.5), r = min(c, k) the most rounds a session of k queries can have (each
query ends at most one round, a round starts only with a query, and none starts after c), and
ε₀ the largest step with which 2r ε₀-DP steps compose to (ε, δ)
(:func:`dpplug.composition.step_budget`: the optimal composition theorem, KOV15 Thm 3.3, up to
32,768 steps and advanced composition, DRV10 Thm III.3, beyond, over the r sparse-vector rounds
and the r noisy answers at once; C2 composes each half at (ε/2, δ/2) with
ε₀ = (ε/2)/√(8c·ln(2/δ)), which this ε₀ always exceeds), noise is exact discrete Laplace
(:mod:`dpplug.discrete_noise`) of scales b_thr = 2Δ/ε₀, b_q = 4Δ/ε₀ and b_ans = Δ/ε₀. A round
draws ρ ~ Lap(b_thr); each query draws ν⁺, ν⁻ ~ Lap(b_q) and, if A − H + ν⁺ ≥ τ + ρ or
H − A + ν⁻ ≥ τ + ρ, releases Â = clamp(A + Lap(b_ans)), updates the IDC with Â (downwards if
Â < H) and ends the round; otherwise it releases H. After c updates the session refuses
further queries.

**Privacy.** Each round is AboveThreshold on the sensitivity-Δ queries ±(A − H): with integer Δ
the shifts ρ + Δ and ν + 2Δ of the proof (Dwork & Roth 2014, Thm 3.23) are bijections of ℤ whose
discrete Laplace likelihood ratios are e^{Δ/b_thr}·e^{2Δ/b_q} = e^{ε₀}, so each round is ε₀-DP;
each noisy answer is ε₀-DP; at most r rounds and r answers, adaptively: (ε, δ)-DP. Releasing H
and the IDC's state is post-processing; the IDC's floats never enter a comparison with noise.

**Accuracy** (simultaneous over k queries, with probability ≥ 1 − β). With a_ρ, a_ν, a_ans the
smallest integers with Pr[|noise| > a] ≤ β/(3r), β/(6k), β/(3r) (exact discrete Laplace tails;
at most r thresholds and r answers are drawn, and 2k test noises)
and τ = α_g + u + a_ρ + a_ν, where u = 1 + ⌈n·W·(m + 4)·2^−52⌉ covers the rounding of H (half a
grid unit and the floats' error), all noises are within their bounds except with probability β.
Then an update has |A − H| ≥ τ − a_ρ − a_ν, so |Q(D) − Q(𝒟_t)| ≥ α, and |Â − A| ≤ a_ans < α_g:
the updates form a database update sequence, so there are at most 4(ln s + 1/e)/α² ≤ c of them
(Thm 3.5) and the session never refuses. An answer without update has |A − H| ≤ τ − 1 + a_ρ + a_ν
= α_g + u − 1 + 2(a_ρ + a_ν) =: a, and an update's |Â − A| ≤ a_ans < a; a (in grid units) is
declared. α_g is the integer minimising a subject to a_ans < α_g (C2's minimisation of
α + 2λ_SV subject to λ_ans < α), searched in floats and computed rigorously. At another β′ the
same design is (a′, β′)-accurate with a′ = τ − 1 + a′_ρ + a′_ν if the IDC's α′_g =
τ − u − a′_ρ − a′_ν still exceeds a′_ans and gives at most c updates; otherwise β′ is refused.

**Cost.** Õ(m/α²) per query at worst, O(m) in fact (:mod:`.multiplicative_weights`), whatever
|X|: the universe may be left undeclared.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gmpy2 import mpq

from dpplug.bounds import ball, log_float, lower_of, upper_of
from dpplug.composition import StepBudget, step_budget, step_estimate
from dpplug.discrete_noise import discrete_laplace, laplace_error, laplace_error_estimate
from dpplug.errors import BadParameter, NotSupported
from dpplug.exact import Rat
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee
from dpplug.kinds import QueryReleaser
from dpplug.kinds.query_releaser.queries import (
    Declaration,
    LabelCounts,
    QuerySession,
    SparseQuery,
    clamp,
)
from dpplug.kinds.query_releaser.sparse_vector import SparseVectorRounds
from dpplug.params import Schema
from dpplug.plugins.queries.multiplicative_weights import SparseWeights
from dpplug.plugins.queries.workload import (
    ADD_REMOVE_ROW,
    declared_loss,
    releaser_params,
    set_public,
)
from dpplug.randomness import RandomSource

#: Candidate α_g per decade of [1, n·W] in the float search.
SEARCH_POINTS = 20


def slots(sparsity: int, alpha: Rat) -> int:
    """Alg. 1's s: the smallest integer with s/(ln s + 1) ≥ 4m/α² (checked in balls)."""
    x = 4 * sparsity / mpq(alpha) ** 2

    def holds(s: int) -> bool:
        return bool(lower_of(lambda: ball(s) - ball(x) * (ball(s).log() + 1)) >= 0)

    low = int(x // 1)  # s/(ln s + 1) < s ≤ x: fails
    high = max(low + 1, 2 * low)
    while not holds(high):
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle, high)
    return high


def update_bound(s: int, alpha: Rat) -> int:
    """c = ⌊4(ln s + 1)/α²⌋, from below (Thm 3.5's B(α))."""
    return int(lower_of(lambda: 4 * (ball(s).log() + 1) / ball(mpq(alpha) ** 2)) // 1)


@dataclass(frozen=True)
class Design:
    """The wrapper's public constants for one α_g (see the module docstring)."""

    scale: int  # n·W
    grid: int
    max_queries: int
    alpha_grid: int
    slots: int
    updates: int  # c
    budget: StepBudget  # 2·min(c, k) steps of ε₀
    margin: int  # u
    threshold: int  # τ

    @property
    def alpha(self) -> Rat:
        return mpq(self.alpha_grid, self.scale)

    @property
    def threshold_scale(self) -> Rat:
        return 2 * self.grid / self.budget.epsilon0

    @property
    def query_scale(self) -> Rat:
        return 4 * self.grid / self.budget.epsilon0

    @property
    def answer_scale(self) -> Rat:
        return self.grid / self.budget.epsilon0

    def noise_bounds(self, beta: Rat) -> tuple[int, int, int]:
        """(a_ρ, a_ν, a_ans) at β: Pr[|noise| > a] ≤ β/(3r), β/(6k), β/(3r), r = min(c, k)."""
        k = self.max_queries
        r = min(self.updates, k)
        return (
            laplace_error(self.threshold_scale, beta / (3 * r)),
            laplace_error(self.query_scale, beta / (6 * k)),
            laplace_error(self.answer_scale, beta / (3 * r)),
        )

    def error(self, beta: Rat) -> int:
        """a at β in grid units: τ − 1 + a_ρ + a_ν when the analysis covers β (see the module
        docstring), else n·W, the trivial bound of answers in [0, 1]."""
        a_rho, a_nu, a_ans = self.noise_bounds(beta)
        idc_alpha = self.threshold - self.margin - a_rho - a_nu
        if idc_alpha >= 1 and a_ans < idc_alpha:
            alpha = mpq(idc_alpha, self.scale)
            bound = upper_of(
                lambda: 4 * (ball(self.slots).log() + (-ball(1)).exp()) / ball(alpha**2)
            )
            if bound < self.updates + 1:
                return min(self.threshold - 1 + a_rho + a_nu, self.scale)
        return self.scale


def _estimate(
    alpha_grid: int,
    scale: int,
    grid: int,
    m: int,
    k: int,
    eps: float,
    log_inverse_delta: float,
    log_beta: float,
    margin: int,
) -> float:
    """The declared a for α_g, in floats (inf if infeasible): the search's objective."""
    alpha = alpha_grid / scale
    x = 4 * m / alpha**2
    s = x * (math.log(x) + 1)
    for _ in range(20):
        s = x * (math.log(s) + 1)
    c = max(1, math.floor(4 * (math.log(math.ceil(s)) + 1) / alpha**2))
    r = min(c, k)
    e0 = step_estimate(eps, log_inverse_delta, 2 * r)
    a_rho = laplace_error_estimate(2 * grid / e0, log_beta - math.log(3 * r))
    a_nu = laplace_error_estimate(4 * grid / e0, log_beta - math.log(6 * k))
    a_ans = laplace_error_estimate(grid / e0, log_beta - math.log(3 * r))
    if a_ans >= alpha_grid:
        return math.inf
    return alpha_grid + margin - 1 + 2 * (a_rho + a_nu)


def design(n: int, grid: int, m: int, k: int, epsilon: Rat, delta: Rat, beta: Rat) -> Design:
    """The α_g minimising the declared error (float search), with its constants computed
    rigorously; BadParameter if no α_g gives a non-trivial accuracy (below n·W)."""
    scale = n * grid
    margin = 1 + -(-scale * (m + 4) // (1 << 52))
    args = (scale, grid, m, k, float(epsilon), log_float(1 / delta), log_float(beta), margin)
    steps = int(SEARCH_POINTS * math.log10(scale)) + 2
    candidates = {max(1, min(scale, round(10 ** (j / SEARCH_POINTS)))) for j in range(steps)}
    refusal = BadParameter(
        f"sparse-multiplicative-weights has no accuracy to offer at n = {n}, ε = "
        f"{float(epsilon):.3g}, δ = {float(delta):.3g}, k = {k}, m = {m}: its sparse-vector "
        f"noise alone exceeds 1 at every α; raise n or ε, lower k, or use independent-laplace"
    )
    best = min(candidates, key=lambda a: _estimate(a, *args))
    if _estimate(best, *args) >= scale:
        raise refusal
    low, high = max(1, best // 2), min(scale, 2 * best)  # refine: ternary search on integers
    while high - low > 2:
        a, b = low + (high - low) // 3, high - (high - low) // 3
        low, high = (low, b) if _estimate(a, *args) <= _estimate(b, *args) else (a, high)
    alpha_grid = min(range(low, high + 1), key=lambda a: _estimate(a, *args))
    while True:  # the rigorous constants; nudge α_g up if the floats were too optimistic
        alpha = mpq(alpha_grid, scale)
        s = slots(m, alpha)
        c = update_bound(s, alpha)
        assert m * c <= s, (m, c, s)  # Thm 3.5: at most m·c slots are ever assigned
        budget = step_budget(epsilon, delta, 2 * min(c, k))
        candidate = Design(scale, grid, k, alpha_grid, s, c, budget, margin, 0)
        a_rho, a_nu, a_ans = candidate.noise_bounds(mpq(beta))
        threshold = alpha_grid + margin + a_rho + a_nu
        if threshold - 1 + a_rho + a_nu >= scale:
            raise refusal
        if a_ans < alpha_grid:
            return Design(scale, grid, k, alpha_grid, s, c, budget, margin, threshold)
        alpha_grid += max(1, alpha_grid // 1000)


class SparseMultiplicativeWeights(QueryReleaser):
    name = "sparse-multiplicative-weights"
    summary = (
        "Interactive: k sparse queries answered from multiplicative weights, updated through a "
        "sparse-vector test; accuracy and time independent of |X|."
    )
    reference = (
        "Blum & Roth 2013, Fast Private Data Release Algorithms for Sparse Queries: Alg. 1, "
        "Thm 3.5, Thm 3.8 (sparse-vector wrapper for Thm 3.3)"
    )
    schema = Schema(releaser_params(universe_required=False, delta_zero=False))
    conformance_cases = (
        {
            "n": 10**7,
            "epsilon": 8,
            "delta": mpq(1, 10**5),
            "max_queries": 6,
            "sparsity": 2,
            "grid": 4,
        },
        {
            "universe": "range:0:9",
            "n": 10**8,
            "epsilon": 4,
            "delta": mpq(1, 10**6),
            "max_queries": 4,
            "sparsity": 3,
            "grid": 2,
        },
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        set_public(self, self.params)
        workload = self.workload
        run, self.exp_epsilon = declared_loss(self.params["epsilon"])
        self.design = design(
            self.n,
            workload.grid,
            workload.sparsity,
            workload.max_queries,
            run,
            self.params["delta"],
            self.beta,
        )
        d = self.design
        self.derived = {
            "alpha": d.alpha,
            "slots": d.slots,
            "max_updates": d.updates,
            "epsilon0": d.budget.epsilon0,
            "threshold": d.threshold,
        }

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.exp_epsilon, self.design.budget.delta, ADD_REMOVE_ROW)

    def _accuracy(self, beta: Any) -> Accuracy:
        bound = ErrorBound(self.design.error(beta), beta)
        return Accuracy(
            bound,
            bound,
            formula="τ − 1 + a_ρ + a_ν (grid units 1/(nW)), all k answers at once (sparse-vector "
            "and Laplace tails, Thm 3.5's update bound), per query the same; n·W (trivial) at a β "
            "too small for the design",
        )

    def exact_structure(self) -> SparseVectorRounds:
        """The wrapper's rounds (the module docstring): τ, b_thr = 2W/ε₀, b_q = 4W/ε₀,
        b_ans = W/ε₀, c rounds, and as the hypothesis the rounded answer of an IDC replayed
        through the released updates; so each round and each answer is exactly ε₀-DP."""
        d = self.design
        return SparseVectorRounds(
            d.threshold,
            d.threshold_scale,
            d.query_scale,
            d.answer_scale,
            d.updates,
            d.scale,
            d.grid,
            functools.partial(_replayed_hypothesis, d),
        )

    def _start(
        self, counts: LabelCounts, source: RandomSource
    ) -> SparseMultiplicativeWeightsSession:
        return SparseMultiplicativeWeightsSession(self.declaration(), self.design, counts, source)


class SparseMultiplicativeWeightsSession(QuerySession):
    """One run of the wrapper on one dataset (see the module docstring). Public: the number of
    updates so far (the sparse-vector test's outcomes are part of what the analysis releases);
    the data, the noise and the IDC's weights are not."""

    def __init__(
        self, declaration: Declaration, design: Design, counts: LabelCounts, source: RandomSource
    ) -> None:
        super().__init__(declaration)
        self._design, self._counts, self._source = design, counts, source
        self._weights = SparseWeights(design.slots, float(design.alpha) / 2)
        self._round_noise: int | None = None
        #: How many updates (sparse-vector rounds ended) so far; at most c.
        self.updates = 0

    @property
    def max_updates(self) -> int:
        """c, Thm 3.5's bound: the rounds the privacy budget covers."""
        return self._design.updates

    def _check(self) -> None:
        if self.updates >= self._design.updates:
            raise NotSupported(
                f"this session made its c = {self._design.updates} updates (Thm 3.5's bound), "
                "which its privacy budget covers and which happens only when its noise exceeded "
                "the declared accuracy (probability ≤ β); start a new release for more queries"
            )

    def _answer(self, query: SparseQuery) -> int:
        design, source, weights = self._design, self._source, self._weights
        hypothesis = _hypothesis(design, weights, query)
        exact = query.scaled_answer(self._counts)
        if self._round_noise is None:
            self._round_noise = discrete_laplace(design.threshold_scale, source)
        bar = design.threshold + self._round_noise
        above = exact - hypothesis + discrete_laplace(design.query_scale, source) >= bar
        below = hypothesis - exact + discrete_laplace(design.query_scale, source) >= bar
        if not (above or below):
            return hypothesis
        released = clamp(exact + discrete_laplace(design.answer_scale, source), design.scale)
        _update(design, weights, query, released, hypothesis)
        self.updates += 1
        self._round_noise = None
        return released


def _hypothesis(design: Design, weights: SparseWeights, query: SparseQuery) -> int:
    """H = round(n·W·Q(𝒟_t)) in [0, n·W]: the IDC's answer on the grid, public."""
    values = [w / design.grid for w in query.weights]
    return clamp(round(design.scale * weights.evaluate(query.labels, values)), design.scale)


def _update(
    design: Design, weights: SparseWeights, query: SparseQuery, released: int, hypothesis: int
) -> None:
    """Alg. 1's update with the released answer Â: upwards unless Â < H."""
    values = [w / design.grid for w in query.weights]
    weights.update(query.labels, values, increase=released >= hypothesis)


def _replayed_hypothesis(
    design: Design, query: SparseQuery, updates: Sequence[tuple[SparseQuery, int]]
) -> int:
    """H for *query* after the rounds that ended with these (query, released answer) pairs, in
    order: a fresh IDC replayed through them, as the session updated its own."""
    weights = SparseWeights(design.slots, float(design.alpha) / 2)
    for asked, released in updates:
        _update(design, weights, asked, released, _hypothesis(design, weights, asked))
    return _hypothesis(design, weights, query)
