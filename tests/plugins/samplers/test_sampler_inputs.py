"""The vectorised ``sample`` path and input validation of every built-in sampler (the bad-input
and hygiene contracts of docs/conformance.md: bad input raises a dpplug error and draws nothing;
integer outputs; strict-time samplers draw a data-independent number of times)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import dpplug

SAMPLERS = {
    "geosample": {"n": 10, "epsilon": Fraction(1, 2)},
    "fastsample": {"n": 10, "epsilon": Fraction(1, 2), "gamma": Fraction(1, 10)},
    "fixedpoint-geometric": {"n": 10, "epsilon": Fraction(1, 2)},
    "truncated-geometric": {"epsilon": Fraction(1, 2), "delta": Fraction(1, 1000), "n": 10},
    "discrete-laplace": {"epsilon": Fraction(1, 2)},
}
CLAMPED = ("geosample", "fastsample", "fixedpoint-geometric", "truncated-geometric")


def create(name: str, **overrides: object) -> Any:
    return dpplug.create(name, **{**SAMPLERS[name], **overrides})


def used_source() -> dpplug.SeededSource:
    """A source that has already served draws, so 'nothing drawn' is not trivially 0."""
    source = dpplug.SeededSource(11)
    source.uniform(1000)
    return source


@pytest.mark.parametrize("name", SAMPLERS)
def test_sample_keeps_shape_and_returns_int64(name: str) -> None:
    sampler = create(name)
    counts = np.arange(12, dtype=np.int64).reshape(3, 4) % 11
    out = sampler.sample(counts, dpplug.SeededSource(1))
    assert out.shape == (3, 4) and out.dtype == np.int64
    for given in (
        [3, 0, 10],
        np.array([3, 0, 10], dtype=np.int32),
        np.array([3, 0, 10], np.uint8),
        np.zeros((2, 0, 3), dtype=np.int64),
        7,
    ):
        result = sampler.sample(given, dpplug.SeededSource(2))
        assert result.shape == np.shape(given) and result.dtype == np.int64


@pytest.mark.parametrize("name", SAMPLERS)
def test_outputs_lie_in_the_support(name: str) -> None:
    sampler = create(name)
    counts = np.repeat(np.arange(11, dtype=np.int64), 500)
    out = sampler.sample(counts, dpplug.SeededSource(3))
    if name in CLAMPED:
        assert out.min() >= 0 and out.max() <= sampler.n
        assert out.min() == 0 and out.max() == sampler.n  # both clamped ends occur
    if name == "truncated-geometric":
        assert np.all(np.abs(out - counts) <= sampler.derived["k"])
    assert len(np.unique(out)) > 5


@pytest.mark.parametrize("name", SAMPLERS)
def test_same_seed_same_output(name: str) -> None:
    sampler = create(name)
    counts = np.arange(11)
    first = sampler.sample(counts, dpplug.SeededSource(4))
    assert np.array_equal(first, sampler.sample(counts, dpplug.SeededSource(4)))


def test_fixedpoint_geometric_draws_once_per_count_whatever_the_counts() -> None:
    sampler = dpplug.create("fixedpoint-geometric", n=1000, epsilon=Fraction(1, 3))
    assert sampler.strict_time
    draws = []
    for counts in (
        np.zeros(5000, dtype=np.int64),
        np.full(5000, 1000),
        np.random.default_rng(0).integers(0, 1001, size=5000),
    ):
        source = used_source()
        before = source.draws
        sampler.sample(counts, source)
        draws.append(source.draws - before)
    assert draws == [5000, 5000, 5000]


BAD_COUNTS = [
    pytest.param([-1, 3], id="negative"),
    pytest.param([3, 11], id="above-n"),
    pytest.param([1.0, 2.0], id="floats"),
    pytest.param(np.array([1.5]), id="float-array"),
    pytest.param([True, False], id="bools"),
    pytest.param(np.array([1, 2], dtype=object), id="object-array"),
    pytest.param(["1"], id="strings"),
    pytest.param(None, id="none"),
]


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("counts", BAD_COUNTS)
def test_bad_counts_raise_bad_data_before_any_draw(name: str, counts: object) -> None:
    sampler = create(name)
    if sampler.n is None and isinstance(counts, list) and counts in ([-1, 3], [3, 11]):
        counts = [np.iinfo(np.int64).max]  # an unbounded sampler accepts any count up to 2^62
    source = used_source()
    before = source.draws
    with pytest.raises(dpplug.BadData):
        sampler.sample(counts, source)
    assert source.draws == before


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("count", [-1, 11, 2.0, True, np.bool_(False), "3", None])
def test_bad_scalar_counts(name: str, count: object) -> None:
    sampler = create(name)
    if sampler.n is None and count in (-1, 11):
        count = 1 << 63
    with pytest.raises(dpplug.BadData):
        sampler.pmf(count)
    if sampler.d is not None:
        with pytest.raises(dpplug.BadData):
            sampler(count, 1)
        with pytest.raises(dpplug.BadData):
            sampler.scaled_cdf(0, count)


@pytest.mark.parametrize("name", [n for n in SAMPLERS if n != "discrete-laplace"])
def test_bad_randomness_u(name: str) -> None:
    sampler = create(name)
    for u in (0, sampler.d + 1, -5, 1.0, True):
        with pytest.raises(dpplug.BadData):
            sampler(3, u)
    for z in (1.5, True):
        with pytest.raises(dpplug.BadData):
            sampler.scaled_cdf(z, 3)


@pytest.mark.parametrize("name", SAMPLERS)
def test_source_must_be_a_random_source(name: str) -> None:
    with pytest.raises(dpplug.BadParameter):
        create(name).sample([1, 2], np.random.default_rng(0))


BAD_EPSILONS = [0, -1, Fraction(-1, 2), float("nan"), float("inf"), True, "0.5", None, 1e6]


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("epsilon", BAD_EPSILONS, ids=repr)
def test_bad_epsilon(name: str, epsilon: object) -> None:
    with pytest.raises(dpplug.BadParameter):
        create(name, epsilon=epsilon)


@pytest.mark.parametrize("name", [n for n in SAMPLERS if n != "discrete-laplace"])
@pytest.mark.parametrize("n", [0, -3, 1.5, 2.0, True, "5", Fraction(7, 2)], ids=repr)
def test_bad_count_bound(name: str, n: object) -> None:
    with pytest.raises(dpplug.BadParameter):
        create(name, n=n)


@pytest.mark.parametrize("delta", [0, 1, -0.1, 1.5, float("nan"), True, "1e-6"], ids=repr)
def test_bad_delta(delta: object) -> None:
    with pytest.raises(dpplug.BadParameter):
        create("truncated-geometric", delta=delta)


@pytest.mark.parametrize(
    "gamma", [0, -0.1, Fraction(-1, 10), 0.75, 1, float("nan"), False], ids=repr
)
def test_bad_gamma(gamma: object) -> None:
    with pytest.raises(dpplug.BadParameter):
        create("fastsample", gamma=gamma)


@pytest.mark.parametrize("name", SAMPLERS)
def test_missing_and_unknown_parameters(name: str) -> None:
    with pytest.raises(dpplug.BadParameter):
        dpplug.create(name)
    with pytest.raises(dpplug.BadParameter):
        create(name, sigma=1)


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("beta", [0, 1, -0.5, float("nan"), True])
def test_bad_beta(name: str, beta: object) -> None:
    with pytest.raises(dpplug.BadParameter):
        create(name).accuracy(beta)


def test_errors_are_dpplug_errors() -> None:
    assert issubclass(dpplug.BadData, dpplug.DpplugError)
    assert issubclass(dpplug.BadParameter, dpplug.DpplugError)
    assert issubclass(dpplug.NotSupported, dpplug.DpplugError)
