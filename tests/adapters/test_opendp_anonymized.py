"""Anonymized-histogram releasers as OpenDP 0.16 measurements: after ``then_count_by`` and on
label vectors directly, with the privacy map translating sorted-ℓ₁ distance 1 to OpenDP's
distances (group privacy over min(l₁, l₀·l∞) steps), bad data refused before any draw, and
dpplug's serialisation of the measurement."""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import Any

import pytest

dp = pytest.importorskip("opendp.prelude")
mpmath = pytest.importorskip("mpmath")

import dpplug  # noqa: E402
from dpplug.adapters import opendp as adapter  # noqa: E402
from dpplug.adapters.opendp import (  # noqa: E402
    deserialize,
    make_measurement,
    serialize,
    then_measurement,
)
from dpplug.kinds.anonymized_histogram_releaser.outputs import AnonymizedHistogram  # noqa: E402

ROWS = ["a"] * 300 + ["b"] * 60 + ["c"] * 30 + [f"single{i}" for i in range(40)]
BETA = Fraction(1, 10**9)  # failure probability of each accuracy check


@pytest.fixture(autouse=True, scope="module")
def _native_features() -> None:
    adapter.enable_features()


def labels_space() -> tuple[Any, Any]:
    return dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()


def counts_space() -> tuple[Any, Any]:
    return (
        dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T="i64")),
        dp.l01inf_distance(dp.absolute_distance(T="i64")),
    )


def ln(value: Any) -> Any:
    """ln(value) of a rational as an mpmath number with 80 significant digits."""
    with mpmath.workdps(80):
        return mpmath.log(mpmath.mpf(int(value.numerator))) - mpmath.log(
            mpmath.mpf(int(value.denominator))
        )


def assert_epsilon_up(value: float, exact: Any) -> None:
    """*value* ≥ *exact*, and at most two ulps above it (the adapter rounds up twice)."""
    below = math.nextafter(math.nextafter(value, -math.inf), -math.inf)
    with mpmath.workdps(80):
        assert mpmath.mpf(value) >= exact > mpmath.mpf(below), (value, exact)


@pytest.mark.parametrize("epsilon", [0.5, 2])
def test_count_by_then_privhist(epsilon: float) -> None:
    chain = dp.t.make_count_by(*labels_space(), TV="i64") >> then_measurement(
        "privhist", epsilon=epsilon
    )
    release = chain(ROWS)
    mechanism = dpplug.create("privhist", epsilon=epsilon)
    assert isinstance(release, AnonymizedHistogram)
    assert abs(release.total - len(ROWS)) <= mechanism.accuracy(BETA).per_query.a
    assert_epsilon_up(chain.map(1), ln(mechanism.guarantee.exp_epsilon))
    assert chain.map(3) == pytest.approx(3 * chain.map(1), rel=1e-12)


def test_label_vectors_directly_and_label_counts_share_the_map() -> None:
    direct = make_measurement("privhist", *labels_space(), epsilon=1)
    counted = make_measurement("privhist", *counts_space(), epsilon=1)
    assert isinstance(direct(ROWS), AnonymizedHistogram)
    one = direct.map(1)
    for l0, l1, linf, steps in [(1, 1, 1, 1), (1, 5, 2, 2), (3, 4, 2, 4), (2, 9, 9, 9)]:
        assert counted.map((l0, l1, linf)) == pytest.approx(steps * one, rel=1e-12)
    assert counted.map((0, 0, 0)) == 0


def test_sorted_histogram_needs_a_public_length() -> None:
    with pytest.raises(dpplug.BadParameter, match="missing parameter length"):
        make_measurement("sorted-histogram", *labels_space(), epsilon=1)
    measurement = make_measurement("sorted-histogram", *labels_space(), epsilon=16, length=50)
    release = measurement(ROWS)  # ranks 1–3 keep their counts unless their noise is not 0 (< 1e-6)
    assert release.sorted_counts()[:3] == [300, 60, 30]


@pytest.fixture
def draws(monkeypatch: pytest.MonkeyPatch) -> dpplug.SeededSource:
    """One shared source behind every default draw, to count what a failing call drew."""
    source = dpplug.SeededSource(5)
    for kind in dpplug.KINDS:
        monkeypatch.setattr(
            sys.modules[kind.base.__module__],
            "default_source",
            lambda given: source if given is None else given,
        )
    return source


def test_negative_counts_release_as_zero(draws: dpplug.SeededSource) -> None:
    """A negative count (in the map domain's i64) counts as 0, a 1-Lipschitz clamp per label
    (sorted-ℓ₁ distances do not grow); it raised inside the measurement before."""
    measurement = make_measurement("privhist", *counts_space(), epsilon=1)
    before = draws.draws
    released = measurement({"a": -3, "b": 4})
    assert isinstance(released, AnonymizedHistogram) and draws.draws > before


def test_serialise_round_trip() -> None:
    original = make_measurement("privhist", *counts_space(), epsilon=0.5, total_share=0.2)
    rebuilt = deserialize(serialize(original))
    assert rebuilt.map((1, 2, 1)) == original.map((1, 2, 1))
    assert isinstance(rebuilt({"a": 5, "b": 5}), AnonymizedHistogram)
