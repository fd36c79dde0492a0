"""Broken query releasers (each class docstring's first line states its flaw)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from gmpy2 import mpq

from dpplug.composition import StepBudget
from dpplug.discrete_noise import discrete_laplace
from dpplug.errors import BadData, BadParameter, NotSupported
from dpplug.kind import CentralPlan
from dpplug.kinds.query_releaser.queries import LabelCounts, QuerySession, SparseQuery, clamp
from dpplug.plugins.queries.independent import IndependentLaplace, IndependentSession
from dpplug.plugins.queries.projection import SparseProjectionReleaser
from dpplug.randomness import RandomSource, SeededSource


class _SingleAnswerSession(IndependentSession):
    def answer(self, query: object) -> Fraction:
        """One query without building a batch (the common case in interactive use)."""
        parsed = self.query(query)
        with self._lock:
            if self.answered > self.declaration.workload.max_queries:
                raise NotSupported(
                    f"this session's guarantee covers k = {self.declaration.workload.max_queries}"
                    " queries; start a new release for more"
                )
            value = Fraction(self._answer(parsed), self.scale)
            self.answered += 1
            return value


class SingleAnswerOffByOne(IndependentLaplace):
    """Flaw: answer() (one query) checks answered > k instead of ≥ k: k + 1 answers.

    A fast single-query path next to the batch path, whose refusal test is off by one, so a
    session answers k + 1 queries one call each while its budget composes k.
    """

    name = "rte-il-single-answer-k-plus-one"
    summary = "Independent Laplace with a fast single-answer path."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return _SingleAnswerSession(self.declaration(), counts, self.noise_scale, source)


class _EdgeSession(IndependentSession):
    def _answer(self, query: SparseQuery) -> int:
        exact = query.scaled_answer(self._counts)
        grid = self.declaration.workload.grid
        scale = self._scale
        if exact < grid or exact > self.scale - grid:  # the clamp absorbs half the noise there
            scale = scale / 2
        return clamp(exact + discrete_laplace(scale, self._source), self.scale)


class EdgeHalfNoise(IndependentLaplace):
    """Flaw: half the noise scale when the true answer is within one step of 0 or 1.

    "Answers near the ends are clamped, so half the noise suffices there": the noise scale then
    depends on the true answer, and neighbouring datasets on both sides of the edge get laws
    whose ratio exceeds e^{ε₀}.
    """

    name = "rte-il-edge-half-noise"
    summary = "Independent Laplace with less noise near the clamped ends."

    def _start(self, counts: LabelCounts, source: RandomSource) -> QuerySession:
        return _EdgeSession(self.declaration(), counts, self.noise_scale, source)


class FloatStepBudget(IndependentLaplace):
    """Flaw: the basic-composition step ε₀ = ε₁/k is computed in floats (round to nearest).

    k steps of the float ε₀ can exceed ε₁ by a rounding error, and the declared bound L on e^ε
    is e^{ε₁} rounded up at 128 bits, so the composed loss can exceed the declared one.
    """

    name = "rte-il-float-step"
    summary = "Independent Laplace with its basic-composition step in doubles."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        if self.budget.rule == "basic":
            k = self.workload.max_queries
            run = self.budget.epsilon0 * k
            epsilon0 = mpq(float(run) / k)
            self.budget = StepBudget(epsilon0, k, self.budget.epsilon, self.budget.delta, "basic")
            self.noise_scale = mpq(self.workload.grid) / epsilon0
            self.derived = {**self.derived, "epsilon0": epsilon0, "scale": self.noise_scale}


def _reproducible_finish(mechanism: Any, public: Any, folded: Any) -> Any:
    """The pipeline's last step, seeded from the public hash so that re-running a pipeline on the
    same data gives the same release (the flaw: the noise is then a function of public values)."""
    _universe, projection_hash = public
    if not isinstance(mechanism, SparseProjectionReleaser):
        raise NotSupported(f"{mechanism.name} has no sparse projection plan")
    if mechanism.projection != projection_hash.shape:
        raise BadParameter("the pipeline's hash does not fit the mechanism built from the budget")
    dimension = projection_hash.shape.dimension
    rows, sums = (0, np.zeros(dimension, dtype=np.int64)) if folded is None else folded
    if rows > mechanism.n:
        raise BadData(f"the data has {rows} privacy units but n = {mechanism.n}")
    seed = int(projection_hash.coefficients[0]) % (1 << 63)
    return mechanism._noisy(projection_hash, [int(v) for v in sums], SeededSource(seed))


class ReproduciblePipelineProjection(SparseProjectionReleaser):
    """Flaw: on the PipelineDP route the noise is seeded from the public hash ("reproducible").

    ``central_plan``'s finish step seeds its noise from the hash's first coefficient, which the
    release publishes: anyone can regenerate the noise and subtract it. The direct route
    (``start``/``release``) is the built-in's.
    """

    name = "rte-proj-reproducible-pipeline"
    summary = "Sparse projection whose pipeline noise is seeded from the public hash."

    @classmethod
    def central_plan(cls) -> CentralPlan:
        plan = SparseProjectionReleaser.central_plan()
        return CentralPlan(
            per_bin=plan.per_bin,
            combine=plan.combine,
            empty=plan.empty,
            finish=_reproducible_finish,
            public=plan.public,
        )
