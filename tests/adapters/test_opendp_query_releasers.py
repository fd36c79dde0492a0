"""Query releasers in OpenDP 0.16 (dpplug.adapters.opendp): an interactive releaser is a
measurement whose release is a Queryable (``new_queryable``) answering sparse queries, usable in
OpenDP's adaptive compositor and fully adaptive odometer next to native measurements; the sparse
projection is an ordinary measurement. Both take label vectors of a known size N ≤ n (a
releaser private for one row added or removed with n public cannot be made total on data of any
size without paying a changed row twice, so other domains are refused when it is built).
Privacy maps are the guarantee's group privacy over the rows, rounded up: a changed row is
symmetric distance 2."""

from __future__ import annotations

import json
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

SMW = {"n": 10**7, "epsilon": 8, "delta": 1e-5, "max_queries": 6, "sparsity": 2, "grid": 4}
INDEPENDENT = {"n": 1000, "epsilon": 1, "max_queries": 3, "sparsity": 2}
PROJECTION = {
    "universe": 'labels:["a", "b", "c", "d"]',
    "n": 1000,
    "epsilon": 2,
    "delta": 1e-6,
    "max_queries": 3,
    "sparsity": 2,
    "dimension": 64,
}
LABELS = ["a"] * 300 + ["b"] * 100 + ["c"] * 10


@pytest.fixture(autouse=True, scope="module")
def _features() -> None:
    adapter.enable_features()


def vectors() -> tuple[Any, Any]:
    """Label vectors of the known size of :data:`LABELS`."""
    return dp.vector_domain(dp.atom_domain(T=str), size=len(LABELS)), dp.symmetric_distance()


def fraction(value: Any) -> Fraction:
    return Fraction(int(value.numerator), int(value.denominator))


def assert_map_is_group_privacy(measurement: Any, name: str, params: dict[str, Any]) -> None:
    """map(k) = (k·ε, min(1, δ·Σ_{i<k} e^{iε})) rounded up: one row added or removed per step
    (the exact values computed here from e^ε and δ, not through dpplug's group bound)."""
    guarantee = dpplug.create(name, **params).guarantee
    L, delta = fraction(guarantee.exp_epsilon), fraction(guarantee.delta)
    for k in (1, 2, 3):
        mapped = measurement.map(k)
        epsilon_out, delta_out = mapped if isinstance(mapped, tuple) else (mapped, 0.0)
        with mpmath.workdps(50):
            exact = k * (mpmath.log(L.numerator) - mpmath.log(L.denominator))
            assert mpmath.mpf(epsilon_out) >= exact
        assert epsilon_out == pytest.approx(float(exact), rel=1e-12)
        # δ is a probability: a group bound past 1 saturates there
        exact_delta = min(delta * sum((L**i for i in range(k)), Fraction(0)), Fraction(1))
        assert Fraction(delta_out) >= exact_delta
        assert delta_out == pytest.approx(float(exact_delta), rel=1e-12)


@pytest.mark.parametrize(
    ("name", "params"),
    [("sparse-multiplicative-weights", SMW), ("independent-laplace", INDEPENDENT)],
)
def test_an_interactive_releaser_is_a_queryable_measurement(
    name: str, params: dict[str, Any]
) -> None:
    measurement = make_measurement(name, *vectors(), **params)
    assert measurement.output_measure == (
        dp.max_divergence()
        if dpplug.create(name, **params).guarantee.pure
        else dp.approximate(dp.max_divergence())
    )
    assert_map_is_group_privacy(measurement, name, params)
    queryable = measurement(LABELS)
    assert isinstance(queryable, dp.Queryable)
    answers = [queryable({"a": 1}), queryable({"b": 0.5, "zz": 1})]
    assert all(isinstance(a, Fraction) and 0 <= a <= 1 for a in answers)
    with pytest.raises(dp.OpenDPException, match=r"more than 2 labels"):
        queryable({"a": 1, "b": 1, "c": 1})
    for _ in range(params["max_queries"] - 2):
        queryable({"c": 1})
    with pytest.raises(dp.OpenDPException, match="covers k = "):
        queryable({"a": 1})


def test_sessions_run_inside_the_adaptive_compositor_with_native_measurements() -> None:
    """An adaptive composition of (a) a dpplug session and (b) OpenDP's own Laplace count, with
    the session queried before and after the native measurement runs."""
    smw = make_measurement("sparse-multiplicative-weights", *vectors(), **SMW)
    smw_loss = smw.map(1)
    native = dp.c.make_approximate(dp.t.make_count(*vectors()) >> dp.m.then_laplace(scale=2.0))
    compositor = dp.c.make_adaptive_composition(
        *vectors(), dp.approximate(dp.max_divergence()), d_in=1, d_mids=[smw_loss, native.map(1)]
    )
    assert compositor.map(1)[0] == pytest.approx(smw_loss[0] + 0.5, rel=1e-9)
    queryable = compositor(LABELS)
    session = queryable(smw)
    first = session({"a": 1})
    count = queryable(native)
    second = session({"b": 1, "c": 1})
    assert 0 <= first <= 1 and 0 <= second <= 1 and abs(count - len(LABELS)) < 200
    with pytest.raises(dp.OpenDPException):
        queryable(native)  # the compositor's budget is spent


def test_sessions_run_inside_the_fully_adaptive_odometer() -> None:
    independent = make_measurement("independent-laplace", *vectors(), **INDEPENDENT)
    odometer = dp.c.make_fully_adaptive_composition(*vectors(), dp.max_divergence())
    queryable = odometer(LABELS)
    session = queryable(independent)
    assert 0 <= session({"a": 1}) <= 1
    native = dp.t.make_count(*vectors()) >> dp.m.then_laplace(scale=4.0)
    queryable(native)
    loss = queryable.privacy_loss(1)
    assert loss == pytest.approx(independent.map(1) + 0.25, rel=1e-9)


def test_the_projection_is_an_ordinary_measurement_on_labels() -> None:
    measurement = make_measurement("sparse-projection", *vectors(), **PROJECTION)
    release = measurement(LABELS)
    assert isinstance(release, dpplug.SparseProjection)
    assert release.guarantee == dpplug.create("sparse-projection", **PROJECTION).guarantee
    assert all(0 <= a <= 1 for a in release.answers([{"a": 1}, {"b": 1, "d": 0.5}]))
    assert_map_is_group_privacy(measurement, "sparse-projection", PROJECTION)
    unsized = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    resized = dp.t.make_resize(*unsized, size=len(LABELS), constant="d") >> then_measurement(
        "sparse-projection", **PROJECTION
    )
    assert isinstance(resized(LABELS + ["a"] * 5), dpplug.SparseProjection)
    assert resized.map(1) == measurement.map(2)  # OpenDP's resize doubles the distance
    composed = dp.c.make_composition(
        [
            measurement,
            dp.c.make_approximate(dp.t.make_count(*vectors()) >> dp.m.then_laplace(scale=1.0)),
        ]
    )
    projection, count = composed(LABELS)
    assert isinstance(projection, dpplug.SparseProjection) and isinstance(count, int)
    assert composed.map(1)[0] == pytest.approx(measurement.map(1)[0] + 1.0, rel=1e-9)


def test_labels_must_be_strings_and_data_within_n() -> None:
    with pytest.raises(dpplug.BadParameter, match="frameworks' labels are str"):
        make_measurement("sparse-projection", *vectors(), **{**PROJECTION, "universe": "bytes:2"})
    with pytest.raises(dpplug.BadParameter, match="at most n = 5"):
        make_measurement("independent-laplace", *vectors(), **{**INDEPENDENT, "n": 5})
    # Data of another size than the domain declares still gets a release (of its first n rows).
    small = make_measurement("independent-laplace", *vectors(), **{**INDEPENDENT, "n": 410})
    assert 0 <= small(["a"] * 500)({"a": 1}) <= 1


def test_a_session_measurement_serialises() -> None:
    measurement = make_measurement("sparse-multiplicative-weights", *vectors(), **SMW)
    text = serialize(measurement)
    assert json.loads(text)["plugin"] == "sparse-multiplicative-weights"
    rebuilt = deserialize(text)
    assert rebuilt.map(1) == measurement.map(1)
    assert isinstance(rebuilt(LABELS), dp.Queryable)
