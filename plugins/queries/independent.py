"""The baseline query releaser (docs/mechanisms.md#independent-laplace): every query answered
with its own discrete Laplace noise, the k answers composed.

A query's scaled answer n·W·Q(D) = Σ_x w_x·c_x (:mod:`dpplug.kinds.query_releaser.queries`) changes
by at most W when one row is added or removed (one count moves by one, its weight is at most W), so
the answer plus discrete Laplace noise of scale W/ε₀ (exact, :func:`dpplug.discrete_noise.
discrete_laplace`) is ε₀-DP: neighbouring laws have likelihood ratio at most e^{W/scale}. The k
adaptively chosen answers compose to (ε, δ) with ε₀ = ε/k for δ = 0 (basic composition), and
otherwise the largest step the optimal composition theorem allows (Kairouz, Oh, Viswanath 2015, Thm
3.3; up to 32,768 queries, beyond which the advanced composition theorem of Dwork, Rothblum, Vadhan
2010, Thm III.3), computed rigorously (:func:`dpplug.composition.step_budget`). Answers are clamped
to [0, 1] (post-processing, which only lowers the error).

Accuracy: per query the smallest a with Pr[|Y| > a] ≤ β, exactly from the discrete Laplace
tail 2q^{a+1}/(1 + q), q = e^{−ε₀/W}; all k answers at once, the same at β/k (union bound);
never more than n·W, since answers and the truth are in [0, 1].
"""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq

from dpplug.composition import StepBudget, step_budget
from dpplug.discrete_noise import discrete_laplace, laplace_error
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee
from dpplug.kinds import QueryReleaser
from dpplug.kinds.query_releaser.polynomial_law import PolynomialLaw, clamped_laplace_law
from dpplug.kinds.query_releaser.queries import (
    Declaration,
    LabelCounts,
    QuerySession,
    SparseQuery,
    clamp,
)
from dpplug.kinds.query_releaser.structures import IndependentAnswers
from dpplug.params import Schema
from dpplug.plugins.queries.workload import (
    ADD_REMOVE_ROW,
    declared_loss,
    releaser_params,
    set_public,
)
from dpplug.randomness import RandomSource


class IndependentLaplace(QueryReleaser):
    name = "independent-laplace"
    summary = "Each of k sparse queries answered with its own exact discrete Laplace noise."
    reference = (
        "Dwork, McSherry, Nissim, Smith 2006 (Laplace mechanism); Dwork, Rothblum, Vadhan 2010, "
        "Thm III.3 (composition); the baseline of Blum & Roth 2013"
    )
    schema = Schema(releaser_params(universe_required=False, delta_zero=True))
    conformance_cases = (
        # ε·(1 − 2^-10) = 4 over k = 4 answers: ε₀ = 1 and the noise scale W/ε₀ = 4 exactly, a
        # law the conformance suite replays path by path (declared_loss)
        {"n": 50, "epsilon": mpq(4096, 1023), "max_queries": 4, "sparsity": 2, "grid": 4},
        {
            "universe": 'labels:["a", "b", "c", "d"]',
            "n": 40,
            "epsilon": 2,
            "delta": mpq(1, 10**6),
            "max_queries": 3,
            "sparsity": 3,
            "grid": 2,
        },
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        set_public(self, self.params)
        k = self.workload.max_queries
        run, self.exp_epsilon = declared_loss(self.params["epsilon"])
        self.budget: StepBudget = step_budget(run, self.params["delta"], k)
        #: The discrete Laplace scale on the scaled answer: sensitivity W over ε₀.
        self.noise_scale = mpq(self.workload.grid) / self.budget.epsilon0
        self.derived = {
            "epsilon0": self.budget.epsilon0,
            "composition": self.budget.rule,
            "scale": self.noise_scale,
        }

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.exp_epsilon, self.budget.delta, ADD_REMOVE_ROW)

    def _accuracy(self, beta: Any) -> Accuracy:
        k, scale = self.workload.max_queries, self.n * self.workload.grid
        return Accuracy(
            ErrorBound(min(laplace_error(self.noise_scale, beta), scale), beta),
            ErrorBound(min(laplace_error(self.noise_scale, beta / k), scale), beta),
            formula="smallest a with Pr[|Y| > a] = 2q^(a+1)/(1+q) ≤ β, q = e^(−ε₀/W) (grid "
            "units 1/(nW)); at β/k for all k answers (union bound); at most n·W (answers are "
            "clamped to [0, 1])",
        )

    def exact_structure(self) -> IndependentAnswers:
        """Independent answers, each clamp(scaled + Y, 0, n·W) with fresh Y."""
        return IndependentAnswers(self.answer_law)

    def answer_law(self, scaled: int) -> PolynomialLaw:
        """clamp(scaled + Y, 0, n·W) with Y discrete Laplace of scale W/ε₀, exactly."""
        return clamped_laplace_law(self.noise_scale, scaled, self.n * self.workload.grid)

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return IndependentSession(self.declaration(), counts, self.noise_scale, source)


class IndependentSession(QuerySession):
    """Answers each query as it arrives: clamp(n·W·Q(D) + Y, 0, n·W) with fresh noise Y."""

    def __init__(
        self, declaration: Declaration, counts: LabelCounts, scale: Any, source: RandomSource
    ) -> None:
        super().__init__(declaration)
        self._counts, self._scale, self._source = counts, scale, source

    def _answer(self, query: SparseQuery) -> int:
        noisy = query.scaled_answer(self._counts) + discrete_laplace(self._scale, self._source)
        return clamp(noisy, self.scale)
