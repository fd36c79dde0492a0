"""The sparse projection releaser (Blum & Roth 2013, Alg. 2, Thm 4.5, Lemma 4.6, Thm 4.9): its
parameters (dimension or a target α, Laplace or Gaussian noise), its accuracy bounds' pieces,
and its central plan for PipelineDP (the engine's sums equal the direct release's)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.composition import largest_rho, step_budget, zcdp_delta
from dpplug.errors import BadData, BadParameter
from dpplug.guarantee import within_budget
from dpplug.plugins.queries.projection import (
    MAX_DIMENSION,
    SparseProjectionReleaser,
    _add,
    _contribution,
    _finish,
    _public,
)
from dpplug.plugins.queries.projection_accuracy import (
    coefficient_bound,
    energy_bound,
    projection_error,
    rademacher_moments,
    row_sum_error,
)
from dpplug.randomness import SeededSource

BASE = {
    "universe": "bytes:4",
    "n": 1000,
    "epsilon": 1,
    "delta": mpq(1, 10**6),
    "max_queries": 100,
    "sparsity": 5,
    "grid": 16,
}


def create(**params: object) -> SparseProjectionReleaser:
    releaser = dpplug.create("sparse-projection", **{**BASE, **params})
    assert isinstance(releaser, SparseProjectionReleaser)
    return releaser


@pytest.mark.parametrize("given", [{}, {"dimension": 64, "alpha": 0.5}])
def test_exactly_one_of_dimension_and_alpha(given: dict[str, object]) -> None:
    with pytest.raises(BadParameter, match="exactly one of dimension"):
        create(**given)


def test_noise_must_be_laplace_or_gaussian() -> None:
    with pytest.raises(BadParameter, match="'laplace' or 'gaussian'"):
        create(dimension=64, noise="cauchy")


def test_a_dimension_beyond_the_limit_is_refused_naming_it() -> None:
    with pytest.raises(BadParameter, match=str(MAX_DIMENSION)):
        create(dimension=MAX_DIMENSION + 1)


def test_alpha_picks_the_smallest_power_of_two_dimension_meeting_it() -> None:
    releaser = create(alpha=Fraction(1, 2), noise="gaussian")
    dimension = releaser.projection.dimension
    assert dimension & (dimension - 1) == 0
    target = Fraction(1, 2) * 1000 * 16
    assert releaser.accuracy(releaser.beta).simultaneous.a <= target
    assert (
        create(dimension=dimension // 2, noise="gaussian").accuracy(releaser.beta).simultaneous.a
        > target
    )


def test_an_unreachable_alpha_is_refused_with_the_memory_it_would_need() -> None:
    with pytest.raises(BadParameter, match=r"MiB.*raise alpha, n or ε"):
        create(alpha=Fraction(1, 10**6))


#: The ε the releasers compose to when asked for ε = 1: 2^-10 below it (declared_loss).
RUN = 1 - mpq(1, 1 << 10)


def test_laplace_noise_composes_over_the_dimension() -> None:
    releaser = create(dimension=256)
    budget = step_budget(RUN, mpq(1, 10**6), 256)
    assert releaser.budget == budget and releaser.noise_parameter == 1 / budget.epsilon0
    assert releaser.guarantee.delta == budget.delta
    assert within_budget(releaser.guarantee, 1, mpq(1, 10**6))


def test_gaussian_noise_is_calibrated_through_zcdp() -> None:
    releaser = create(dimension=256, noise="gaussian")
    rho = largest_rho(RUN, mpq(1, 10**6))
    assert releaser.noise_parameter == mpq(256) / (2 * rho)  # σ² = T/(2ρ)
    assert releaser.guarantee.delta == zcdp_delta(rho, RUN) <= mpq(1, 10**6)
    assert releaser.guarantee.epsilon == pytest.approx(float(RUN), rel=1e-15)
    assert within_budget(releaser.guarantee, 1, mpq(1, 10**6))


def test_rademacher_moments_are_exact() -> None:
    for m in (1, 2, 5):
        moments = rademacher_moments(m)
        for p in range(9):
            brute = sum(sum(signs) ** p for signs in itertools.product((-1, 1), repeat=m))
            assert moments[p] * 2**m == brute


def test_accuracy_pieces() -> None:
    """B never exceeds the trivial m·W; Σ₂ is at least E[Σ P_i²] = T·|w|² at most; the
    projection error falls like 1/√T in answer units; per query ≤ all k; a ≤ n·W."""
    assert row_sum_error(100, mpq(4), mpq(2), 1, mpq(1, 20), 40) >= 2 * 20  # ≥ 2σ√T
    t, m, w, r = 1024, 5, 16, 24
    assert coefficient_bound(t, m, w, r, 100, mpq(1, 80)) <= m * w
    assert energy_bound(t, m, w, r, 100, mpq(1, 80)) >= t * m * w * w
    errors = [projection_error(t, m, w, 1000, r, 100, mpq(1, 80)) / t for t in (1024, 4096)]
    assert 0.45 < errors[1] / errors[0] < 0.6  # about 1/√T
    for noise in ("laplace", "gaussian"):
        accuracy = create(dimension=4096, noise=noise).accuracy(Fraction(1, 20))
        assert accuracy.per_query.a <= accuracy.simultaneous.a <= 1000 * 16


def test_gaussian_noise_beats_laplace_at_large_dimensions() -> None:
    laplace = create(dimension=1 << 16).accuracy(Fraction(1, 20)).simultaneous.a
    gaussian = create(dimension=1 << 16, noise="gaussian").accuracy(Fraction(1, 20)).simultaneous.a
    assert gaussian < laplace


def test_the_central_plan_sums_what_a_direct_release_sums() -> None:
    """The plan's pieces, run as an engine would: per-label contributions folded in any order
    equal the column sums of the same public hash; the private step checks the shape and n."""
    params = {k: v for k, v in BASE.items() if k not in ("epsilon", "delta")} | {"dimension": 48}
    public = _public(params, SeededSource(7))
    universe, projection_hash = public
    counts = {b"ab": 5, b"": 2, b"\x00\x01": 9}
    pieces = [_contribution(public, label, count) for label, count in counts.items()]
    folded = _add(_add(pieces[2], pieces[0]), pieces[1])
    indices = [universe.index(label) for label in counts]
    assert folded[0] == 16
    assert list(folded[1]) == projection_hash.column_sums(indices, list(counts.values()))
    releaser = create(dimension=48)
    release = _finish(releaser, public, folded)
    assert release.hash == projection_hash and len(release.sums) == 48
    assert _finish(releaser, public, None).hash == projection_hash
    with pytest.raises(BadParameter, match="does not fit"):
        _finish(create(dimension=49), public, folded)
    with pytest.raises(BadData, match="at most n = 10"):
        _finish(create(dimension=48, n=10), public, folded)
    with pytest.raises(BadParameter, match="dimension T"):
        _public({**params, "dimension": None, "alpha": 0.5}, SeededSource(1))
    with pytest.raises(BadData):
        _contribution(public, "not bytes", 1)


def test_released_sums_are_the_column_sums_plus_noise_of_the_declared_scale() -> None:
    releaser = create(dimension=512, epsilon=16, delta=mpq(1, 4))
    counts = {b"x": 400, b"y": 300}
    source = SeededSource(8)
    release = releaser.release(counts, source)
    universe = releaser.universe
    assert universe is not None
    exact = release.hash.column_sums([universe.index(x) for x in counts], list(counts.values()))
    noise = np.array(release.sums) - np.array(exact)
    assert np.abs(noise).max() <= 40 * releaser.noise_parameter  # Laplace tails, not offsets
    assert (
        abs(np.mean(np.abs(noise)) - float(releaser.noise_parameter))
        < 0.35 * float(releaser.noise_parameter) + 1
    )
