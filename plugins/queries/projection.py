"""SparseProject (Blum & Roth, "Fast Private Data Release Algorithms for Sparse Queries", RANDOM
2013, Def. 4.3, Alg. 2, Remark 4.4, Thm 4.5, Lemma 4.6, Thm 4.9;
docs/mechanisms.md#sparse-projection): a non-interactive release of a noisy random projection of
the data onto T dimensions, answering any number of m-sparse queries.

**Release.** A public hash f (:class:`~dpplug.kinds.query_releaser.projections.ProjectionHash`:
r-wise independent ±1 entries from a random polynomial over GF(2^s)) is drawn first, independently
of the data; the integer column sums S_i = Σ_x c_x·A[i, x] get independent exact integer noise, and
the hash and the noisy sums are released (:class:`~dpplug.SparseProjection`).

**Privacy (Thm 4.5).** One row added or removed changes every S_i by exactly 1 (entries are
±1), so the vector S has ℓ₁ sensitivity T and ℓ₂ sensitivity √T; releasing f costs nothing.

- ``noise="laplace"`` (the paper): discrete Laplace of scale 1/ε₁ on each S_i is ε₁-DP per
  coordinate; ε₁ is the largest step with which T steps compose to (ε, δ) (basic composition,
  or the optimal composition theorem up to 32,768 steps and the advanced one beyond, which
  Thm 4.5's σ = ε/√(8 ln(1/δ)) instantiates with a worse constant), computed rigorously.
- ``noise="gaussian"`` (beyond the paper): discrete Gaussian of variance σ² on each S_i makes the
  release (T/(2σ²))-zCDP (Canonne, Kamath, Steinke 2020, Thm 14, ℓ₂ sensitivity √T); ρ is the
  largest with ρ-zCDP ⇒ (ε, δ)-DP by their Cor. 13, computed rigorously, and σ² = T/(2ρ)
  exactly. The noise on an answer then grows like √(T·ln(1/δ))/ε instead of Laplace's
  √(2T·ln(1/δ))·(1 + …)/ε.

**T.** Alg. 2's T = 4·64²·ln(1/τ)·(m^{3/2}/2 + n⁴/(2√m) + √m·n²) is astronomically large for
real n, so the user chooses T (``dimension``), or a target α and the smallest power of two T
whose declared accuracy meets it; a T beyond :data:`MAX_DIMENSION` is refused with the memory it
would need. The declared accuracy is proved for that T (:mod:`.projection_accuracy`); the hash's
independence r is chosen for the moment orders that proof uses.

**Cost.** Releasing evaluates the hash at ⌈T/s⌉ points per distinct label of the data and draws
T noises; answering a query evaluates it on the query's labels (kept per label): time
O(T·r·(labels + m·k)) bit operations, whatever |X|. In PipelineDP the engine computes each
distinct label's contribution c_x·A[·, x] on the workers (:meth:`central_plan`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.composition import StepBudget, largest_rho, step_budget, zcdp_delta
from dpplug.discrete_noise import discrete_gaussian, discrete_laplace
from dpplug.errors import BadData, BadParameter, NotSupported
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee
from dpplug.kind import CentralPlan
from dpplug.kinds import QueryReleaser
from dpplug.kinds.query_releaser.coordinate_noise import (
    GaussianCoordinates,
    LaplaceCoordinates,
)
from dpplug.kinds.query_releaser.projections import (
    ProjectionHash,
    ProjectionShape,
    SparseProjection,
)
from dpplug.kinds.query_releaser.queries import LabelCounts
from dpplug.kinds.query_releaser.structures import NoisyCoordinates
from dpplug.param_types import INTEGER, RATIONAL, TEXT
from dpplug.params import Param, Schema
from dpplug.plugins.queries.projection_accuracy import (
    best_rank,
    coefficient_bound,
    energy_bound,
    gaussian_noise_error,
    laplace_noise_error,
    projection_error,
)
from dpplug.plugins.queries.workload import (
    ADD_REMOVE_ROW,
    declared_loss,
    releaser_params,
    set_public,
)
from dpplug.randomness import RandomSource, SystemSource
from dpplug.universe import Universe, parse_universe

#: The largest dimension T (8 MiB of noisy sums).
MAX_DIMENSION = 1 << 20
NOISES = ("laplace", "gaussian")

_DIMENSION = Param(
    "dimension",
    INTEGER,
    "T: the projection's dimension (or give alpha instead).",
    low=1,
    high=MAX_DIMENSION,
    optional=True,
    example="4096",
)
_ALPHA = Param(
    "alpha",
    RATIONAL,
    "Target α: use the smallest power-of-two T whose declared accuracy is within α (or give "
    "dimension instead).",
    low=0,
    low_open=True,
    high=1,
    optional=True,
    example="0.05",
)
_NOISE = Param("noise", TEXT, "laplace (Blum & Roth) or gaussian.", default="laplace")


def _memory(dimension: int) -> str:
    return f"about {9 * dimension / 2**20:.3g} MiB (8 bytes per noisy sum, 1 per matrix entry)"


def _shape(
    universe: Universe, dimension: int, workload: tuple[int, int], beta: Any, noise: str
) -> ProjectionShape:
    """The hash's shape for dimension T: r from the accuracy proof's moment orders."""
    max_queries, sparsity = workload
    rank = best_rank(dimension, sparsity, max_queries, beta, laplace=noise == "laplace")
    return ProjectionShape.fitting(dimension, rank, universe.size)


class SparseProjectionReleaser(QueryReleaser):
    name = "sparse-projection"
    summary = (
        "Non-interactive: a noisy random projection onto T dimensions with an r-wise "
        "independent hash; Laplace or Gaussian noise."
    )
    reference = (
        "Blum & Roth 2013, Fast Private Data Release Algorithms for Sparse Queries: Alg. 2, "
        "Remark 4.4, Thm 4.5, Lemma 4.6, Thm 4.9"
    )
    schema = Schema(
        (*releaser_params(universe_required=True, delta_zero=False), _DIMENSION, _ALPHA, _NOISE)
    )
    conformance_cases = (
        {
            "universe": "range:0:9",
            "n": 40,
            "epsilon": 4,
            "delta": mpq(1, 10**5),
            "max_queries": 3,
            "sparsity": 2,
            "grid": 4,
            "dimension": 16,
        },
        {
            "universe": 'labels:["a", "b", "c"]',
            "n": 30,
            "epsilon": 8,
            "delta": mpq(1, 10**4),
            "max_queries": 2,
            "sparsity": 2,
            "grid": 2,
            "dimension": 8,
            "noise": "gaussian",
        },
    )
    interactive = False

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        set_public(self, self.params)
        noise = self.params["noise"]
        if noise not in NOISES:
            raise BadParameter(f"noise={noise!r} is invalid: pass 'laplace' or 'gaussian'")
        dimension, alpha = self.params["dimension"], self.params["alpha"]
        if (dimension is None) == (alpha is None):
            raise BadParameter(
                "sparse-projection needs exactly one of dimension (T, e.g. dimension=4096) and "
                "alpha (a target accuracy, e.g. alpha=0.05)"
            )
        self.noise = noise
        if dimension is None:
            dimension = self._dimension_for(alpha)
        self._configure(dimension)

    def _configure(self, dimension: int) -> None:
        epsilon, self.exp_epsilon = declared_loss(self.params["epsilon"])
        delta = self.params["delta"]
        universe = self.universe
        assert universe is not None  # a required parameter
        workload = (self.workload.max_queries, self.workload.sparsity)
        self.projection = _shape(universe, dimension, workload, self.beta, self.noise)
        if self.noise == "laplace":
            self.budget: StepBudget | None = step_budget(epsilon, delta, dimension)
            self.noise_parameter = 1 / self.budget.epsilon0  # the discrete Laplace scale
            self.delta_used = self.budget.delta
        else:
            self.budget = None
            rho = largest_rho(epsilon, delta)
            self.noise_parameter = mpq(dimension) / (2 * rho)  # σ²
            self.delta_used = zcdp_delta(rho, epsilon)
        self.derived = {
            "dimension": dimension,
            "rank": self.projection.rank,
            "field_bits": self.projection.bits,
            "noise_parameter": self.noise_parameter,
        }

    def _dimension_for(self, alpha: Any) -> int:
        """The smallest power of two T ≤ MAX_DIMENSION whose declared a meets α·n·W."""
        target = alpha * self.n * self.workload.grid
        dimension = 1
        while dimension <= MAX_DIMENSION:
            self._configure(dimension)
            # _accuracy, not accuracy: the public one is cached per β, for the final T only
            if self._accuracy(self.beta).simultaneous.a <= target:
                return dimension
            dimension *= 2
        raise BadParameter(
            f"no dimension T ≤ {MAX_DIMENSION} ({_memory(MAX_DIMENSION)}) reaches α = "
            f"{float(alpha):.3g} for n = {self.n}, ε = {float(self.params['epsilon']):.3g}, "
            f"k = {self.workload.max_queries}, m = {self.workload.sparsity}; a larger T would "
            f"need more memory than supported (each doubling of T doubles it); raise alpha, n "
            f"or ε"
        )

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.exp_epsilon, self.delta_used, ADD_REMOVE_ROW)

    def _accuracy(self, beta: Any) -> Accuracy:
        return Accuracy(
            ErrorBound(self._error(beta, 1), beta),
            ErrorBound(self._error(beta, self.workload.max_queries), beta),
            formula="⌈(projection error + noise error)/T⌉ in grid units 1/(nW): the moment "
            "bound on the JL error, Lemma 4.6 and the noise's tail (see "
            "plugins/queries/projection_accuracy.py); for k queries fixed before the release",
        )

    def _error(self, beta: Any, queries: int) -> int:
        shape, n, w = self.projection, self.n, self.workload
        t, m, grid, r = shape.dimension, w.sparsity, w.grid, shape.rank
        laplace = self.noise == "laplace"
        share = beta / (4 if laplace else 3)
        jl = projection_error(t, m, grid, n, r, queries, share)
        energy = energy_bound(t, m, grid, r, queries, share)
        if laplace:
            coefficient = coefficient_bound(t, m, grid, r, queries, share)
            noise = laplace_noise_error(self.noise_parameter, coefficient, energy, queries, share)
        else:
            noise = gaussian_noise_error(self.noise_parameter, energy, queries, share)
        return int(min(-((-(jl + noise)) // t), n * grid))

    def release(self, data: object, source: RandomSource | None = None) -> SparseProjection:
        """:meth:`start`: the projection of *data*."""
        projection = self.start(data, source)
        assert isinstance(projection, SparseProjection)
        return projection

    def _start(self, counts: LabelCounts, source: RandomSource) -> SparseProjection:
        projection_hash = self.projection.draw(source)
        universe = self.universe
        assert universe is not None
        indices = [universe.index(x) for x in counts.labels]
        sums = projection_hash.column_sums(indices, counts.counts)
        return self._noisy(projection_hash, sums, source)

    def _noisy(
        self, projection_hash: ProjectionHash, sums: list[int], source: RandomSource
    ) -> SparseProjection:
        """The release of exact column sums: each gets its independent noise."""
        draw = discrete_laplace if self.noise == "laplace" else discrete_gaussian
        noise = draw(self.noise_parameter, source, len(sums))
        noisy = tuple(s + z for s, z in zip(sums, noise, strict=True))
        return SparseProjection(self.declaration(), projection_hash, noisy)

    def exact_structure(self) -> NoisyCoordinates:
        """Discrete Laplace of scale 1/ε₁ or discrete Gaussian of variance σ² on each of the T
        column sums, which one row moves by exactly 1 each (entries ±1)."""
        t = self.projection.dimension
        if self.noise == "laplace":
            return NoisyCoordinates(LaplaceCoordinates(self.noise_parameter, t))
        return NoisyCoordinates(GaussianCoordinates(self.noise_parameter, t))

    @classmethod
    def central_plan(cls) -> CentralPlan:
        """The hash drawn when the pipeline is built (from the user's universe, dimension, k, m,
        β and noise: never the budget), each distinct label's count times its column summed
        on the workers, the noise added once (:func:`_finish`)."""
        return CentralPlan(
            per_bin=_contribution, combine=_add, empty=None, finish=_finish, public=_public
        )


def _param(params: Mapping[str, Any], name: str) -> Any:
    """The user's parameter *name*, validated (its default if it has one and was left out)."""
    for param in SparseProjectionReleaser.schema:
        if param.name == name:
            value = params.get(name)
            if value is None and not (param.required or param.optional):
                value = param.default
            return param.coerce(value)
    raise KeyError(name)


def _public(params: Mapping[str, Any], source: RandomSource) -> tuple[Universe, ProjectionHash]:
    dimension = _param(params, "dimension")
    if dimension is None:
        raise BadParameter(
            "in a pipeline give sparse-projection its dimension T: a target alpha would make the "
            "public hash depend on the budget, which is not known when the pipeline is built"
        )
    universe = parse_universe(params.get("universe"))
    workload = (_param(params, "max_queries"), _param(params, "sparsity"))
    shape = _shape(universe, dimension, workload, _param(params, "beta"), _param(params, "noise"))
    return universe, shape.draw(source)


def _contribution(
    public: tuple[Universe, ProjectionHash], label: Any, count: int
) -> tuple[int, npt.NDArray[np.int64]]:
    universe, projection_hash = public
    column = projection_hash.columns([universe.index(label)])[0]
    return count, count * column.astype(np.int64)


def _add(
    a: tuple[int, npt.NDArray[np.int64]], b: tuple[int, npt.NDArray[np.int64]]
) -> tuple[int, npt.NDArray[np.int64]]:
    return a[0] + b[0], a[1] + b[1]


def _finish(mechanism: Any, public: tuple[Universe, ProjectionHash], folded: Any) -> Any:
    universe, projection_hash = public
    if not isinstance(mechanism, SparseProjectionReleaser):
        raise NotSupported(f"{mechanism.name} has no sparse projection plan")
    if mechanism.projection != projection_hash.shape or mechanism.universe != universe:
        raise BadParameter("the pipeline's hash does not fit the mechanism built from the budget")
    empty = (0, np.zeros(projection_hash.shape.dimension, dtype=np.int64))
    rows, sums = empty if folded is None else folded
    if rows > mechanism.n:
        raise BadData(
            f"the data has {rows} privacy units but sparse-projection was built for at most "
            f"n = {mechanism.n}; build it with a larger n (n is public)"
        )
    return mechanism._noisy(projection_hash, [int(v) for v in sums], SystemSource())
