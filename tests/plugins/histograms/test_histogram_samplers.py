"""Every registered counting-query sampler works by name in every releaser it fits (Balcer–Vadhan
parameterise each releaser by any (ε/2, 0)-DP counting-query algorithm M), with the share of ε
and the γ of the paper's tables, and ``sampler_options`` reaches the sampler."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from gmpy2 import mpq

import dpplug
from dpplug.kinds.histogram_releaser.outputs import (
    CompactHistogram,
    DenseHistogram,
    SparseHistogram,
)

from support.histograms import plugin_registry

#: sampler → (its extra options, fits the releasers that need a bounded pure sampler)
SAMPLERS: dict[str, tuple[dict[str, Any], bool]] = {
    "geosample": ({}, True),
    "fastsample": ({}, True),
    "fixedpoint-geometric": ({}, True),
    "truncated-geometric": ({"delta": Fraction(1, 10**6)}, False),
    "discrete-laplace": ({}, False),
    "ternary-response": ({}, True),
}
UNIVERSE, N, EPSILON, BETA = "range:0:39", 2, Fraction(1, 2), Fraction(1, 10)
DELTA = Fraction(1, 100)
RELEASERS = {
    "basic-histogram": ({}, DenseHistogram),
    "stability-histogram": ({"delta": DELTA}, SparseHistogram),
    "pure-sparse-histogram": ({}, SparseHistogram),
    "compact-histogram": ({}, CompactHistogram),
}
#: The sampler's share of ε and the γ the releaser gives FastSample (|X| = 40).
SHARE = {
    "basic-histogram": mpq(1, 2),
    "stability-histogram": mpq(1, 2),
    "pure-sparse-histogram": mpq(1, 2),
    "compact-histogram": mpq(39, 80),
}
GAMMA = {
    "basic-histogram": mpq(BETA) / 80,
    "stability-histogram": mpq(DELTA) / 2,
    "pure-sparse-histogram": mpq(BETA) / 2560,  # β/(64·|X|)
    "compact-histogram": mpq(BETA) / 80,
}


def create(releaser: str, sampler: str, **extra: object) -> Any:
    options, _ = SAMPLERS[sampler]
    params: dict[str, Any] = {
        "universe": UNIVERSE,
        "n": N,
        "sampler": sampler,
        "beta": BETA,
        "sampler_options": options,
        **RELEASERS[releaser][0],
        **extra,
    }
    if sampler != "ternary-response":
        params["epsilon"] = EPSILON
    return plugin_registry().create(releaser, **params)


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("releaser", RELEASERS)
def test_any_sampler_by_name(releaser: str, sampler: str) -> None:
    _, fits = SAMPLERS[sampler]
    if not fits and releaser != "basic-histogram":
        with pytest.raises(dpplug.BadParameter):
            create(releaser, sampler)
        return
    mechanism = create(releaser, sampler)
    noise = mechanism.sampler
    assert noise.name == sampler
    if "n" in noise.params:
        assert noise.params["n"] == N
    if "epsilon" in noise.params:
        assert noise.params["epsilon"] == mpq(EPSILON) * SHARE[releaser]
    if "gamma" in noise.params:
        assert noise.params["gamma"] == GAMMA[releaser]

    per_count = noise.guarantee.exp_epsilon
    guarantee = mechanism.guarantee
    assert guarantee.neighbouring == dpplug.Neighbouring(dpplug.Relation.REPLACE_ONE)
    if releaser == "compact-histogram":
        ratio = mechanism.empty_ratio
        assert guarantee.exp_epsilon == per_count**2 * ratio
        assert 1 < ratio <= mechanism.ratio_bound
    else:
        assert guarantee.exp_epsilon == per_count**2
    if releaser == "basic-histogram":
        assert guarantee.delta == 2 * noise.guarantee.delta
    elif releaser == "stability-histogram":
        assert 0 <= guarantee.delta <= DELTA
    else:
        assert guarantee.pure

    data = {3: 1, 17: 1}
    output = mechanism.release(data, dpplug.SeededSource(5))
    assert isinstance(output, RELEASERS[releaser][1])
    assert output.guarantee == guarantee and output.accuracy == mechanism.accuracy(BETA)
    assert output.mechanism == repr(mechanism)
    if isinstance(output, DenseHistogram):
        assert len(output) == 40 and output.counts.dtype == np.int64
        if fits:
            assert all(0 <= c <= N for c in output.counts)
    elif isinstance(output, SparseHistogram):
        assert list(output.indices) == sorted(set(output.indices)) and len(output) <= N
        assert all(1 <= c <= N for c in output.counts)
    else:
        assert all(0 <= c <= N for c in output.counts(range(40)))


@pytest.mark.parametrize("releaser", RELEASERS)
@pytest.mark.parametrize(
    "options",
    [{"gamma": Fraction(1, 1000)}, "gamma=1/1000", "gamma=0.001", {"gamma": mpq(1, 1000)}],
)
def test_sampler_options_reach_the_sampler(releaser: str, options: object) -> None:
    mechanism = create(releaser, "fastsample", sampler_options=options)
    assert mechanism.sampler.params["gamma"] == mpq(1, 1000)
    default = create(releaser, "fastsample")
    assert default.sampler.params["gamma"] == GAMMA[releaser]
    assert mechanism.sampler.d != default.sampler.d  # γ changes the sampler


def test_sampler_options_pass_other_parameters_too() -> None:
    mechanism = create(
        "basic-histogram", "truncated-geometric", sampler_options={"delta": Fraction(1, 1000)}
    )
    assert mechanism.sampler.params["delta"] == mpq(1, 1000)
    assert mechanism.guarantee.delta == 2 * mechanism.sampler.guarantee.delta > 0


def test_default_samplers() -> None:
    registry = plugin_registry()
    common = {"universe": UNIVERSE, "n": N, "epsilon": EPSILON}
    assert registry.create("basic-histogram", **common).sampler.name == "fixedpoint-geometric"
    stability = registry.create("stability-histogram", **common, delta=DELTA)
    assert stability.sampler.name == "fixedpoint-geometric"
    assert registry.create("pure-sparse-histogram", **common).sampler.name == "fastsample"
    assert registry.create("compact-histogram", **common).sampler.name == "fastsample"


def test_releasers_are_registered_as_histogram_releasers() -> None:
    names = {e.name for e in dpplug.registry().entries(dpplug.kinds.HISTOGRAM_RELEASER)}
    assert set(RELEASERS) <= names
