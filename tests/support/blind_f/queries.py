# ruff: noqa: E501  (kept as the red team wrote it: one-line flaw docstrings)
"""Broken (and honest) query releasers, subclasses of the built-in independent Laplace."""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq

from dpplug.composition import step_budget
from dpplug.discrete_noise import discrete_laplace, laplace_error
from dpplug.guarantee import Accuracy, ErrorBound
from dpplug.kinds.query_releaser.queries import LabelCounts, QuerySession, SparseQuery, clamp
from dpplug.plugins.queries.independent import IndependentLaplace, IndependentSession
from dpplug.plugins.queries.workload import declared_loss
from dpplug.randomness import RandomSource


class LoggedNoiseSession(IndependentSession):
    """A session that keeps the noise of each answer for auditing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: The noise added to each answer so far, in grid units (for audits).
        self.noise_log: list[int] = []

    def _answer(self, query: SparseQuery) -> int:
        y = discrete_laplace(self._scale, self._source)
        self.noise_log.append(int(y))
        return clamp(query.scaled_answer(self._counts) + y, self.scale)


class NoiseLog(IndependentLaplace):
    """FLAW: the session exposes each answer's noise in a public attribute (true answers recoverable)."""

    name = "rtf-q-noise-log"
    summary = "Independent Laplace whose sessions log their noise for audits."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return LoggedNoiseSession(self.declaration(), counts, self.noise_scale, source)


class AccuracyFromTotalEpsilon(IndependentLaplace):
    """FLAW: accuracy computed for noise scale W/ε (the whole ε), but the noise has scale W/ε₀."""

    name = "rtf-q-accuracy-total-epsilon"
    summary = "Independent Laplace whose accuracy reads the total ε."

    def _accuracy(self, beta: Any) -> Accuracy:
        k, scale = self.workload.max_queries, self.n * self.workload.grid
        b = mpq(self.workload.grid) / self.params["epsilon"]
        return Accuracy(
            ErrorBound(min(laplace_error(b, beta), scale), beta),
            ErrorBound(min(laplace_error(b, beta / k), scale), beta),
            formula="smallest a with Pr[|Y| > a] ≤ β, Y of scale W/ε; at β/k for all k",
        )


class StepsBetweenAnswers(IndependentLaplace):
    """FLAW: the budget is composed over k − 1 steps ("steps between answers"), k answers are given."""

    name = "rtf-q-k-minus-one-steps"
    summary = "Independent Laplace composing over the gaps between answers."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        k = self.workload.max_queries
        if k > 1:
            run, _ = declared_loss(self.params["epsilon"])
            self.budget = step_budget(run, self.params["delta"], k - 1)
            self.noise_scale = mpq(self.workload.grid) / self.budget.epsilon0
            self.derived = {
                "epsilon0": self.budget.epsilon0,
                "composition": self.budget.rule,
                "scale": self.noise_scale,
            }


class OkTwoStepAnswer(IndependentLaplace):
    """CONTROL: independent Laplace whose session computes the answer in two steps (same law)."""

    name = "rtf-ok-indep-two-step"
    summary = "Independent Laplace, answer computed in two statements."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return _TwoStepSession(self.declaration(), counts, self.noise_scale, source)


class _TwoStepSession(IndependentSession):
    def _answer(self, query: SparseQuery) -> int:
        exact = query.scaled_answer(self._counts)
        noise = discrete_laplace(self._scale, self._source)
        return clamp(exact + noise, self.scale)
