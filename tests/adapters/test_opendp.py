"""The OpenDP adapter (``dpplug.adapters.opendp``) against the real OpenDP 0.16.0 library.

Every dpplug plugin becomes an OpenDP measurement; these tests check that the measurements chain
after OpenDP's own transformations, that their privacy maps are the plugins' exact guarantees
rounded up (and group privacy / the l01inf translation beyond that, against formulas computed
here with fractions and against exact hockey-stick divergences), that the adapter validates what
OpenDP does not, and that the measurements work with OpenDP's compositors, ``binary_search``,
the Context API, and dpplug's own serialisation.

Randomness is not plumbed through OpenDP calls, so outputs are checked structurally (ranges,
order, ±k bounds) or with statistics whose failure probability is below 1e-8. Where a seeded
source is needed, ``dpplug.kinds.default_source`` (what every kind calls when no source is given)
is patched. The adapter enables the OpenDP features it needs itself, which the subprocess tests
check in fresh interpreters; in this process the native OpenDP constructors the tests chain with
(``make_count_by``, the compositors, ``make_laplace_threshold``) need "contrib" on their own, so
an autouse fixture calls the adapter's ``enable_features`` first, whatever the test order.
"""

from __future__ import annotations

import importlib
import itertools
import json
import math
import shutil
import sys
from collections.abc import Callable, Iterator
from fractions import Fraction
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

dp = pytest.importorskip("opendp.prelude")
mpmath = pytest.importorskip("mpmath")

import dpplug  # noqa: E402
import dpplug.kinds  # noqa: E402
from dpplug.adapters import opendp as adapter  # noqa: E402
from dpplug.adapters.opendp import (  # noqa: E402
    deserialize,
    make_measurement,
    serialize,
    then_measurement,
)

from support.fresh_interpreter import REPO, run_fresh  # noqa: E402

THIRD_PARTY = REPO / "examples" / "third_party_plugin"
SELECTORS = (
    "optimal-partition-selection",
    "truncated-geometric-thresholding",
    "laplace-thresholding",
    "gaussian-thresholding",
)
EPS, DELTA = 1, 1e-5  # selector budget used throughout
#: geosample's ε where its achieved e^ε̃ is exactly 3/2 (the simplest ratio in [e^{(63/64)ε}, e^ε]).
GEO_EPS = Fraction(41, 100)
HEAVY = {"heavier": 300, "heavy": 200}  # kept with probability exactly 1 (checked)
SINGLES = 1000  # labels with one record each: kept w.p. ≤ δ ≈ 1e-5 each
#: What OpenDP raises when it cannot convert data to the input domain's type (before the adapter).
NOT_CONVERTIBLE = (TypeError, dp.UnknownTypeException)


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def i64() -> tuple[Any, Any]:
    return dp.atom_domain(T="i64"), dp.absolute_distance(T="i64")


def counts_space(T: str = "i64") -> tuple[Any, Any]:
    return (
        dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=T)),
        dp.l01inf_distance(dp.absolute_distance(T=T)),
    )


def labels_space() -> tuple[Any, Any]:
    return dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()


def count_by() -> Any:
    return dp.t.make_count_by(*labels_space(), TV="i64")


def fraction(value: Any) -> Fraction:
    """An exact gmpy2 mpq (or int) as a Fraction."""
    return Fraction(int(value.numerator), int(value.denominator))


def assert_epsilon_up(value: float, exp_epsilon: Fraction) -> None:
    """*value* is ln(*exp_epsilon*) rounded up, to within one extra ulp: the adapter rounds
    e^ε up to 53 bits before taking the logarithm (rounded up again), a double rounding that can
    cost one ulp (sound, not always the tightest float)."""
    assert_rounded_up(value, ln(exp_epsilon), ulps=2)


def ln(value: Fraction) -> Any:
    """ln(value) as an mpmath number with 80 significant digits (far beyond a float ulp)."""
    with mpmath.workdps(80):
        return mpmath.log(mpmath.mpf(value.numerator)) - mpmath.log(mpmath.mpf(value.denominator))


def assert_rounded_up(value: float, exact: Any, ulps: int = 1) -> None:
    """*value* ≥ *exact* (a Fraction or an 80-digit mpmath number), and *ulps* floats below
    *value* is already below *exact*: ``ulps=1`` says *value* is the smallest float ≥ *exact*."""
    below = value
    for _ in range(ulps):
        below = math.nextafter(below, -math.inf)
    if isinstance(exact, Fraction):
        assert Fraction(value) >= exact > Fraction(below), (value, exact)
    else:
        with mpmath.workdps(80):
            assert mpmath.mpf(value) >= exact > mpmath.mpf(below), (value, exact)


def group(L: Fraction, delta: Fraction, k: int) -> tuple[Fraction, Fraction]:
    """Group privacy over k steps: (e^{kε}, δ·Σ_{i<k} e^{iε}), exact."""
    return L**k, delta * sum((L**i for i in range(k)), Fraction(0))


def selector_exact(selector: Any, l0: int, l1: int, linf: int) -> tuple[Fraction, Fraction]:
    """(e^ε, δ) of a selector at l01inf distance (l0, l1, linf), from its per-partition
    guarantee: min(l0, l1) partitions change, each by at most linf, by l1 in total."""
    per = selector.per_partition
    L, delta_c = fraction(per.exp_epsilon), fraction(per.delta)
    changed = min(l0, l1)
    _, delta_group = group(L, delta_c, linf)
    return L ** min(l1, l0 * linf), 1 - (1 - delta_group) ** changed


def reported_delta(exact: Fraction, requested: float) -> Fraction:
    """The δ a map reports at a nonzero distance: the exact bound, or the δ the mechanism was
    asked for when that is larger (the adapter's floor, which keeps maps monotone in ε)."""
    return max(exact, Fraction(requested))


def hockey_stick(p: Any, q: Any, bound: Fraction) -> Fraction:
    """Σ_x max(0, P(x) − bound·Q(x)): the smallest δ with P ≤ bound·Q + δ on every event."""
    total = Fraction(0)
    for x in set(p) | set(q):
        px = fraction(p[x]) if x in p else Fraction(0)
        qx = fraction(q[x]) if x in q else Fraction(0)
        total += max(Fraction(0), px - bound * qx)
    return total


def labels_data() -> list[str]:
    data = [label for label, n in HEAVY.items() for _ in range(n)]
    return data + [f"single{i:04d}" for i in range(SINGLES)]


@pytest.fixture(autouse=True, scope="module")
def _native_features() -> None:
    adapter.enable_features()


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """``seeded(s)``: from now on every draw without an explicit source comes from a fresh
    ``SeededSource(s)`` per call, so two measurements given the same input behave the same."""

    def use(seed: int) -> None:
        _default_source(
            monkeypatch, lambda source: dpplug.SeededSource(seed) if source is None else source
        )

    return use


def _default_source(monkeypatch: pytest.MonkeyPatch, replacement: Any) -> None:
    """Replace ``default_source`` in every kind's module (what its calls use without a source)."""
    for kind in dpplug.KINDS:
        monkeypatch.setattr(sys.modules[kind.base.__module__], "default_source", replacement)


@pytest.fixture
def draws(monkeypatch: pytest.MonkeyPatch) -> dpplug.SeededSource:
    """One shared source behind every default draw, to count what a failing call drew."""
    source = dpplug.SeededSource(5)
    source.uniform(1000)  # not trivially at 0 draws
    _default_source(monkeypatch, lambda given: source if given is None else given)
    return source


@pytest.fixture(scope="module")
def third_party(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The example third-party plugin module, imported from a copy of its package (not
    installed; the example's folder may hold a local build's metadata)."""
    copy = tmp_path_factory.mktemp("example")
    shutil.copytree(THIRD_PARTY / "dpplug_randomized_response", copy / "dpplug_randomized_response")
    sys.path.insert(0, str(copy))
    try:
        yield importlib.import_module("dpplug_randomized_response.plugin")
    finally:
        sys.path.remove(str(copy))


# --------------------------------------------------------------------------------------------
# features
# --------------------------------------------------------------------------------------------


def test_consent_to_user_code_stays_the_users_in_a_fresh_process() -> None:
    """Without OpenDP's "honest-but-curious" feature every constructor refuses with a dpplug
    error saying how to opt in, and enables nothing itself; after the user's explicit
    ``enable_features()`` the same call works."""
    out = run_fresh(
        """
        import json
        import opendp.prelude as dp
        from opendp.mod import GLOBAL_FEATURES
        import dpplug
        from dpplug.adapters.opendp import (
            enable_features, make_measurement, register_context_constructors)
        args = ("geosample", dp.atom_domain(T="i64"), dp.absolute_distance(T="i64"))
        result = {"before": sorted(GLOBAL_FEATURES), "refused": []}
        dp.enable_features("contrib")  # OpenDP's own feature, without the consent
        for call in (lambda: make_measurement(*args, n=100, epsilon=0.41),
                     register_context_constructors):
            try:
                call()
            except dpplug.NotSupported as exc:
                result["refused"].append(str(exc))
        result["still"] = sorted(GLOBAL_FEATURES)
        enable_features()
        m = make_measurement(*args, n=100, epsilon=0.41)  # e^ε̃ = 3/2
        result.update(after=sorted(GLOBAL_FEATURES), release=m(7), map=m.map(1))
        print(json.dumps(result))
        """
    )
    assert out["before"] == []
    assert len(out["refused"]) == 2
    assert all("enable_features()" in message for message in out["refused"])
    assert out["still"] == ["contrib"]
    assert {"contrib", "honest-but-curious"} <= set(out["after"])
    assert 0 <= out["release"] <= 100
    assert out["map"] == pytest.approx(math.log(1.5), rel=1e-15)


# --------------------------------------------------------------------------------------------
# chains and maps
# --------------------------------------------------------------------------------------------


def test_count_by_then_optimal_partition_selection() -> None:
    chain = count_by() >> then_measurement("optimal-partition-selection", epsilon=EPS, delta=DELTA)
    selector = dpplug.create("optimal-partition-selection", epsilon=EPS, delta=DELTA)
    assert all(selector.keep_probability(n) == 1 for n in HEAVY.values())

    kept = chain(labels_data())
    assert isinstance(kept, list) and kept == sorted(kept)
    assert set(HEAVY) <= set(kept)
    # each single is kept w.p. π(1) ≤ 1e-5: P(more than 3 of 1000 kept) < 1e-9
    assert len(set(kept) - set(HEAVY)) <= 3

    epsilon, delta = chain.map(1)
    guarantee = selector.guarantee
    assert_epsilon_up(epsilon, fraction(guarantee.exp_epsilon))
    assert Fraction(delta) >= fraction(guarantee.delta)
    assert delta == DELTA  # the requested δ, above the achieved one
    assert chain.output_measure == dp.approximate(dp.max_divergence())


def test_count_by_then_truncated_geometric_thresholding() -> None:
    name = "truncated-geometric-thresholding"
    chain = count_by() >> then_measurement(name, epsilon=EPS, delta=DELTA)
    selector = dpplug.create(name, epsilon=EPS, delta=DELTA)
    k = selector.k
    assert all(selector.keep_probability(n) == 1 for n in HEAVY.values())

    data = labels_data()
    released = chain(data)
    assert isinstance(released, dict) and list(released) == sorted(released)
    assert set(HEAVY) <= set(released)
    truth = {label: data.count(label) for label in released}
    for label, noisy in released.items():
        assert isinstance(noisy, int)
        assert abs(noisy - truth[label]) <= k  # k-TSGD noise is bounded by k
        assert noisy >= k + 1  # released only above the threshold
    assert len(set(released) - set(HEAVY)) <= 3

    epsilon, delta = chain.map(1)
    assert_epsilon_up(epsilon, fraction(selector.guarantee.exp_epsilon))
    assert_rounded_up(delta, reported_delta(fraction(selector.guarantee.delta), DELTA))


def test_vector_of_labels_directly_with_symmetric_distance() -> None:
    name = "optimal-partition-selection"
    direct = make_measurement(name, *labels_space(), epsilon=EPS, delta=DELTA)
    via_counts = make_measurement(name, *counts_space(), epsilon=EPS, delta=DELTA)
    assert direct.input_domain == dp.vector_domain(dp.atom_domain(T=str))
    assert direct.input_metric == dp.symmetric_distance()

    kept = direct(labels_data())
    assert kept == sorted(kept) and set(HEAVY) <= set(kept)
    assert len(set(kept) - set(HEAVY)) <= 3
    # k records added or removed: at most k partitions, each moving by at most k
    for k in (0, 1, 2, 3):
        assert direct.map(k) == via_counts.map((k, k, k))
    selector = dpplug.create(name, epsilon=EPS, delta=DELTA)
    assert_rounded_up(direct.map(1)[1], reported_delta(fraction(selector.guarantee.delta), DELTA))


def test_geosample_on_integers() -> None:
    m = make_measurement("geosample", *i64(), n=100, epsilon=GEO_EPS)
    assert m.output_measure == dp.max_divergence()
    for count in (0, 1, 50, 99, 100):
        for _ in range(20):
            out = m(count)
            assert isinstance(out, int) and 0 <= out <= 100
    # GeoSample's achieved guarantee at epsilon = 41/100 is e^ε̃ = a/b = 3/2 exactly
    geometric = dpplug.create("geosample", n=100, epsilon=GEO_EPS).guarantee
    assert geometric.exp_epsilon == Fraction(3, 2)
    assert_rounded_up(m.map(1), ln(Fraction(3, 2)))  # exact e^ε: a single rounding
    assert_rounded_up(m.map(2), ln(Fraction(9, 4)))  # group privacy: 2·ln(3/2)
    assert m.map(2) == pytest.approx(2 * math.log(1.5), rel=1e-15)
    assert m.map(0) == 0.0


def test_truncated_geometric_is_approximate_with_group_delta() -> None:
    m = make_measurement("truncated-geometric", *i64(), epsilon=1, delta=1e-6)
    sampler = dpplug.create("truncated-geometric", epsilon=1, delta=1e-6)
    assert m.output_measure == dp.approximate(dp.max_divergence())
    L, delta = fraction(sampler.guarantee.exp_epsilon), fraction(sampler.guarantee.delta)
    for d_in in (1, 2, 3):
        epsilon_out, delta_out = m.map(d_in)
        assert_epsilon_up(epsilon_out, L**d_in)
        assert_rounded_up(delta_out, reported_delta(group(L, delta, d_in)[1], 1e-6))
    assert_rounded_up(m.map(2)[1], delta * (1 + L))  # δ(1 + e^ε), above the requested δ
    for count in (-5, 0, 40):
        assert abs(m(count) - count) <= sampler.k


def test_i32_counts_after_make_count() -> None:
    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T="i64")), dp.symmetric_distance())
    assert count.output_domain == dp.atom_domain(T="i32")
    chain = count >> then_measurement("fixedpoint-geometric", n=1000, epsilon=1)
    out = chain(list(range(300)))
    assert isinstance(out, int) and 0 <= out <= 1000
    direct = make_measurement(
        "fixedpoint-geometric",
        dp.atom_domain(T="i32"),
        dp.absolute_distance(T="i32"),
        n=1000,
        epsilon=1,
    )
    sampler = dpplug.create("fixedpoint-geometric", n=1000, epsilon=1)
    assert chain.map(1) == direct.map(1)
    assert_epsilon_up(chain.map(1), fraction(sampler.guarantee.exp_epsilon))
    assert chain.map(1) <= 1.0


# --------------------------------------------------------------------------------------------
# the l01inf translation of selector guarantees
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("l0", [1, 3])
def test_selector_map_at_its_own_contribution_bound_is_its_guarantee(name: str, l0: int) -> None:
    m = make_measurement(name, epsilon=EPS, delta=DELTA, max_partitions_contributed=l0)
    guarantee = dpplug.create(
        name, epsilon=EPS, delta=DELTA, max_partitions_contributed=l0
    ).guarantee
    assert guarantee.neighbouring.max_partitions == l0
    epsilon, delta = m.map((l0, l0, 1))
    assert_epsilon_up(epsilon, fraction(guarantee.exp_epsilon))
    assert Fraction(delta) >= fraction(guarantee.delta)
    assert float(guarantee.delta) <= DELTA * (1 + 1e-12)
    assert delta == max(DELTA, delta)  # the requested δ, or the achieved one rounded up
    assert delta <= DELTA * (1 + 1e-12)
    assert epsilon <= EPS * (1 + 1e-15)


@pytest.mark.parametrize("name", SELECTORS)
def test_replace_one_is_two_add_remove_partitions(name: str) -> None:
    """A replaced unit (ℓ₀ = 1) removes one partition contribution and adds another: l01inf
    distance (2, 2, 1) under OpenDP's add/remove distances, which must give exactly the
    selector's declared replace-one guarantee."""
    m = make_measurement(name, epsilon=EPS, delta=DELTA, replace_one=True)
    selector = dpplug.create(name, epsilon=EPS, delta=DELTA, replace_one=True)
    guarantee = selector.guarantee
    assert guarantee.neighbouring.relation is dpplug.Relation.REPLACE_ONE
    epsilon, delta = m.map((2, 2, 1))
    assert_epsilon_up(epsilon, fraction(guarantee.exp_epsilon))
    assert_rounded_up(delta, reported_delta(fraction(guarantee.delta), DELTA))
    assert delta <= DELTA and epsilon <= EPS * (1 + 1e-15)
    # one unit added or removed costs no more than a replacement
    assert all(a <= b for a, b in zip(m.map((1, 1, 1)), (epsilon, delta), strict=True))


@pytest.mark.parametrize(
    "name", ["optimal-partition-selection", "truncated-geometric-thresholding"]
)
@pytest.mark.parametrize("l0", [1, 2])
def test_selector_group_privacy_matches_the_exact_formula(name: str, l0: int) -> None:
    m = make_measurement(name, epsilon=EPS, delta=DELTA, max_partitions_contributed=l0)
    selector = dpplug.create(name, epsilon=EPS, delta=DELTA, max_partitions_contributed=l0)
    for d_in in [(1, 2, 2), (1, 3, 3), (2, 4, 2), (2, 3, 2), (3, 6, 2), (2, 8, 4), (4, 2, 5)]:
        exp_epsilon, delta = selector_exact(selector, *d_in)
        epsilon_out, delta_out = m.map(d_in)
        assert_epsilon_up(epsilon_out, exp_epsilon)
        assert_rounded_up(delta_out, delta)


@pytest.mark.parametrize(
    "name", ["optimal-partition-selection", "truncated-geometric-thresholding"]
)
@pytest.mark.parametrize("steps", [2, 3])
def test_group_map_bounds_the_exact_divergence_of_the_mechanism(name: str, steps: int) -> None:
    """Independent of the formula: one partition whose unit count moves by *steps* (distance
    (1, steps, steps)); the exact hockey-stick divergence of the selector's output laws at
    e^{ε_map}, over every count up to saturation, in both directions, is at most δ_map."""
    m = make_measurement(name, epsilon=EPS, delta=DELTA)
    selector = dpplug.create(name, epsilon=EPS, delta=DELTA)
    epsilon_out, delta_out = m.map((1, steps, steps))
    L = fraction(selector.per_partition.exp_epsilon) ** steps
    assert_epsilon_up(epsilon_out, L)
    laws = [selector.output_pmf(n) for n in range(selector.saturation + steps + 2)]
    worst = max(
        max(hockey_stick(laws[n], laws[n + steps], L), hockey_stick(laws[n + steps], laws[n], L))
        for n in range(len(laws) - steps)
    )
    assert 0 < worst <= Fraction(delta_out)
    assert worst >= Fraction(delta_out) / 4  # and the map is not wildly loose


@pytest.mark.parametrize("name", ["optimal-partition-selection", "laplace-thresholding"])
def test_selector_map_is_monotone_in_each_coordinate(name: str) -> None:
    m = make_measurement(name, epsilon=EPS, delta=DELTA, max_partitions_contributed=2)
    grid = range(5)
    values = {d: m.map(d) for d in itertools.product(grid, grid, grid)}
    assert values[(0, 0, 0)] == (0.0, 0.0)
    for (l0, l1, linf), (epsilon, delta) in values.items():
        for bigger in ((l0 + 1, l1, linf), (l0, l1 + 1, linf), (l0, l1, linf + 1)):
            if bigger in values:
                assert values[bigger][0] >= epsilon and values[bigger][1] >= delta


# --------------------------------------------------------------------------------------------
# validation the adapter adds
# --------------------------------------------------------------------------------------------


def test_bad_distances_are_rejected() -> None:
    sampler = make_measurement("geosample", *i64(), n=100, epsilon=0.5)
    with pytest.raises(dp.OpenDPException, match="d_in must be a non-negative integer distance"):
        sampler.map(-1)
    # NaN, floats and bools never reach the adapter: OpenDP's own conversion to i64 rejects them
    for bad in (math.nan, 1.5, 1.0, True):
        with pytest.raises(TypeError, match="expected i64"):
            sampler.map(bad)

    selector = make_measurement("optimal-partition-selection", epsilon=EPS, delta=DELTA)
    for bad in [(1, -1, 1), (1, 1, -1)]:
        with pytest.raises(dp.OpenDPException, match=r"each of \(l0, l1, linf\) must be a non"):
            selector.map(bad)
    with pytest.raises(ValueError, match="not representable by u32"):
        selector.map((-1, 1, 1))  # l0 is a u32 for OpenDP
    for bad in [(1.0, 1, 1), (True, 1, 1), (1, math.nan, 1)]:
        with pytest.raises(TypeError):
            selector.map(bad)
    with pytest.raises(TypeError):
        selector.map((1, 1))

    # The adapter's own checks (what OpenDP would pass on if its conversion let them through)
    for bad in (-1, math.nan, 1.5, True, "1", None):
        with pytest.raises(dpplug.BadParameter):
            adapter._count_distance(bad)
    for bad in [(1, 1), (1, 1.0, 1), (1, 1, True), (1, 1, -2), (math.nan, 1, 1), 1.5]:
        with pytest.raises(dpplug.BadParameter):
            adapter._label_distance(bad)


def test_a_sampler_releases_for_every_integer_clamped_into_its_range(
    seeded: Callable[[int], None],
) -> None:
    """The README's geosample (n = 100) after a count: 101 rows gave ``BadData`` inside the
    measurement, so whether a release succeeded depended on the private count. Every integer of
    the domain now gets a release, that of the count clamped into [0, n] (post-processing of
    the 1-Lipschitz clamp): the same draws as the clamped count's. Values that are not integers
    never reach the adapter (OpenDP's conversion refuses them, whatever the data holds)."""
    m = make_measurement("geosample", *i64(), n=100, epsilon=0.5)
    for count, clamped in [(100, 100), (101, 100), (2**62, 100), (-1, 0), (-(2**63), 0)]:
        seeded(count % 97)
        released = m(count)
        seeded(count % 97)
        assert released == m(clamped) and 0 <= released <= 100
    for bad in (1.5, "3", None, [3]):
        with pytest.raises(NOT_CONVERTIBLE):
            m(bad)
    u64 = make_measurement(
        "fixedpoint-geometric",
        dp.atom_domain(T="u64"),
        dp.absolute_distance(T="u64"),
        n=7,
        epsilon=1,
    )
    assert 0 <= u64(2**64 - 1) <= 7


def test_a_selector_releases_for_every_count_map(seeded: Callable[[int], None]) -> None:
    """Negative counts (in the map domain's i64) count as 0 and counts past 2^62 as 2^62 (each a
    1-Lipschitz clamp per label); the release is that of the clamped counts."""
    m = make_measurement("optimal-partition-selection", epsilon=EPS, delta=DELTA)
    seeded(3)
    released = m({"a": 500, "b": -1, "c": 2**63 - 1})
    seeded(3)
    assert released == m({"a": 500, "b": 0, "c": 2**62}) == ["a", "c"]
    vector = make_measurement(
        "optimal-partition-selection", *labels_space(), epsilon=EPS, delta=DELTA
    )
    for bad in (["a", 1], [b"a"], 7):
        with pytest.raises(NOT_CONVERTIBLE):
            vector(bad)
    # Surprise (OpenDP, not the adapter): a bare str is converted to a list of its characters
    # before the adapter sees it, so the adapter's "not a str" guard cannot fire.
    assert vector("x" * 300) == ["x"]


def test_wrong_domain_or_metric_is_bad_parameter() -> None:
    with pytest.raises(dpplug.BadParameter, match="a dpplug sampler needs atom_domain"):
        make_measurement("geosample", *counts_space(), n=100, epsilon=0.5)
    with pytest.raises(dpplug.BadParameter):
        make_measurement("geosample", *labels_space(), n=100, epsilon=0.5)
    with pytest.raises(dpplug.BadParameter):  # integers of different widths
        make_measurement(
            "geosample", dp.atom_domain(T="i32"), dp.absolute_distance(T="i64"), n=9, epsilon=1
        )
    with pytest.raises(dpplug.BadParameter):  # float counts
        make_measurement(
            "geosample", dp.atom_domain(T=float), dp.absolute_distance(T=float), n=9, epsilon=1
        )
    with pytest.raises(dpplug.BadParameter, match=r"partition-selector\) needs map_domain"):
        make_measurement("optimal-partition-selection", *i64(), epsilon=EPS, delta=DELTA)
    with pytest.raises(dpplug.BadParameter):  # integer labels
        make_measurement(
            "optimal-partition-selection",
            dp.vector_domain(dp.atom_domain(T="i64")),
            dp.symmetric_distance(),
            epsilon=EPS,
            delta=DELTA,
        )
    with pytest.raises(dpplug.BadParameter):  # vectors under another metric
        make_measurement(
            "optimal-partition-selection",
            dp.vector_domain(dp.atom_domain(T=str)),
            dp.insert_delete_distance(),
            epsilon=EPS,
            delta=DELTA,
        )


def test_selector_rejects_float_counts_at_construction() -> None:
    domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=float, nan=False))
    metric = dp.l01inf_distance(dp.absolute_distance(T=float))
    with pytest.raises(dpplug.BadParameter):
        make_measurement("optimal-partition-selection", domain, metric, epsilon=EPS, delta=DELTA)


RELEASERS = {
    "stability-histogram": {"universe": "text:4", "n": 400, "epsilon": 1, "delta": 1e-6},
    # β₂ = β/6 = 1e-9: the random-histogram branch, too, is below the tests' failure rate
    "pure-sparse-histogram": {"universe": "text:1", "n": 400, "epsilon": 2, "beta": 6e-9},
    "basic-histogram": {"universe": 'labels:["a", "b", "c", "d"]', "n": 400, "epsilon": 1},
    "compact-histogram": {"universe": "text:4", "n": 400, "epsilon": 1},
    "blanket-sparse-histogram": {"universe": "text:4", "n": 400, "epsilon": 2},
}
ROWS = ["a"] * 300 + ["b"] * 60 + ["c"] * 30


@pytest.mark.parametrize("name", sorted(RELEASERS))
def test_count_by_then_histogram_releaser(name: str) -> None:
    params = RELEASERS[name]
    releaser = dpplug.create(name, **params)
    assert isinstance(releaser, dpplug.HistogramReleaser)
    chain = count_by() >> then_measurement(name, **params)
    out = chain(ROWS)
    guarantee = releaser.guarantee
    epsilon = chain.map(1)[0] if not guarantee.pure else chain.map(1)
    assert epsilon >= math.log(fraction(guarantee.exp_epsilon))
    assert epsilon == pytest.approx(math.log(fraction(guarantee.exp_epsilon)), rel=1e-12)
    if not guarantee.pure:
        assert chain.map(1)[1] >= float(guarantee.delta)
    if name == "compact-histogram":
        assert abs(out.count("a") - 300) <= releaser.accuracy(1e-8).per_query.a
        return
    assert list(out) == sorted(out, key=releaser.universe.index)  # canonical order
    a = releaser.accuracy(1e-8).per_query.a
    assert abs(out["a"] - 300) <= a  # fails with probability below 1e-8
    if name == "basic-histogram":
        assert list(out) == ["a", "b", "c", "d"]


def test_releaser_group_privacy_over_rows() -> None:
    params = RELEASERS["stability-histogram"]
    guarantee = dpplug.create("stability-histogram", **params).guarantee
    direct = make_measurement("stability-histogram", *labels_space(), **params)
    after_count_by = make_measurement("stability-histogram", *counts_space(), **params)
    L, delta = fraction(guarantee.exp_epsilon), fraction(guarantee.delta)
    for k in (1, 2, 3):
        epsilon_k, delta_k = direct.map(k)
        assert epsilon_k == pytest.approx(k * math.log(L), rel=1e-12)
        exact = reported_delta(delta * sum(L**i for i in range(k)), params["delta"])
        assert delta_k >= exact and delta_k == pytest.approx(float(exact), rel=1e-12)
        # after count_by, k rows added or removed is at most (k, k, k); l1 counts the rows
        assert after_count_by.map((k, k, k)) == direct.map(k)
        assert after_count_by.map((1, k, k)) == direct.map(k)


def test_releaser_refuses_labels_that_are_not_strings() -> None:
    with pytest.raises(dpplug.BadParameter, match="labels are str"):
        make_measurement("stability-histogram", universe="range:0:9", n=10, epsilon=1, delta=0.01)


def test_a_releaser_releases_for_every_input_projected_into_its_universe_and_n(
    seeded: Callable[[int], None],
) -> None:
    """Labels outside the universe are dropped and, past n rows, the first n rows in the
    universe's order are kept (one row added to data of n rows or more is then at most one row
    replaced, within the replace-one guarantee): the release is that of the projected data,
    where a label outside the universe or row n + 1 raised inside the measurement before."""
    params = RELEASERS["pure-sparse-histogram"]
    chain = count_by() >> then_measurement("pure-sparse-histogram", **params)
    cases = [
        (["too long"] + ["a"] * 3, ["a"] * 3),
        (["a"] * 401, ["a"] * 400),
        (["a"] * 300 + ["b"] * 101, ["a"] * 300 + ["b"] * 100),
        (["b"] * 300 + ["a"] * 300, ["a"] * 300 + ["b"] * 100),  # "a" comes first
    ]
    for data, projected in cases:
        seeded(len(data))
        released = chain(data)
        seeded(len(data))
        assert released == chain(projected)
    counts = make_measurement("basic-histogram", *counts_space(), **RELEASERS["basic-histogram"])
    assert list(counts({"a": 2**63 - 1, "b": -5, "zz": 9})) == ["a", "b", "c", "d"]


def test_a_releaser_private_for_rows_added_or_removed_needs_data_of_a_bounded_size() -> None:
    """Keeping the first n rows is stable only under replace-one; a mechanism private for one
    row added or removed with n public (the query releasers) would pay one row added to data of
    n rows twice. It takes label vectors of a known size N ≤ n (its map at symmetric distance
    2, one row changed, is two rows' group privacy) and refuses any other domain when built."""
    params = {"n": 100, "epsilon": 1, "max_queries": 2, "sparsity": 1}
    for domain, metric in (labels_space(), counts_space()):
        with pytest.raises(dpplug.BadParameter, match="make_resize"):
            make_measurement("independent-laplace", domain, metric, **params)
    with pytest.raises(dpplug.BadParameter, match="known size of at most n"):
        make_measurement("independent-laplace", *sized(101), **params)
    session = make_measurement("independent-laplace", *sized(100), **params)(["a"] * 100)
    assert 0 <= session({"a": 1}) <= 1
    guarantee = dpplug.create("independent-laplace", **params).guarantee
    assert make_measurement("independent-laplace", *sized(100), **params).map(2) == (
        pytest.approx(2 * guarantee.epsilon, rel=1e-12)
    )
    resized = dp.t.make_resize(*labels_space(), size=50, constant="pad") >> then_measurement(
        "independent-laplace", **params
    )
    assert 0 <= resized(["a"] * 400)({"a": 1}) <= 1  # OpenDP's resize takes the first rows


def sized(size: int) -> tuple[Any, Any]:
    return dp.vector_domain(dp.atom_domain(T=str), size=size), dp.symmetric_distance()


def test_releaser_serialise_round_trip(seeded: Callable[[int], None]) -> None:
    params = RELEASERS["stability-histogram"]
    original = make_measurement("stability-histogram", *counts_space(), **params)
    rebuilt = deserialize(serialize(original))
    assert rebuilt.map((1, 2, 1)) == original.map((1, 2, 1))
    counts = {"a": 300, "b": 60, "c": 30}
    for seed in (1, 2):
        seeded(seed)
        assert rebuilt(counts) == original(counts)


def test_releaser_composes_with_a_native_measurement() -> None:
    mine = count_by() >> then_measurement("basic-histogram", **RELEASERS["basic-histogram"])
    native = dp.t.make_count(*labels_space()) >> dp.m.then_laplace(scale=2.0)
    composed = dp.c.make_composition([mine, native])
    histogram, total = composed(ROWS)
    assert list(histogram) == ["a", "b", "c", "d"] and isinstance(total, int)
    assert composed.map(1) == pytest.approx(mine.map(1) + native.map(1), rel=1e-12)


# --------------------------------------------------------------------------------------------
# composition
# --------------------------------------------------------------------------------------------


def test_basic_composition_with_native_measurements() -> None:
    mine = make_measurement("geosample", *i64(), n=100, epsilon=0.5)
    geometric = dp.m.make_geometric(*i64(), scale=2.0)
    laplace = dp.m.make_laplace(*i64(), scale=4.0)
    composed = dp.c.make_composition([mine, geometric, laplace])
    assert dp.c.make_basic_composition is not None  # 0.16 has both names
    out = composed(50)
    assert len(out) == 3 and 0 <= out[0] <= 100 and all(isinstance(x, int) for x in out)
    total = mine.map(1) + geometric.map(1) + laplace.map(1)
    assert composed.map(1) >= total
    assert composed.map(1) == pytest.approx(total, rel=1e-12)
    assert composed.map(2) == pytest.approx(2 * total, rel=1e-12)


def test_approximate_composition_with_a_native_measurement() -> None:
    mine = make_measurement("truncated-geometric", *i64(), epsilon=1, delta=1e-6)
    native = dp.c.make_approximate(dp.m.make_laplace(*i64(), scale=2.0))
    composed = dp.c.make_composition([mine, native])
    out = composed(10)
    assert len(out) == 2
    epsilon, delta = composed.map(1)
    assert epsilon == pytest.approx(mine.map(1)[0] + 0.5, rel=1e-12)
    assert delta == pytest.approx(mine.map(1)[1], rel=1e-12) and delta >= mine.map(1)[1]


def test_adaptive_composition_queries_a_dpplug_measurement() -> None:
    mine = make_measurement("geosample", *i64(), n=100, epsilon=0.5)
    native = dp.m.make_geometric(*i64(), scale=2.0)
    compositor = dp.c.make_adaptive_composition(
        *i64(), dp.max_divergence(), d_in=1, d_mids=[mine.map(1), native.map(1)]
    )
    queryable = compositor(50)
    first = queryable(mine)
    assert isinstance(first, int) and 0 <= first <= 100
    assert isinstance(queryable(native), int)
    with pytest.raises(dp.OpenDPException, match="out of queries"):
        queryable(mine)
    assert compositor.map(1) == pytest.approx(mine.map(1) + native.map(1), rel=1e-12)
    assert compositor.map(1) >= mine.map(1) + native.map(1)


def test_adaptive_composition_refuses_a_dpplug_query_over_budget() -> None:
    mine = make_measurement("geosample", *i64(), n=100, epsilon=GEO_EPS)  # ε = ln 1.5 ≈ 0.405
    compositor = dp.c.make_adaptive_composition(*i64(), dp.max_divergence(), d_in=1, d_mids=[0.4])
    with pytest.raises(dp.OpenDPException):
        compositor(50)(mine)


# --------------------------------------------------------------------------------------------
# binary search, and OpenDP issue #2922
# --------------------------------------------------------------------------------------------


def native_threshold(scale: float, threshold: int) -> Any:
    return dp.m.make_laplace_threshold(*counts_space(), scale=scale, threshold=threshold)


def test_binary_search_for_a_pure_dpplug_sampler() -> None:
    """``binary_search_param`` works as is for pure measurements: the largest epsilon parameter
    of fixedpoint-geometric whose map at d_in = 1 stays within 0.75."""
    found = dp.binary_search_param(
        lambda e: make_measurement("fixedpoint-geometric", *i64(), n=100, epsilon=e),
        d_in=1,
        d_out=0.75,
        bounds=(0.01, 2.0),
    )
    m = make_measurement("fixedpoint-geometric", *i64(), n=100, epsilon=found)
    assert m.map(1) <= 0.75
    assert found == pytest.approx(0.75, abs=1e-6)


def test_binary_search_laplace_thresholding_against_opendp_and_issue_2922() -> None:
    """Both libraries' Laplace thresholding tuned to (ε, δ) = (1, 1e-5) at d_in = (1, 1, 1).

    **Search.** ``dp.binary_search_param`` compares (ε, δ) tuples with a partial order and raises
    "unknown ordering" as soon as a candidate has a larger ε but a smaller δ than the target,
    which happens for the native measurement when its scale is searched. So its ε is searched
    with ``dp.binary_search`` on ``map(d_in)[0] <= 1`` (as OpenDP's own docs do), then the
    threshold with ``binary_search_param`` at the found scale (ε is then constant, so the tuples
    are comparable). dpplug's laplace-thresholding takes ε and δ directly, and its map reports
    the requested δ wherever the achieved one is below it, so its epsilon parameter is searched
    with ``binary_search_param`` against the (ε, δ) target as is. Both land on
    ε = 1: |ε_dpplug − 1/scale_native| ≤ 1e-12 (dpplug rounds e^{ε/ℓ₀} down to 48 bits, so its
    largest passing parameter is a few ulps above 1).

    **OpenDP issue #2922** (open; reported for 0.16). With integer counts the native
    measurement adds discrete Laplace noise X (α = e^{−1/scale}, Pr[X = x] ∝ α^{|x|}) and
    *keeps* a key iff count + X ≥ τ (the Rust function drops v only if v < τ). A partition with
    one unit that is absent from the neighbour is released with probability
    Pr[1 + X ≥ τ] = α^{τ−1}/(1+α): that is the δ at d_in = (1, 1, 1). The native map instead
    computes the tail at distance τ − l∞ with ``conservative_discrete_laplacian_tail_to_alpha``,
    i.e. Pr[X > τ − 1] = Pr[1 + X > τ] = α^τ/(1+α) (the continuous bound ½α^{τ−1} is larger and
    discarded by the min): the δ of threshold τ + 1. The mass at exactly τ is missing, δ is
    under-reported by the factor e^{1/scale}, and the threshold its own map certifies is one
    step too low. (The brief's reading that the native δ is Pr[1 + X ≥ τ] is the *correct*
    value, not what the map reports.) Checked here: the map equals α^τ/(1+α) to 1e-12, the
    observed release rate of count-1 keys matches α^{τ−1}/(1+α) (not the map) and the smallest
    released value is τ itself.

    **B5's τ = 1 + ln(1/(2δ))/ε** is right for B5's mechanism (continuous Laplace noise, where
    ties have probability 0 and Pr[1 + Lap(1/ε) > τ] = ½e^{−ε(τ−1)} = δ exactly), and dpplug's
    laplace-thresholding uses it as the curve capping the optimal recurrence and declares the δ
    it actually achieves, so dpplug's map is exact. For the native measurement at (1, 1e-5):
    its search lands on τ = 12 = ⌈τ_B5⌉ (τ_B5 ≈ 11.82), but the true δ at τ = 12 is
    e^{−11}/(1 + e^{−1}) ≈ 1.22e-5 > 1e-5; the correct integer threshold is 13, one step up.
    Shifting by one step always suffices: true δ(τ + 1) equals the reported δ(τ).
    """
    target_epsilon, target_delta, d_in = 1.0, 1e-5, (1, 1, 1)

    # --- native: scale for ε, then threshold for δ --------------------------------------
    with pytest.raises(dp.OpenDPException, match="unknown ordering"):
        dp.binary_search_param(
            lambda s: native_threshold(s, 12),
            d_in,
            (target_epsilon, target_delta),
            bounds=(0.5, 2.0),
        )
    scale = dp.binary_search(
        lambda s: native_threshold(s, 100).map(d_in)[0] <= target_epsilon,
        bounds=(0.5, 2.0),
        T=float,
    )
    tau_native = dp.binary_search_param(
        lambda t: native_threshold(scale, t),
        d_in,
        (target_epsilon, target_delta),
        bounds=(2, 100),
        T=int,
    )

    # --- dpplug: the epsilon parameter ----------------------------------------------------
    def dpplug_laplace(e: float) -> Any:
        return make_measurement("laplace-thresholding", epsilon=e, delta=target_delta)

    epsilon = dp.binary_search_param(
        dpplug_laplace, d_in, (target_epsilon, target_delta), bounds=(0.5, 2.0)
    )
    mine = dpplug_laplace(epsilon)
    assert mine.map(d_in)[0] <= target_epsilon and mine.map(d_in)[1] == target_delta

    # --- both land on the same ε ----------------------------------------------------------
    assert native_threshold(scale, tau_native).map(d_in)[0] <= target_epsilon
    assert abs(epsilon - 1 / scale) <= 1e-12
    assert scale == pytest.approx(1.0, abs=1e-12)

    # --- #2922, exactly -------------------------------------------------------------------
    with mpmath.workdps(50):
        alpha = mpmath.exp(-1 / mpmath.mpf(scale))

        def released(tau: int) -> Any:  # Pr[1 + X ≥ τ], the true δ at threshold τ
            return alpha ** (tau - 1) / (1 + alpha)

        for s, tau in [(1.0, 3), (1.0, 12), (2.0, 5), (0.5, 4)]:
            a = mpmath.exp(-1 / mpmath.mpf(s))
            reported = native_threshold(s, tau).map(d_in)[1]
            strictly_above = a**tau / (1 + a)  # Pr[1 + X > τ]
            assert mpmath.mpf(reported) >= strictly_above
            assert mpmath.mpf(reported) <= strictly_above * (1 + mpmath.mpf(1e-9))
            at_or_above = a ** (tau - 1) / (1 + a)  # Pr[1 + X ≥ τ]: the true δ
            assert at_or_above / strictly_above == pytest.approx(float(mpmath.exp(1 / s)))

        assert tau_native == 12
        tau_b5 = 1 + mpmath.log(1 / (2 * mpmath.mpf(target_delta))) / target_epsilon
        assert tau_native == int(mpmath.ceil(tau_b5))
        assert 0.5 * mpmath.exp(-(tau_b5 - 1)) == pytest.approx(target_delta, rel=1e-12)
        assert released(tau_native) > target_delta  # ≈ 1.22e-5: the budget is exceeded
        assert released(tau_native) == pytest.approx(1.2209921640e-5, rel=1e-9)
        correct = next(t for t in range(2, 100) if released(t) <= target_delta)
        assert correct == tau_native + 1 == 13
        assert released(correct) == pytest.approx(
            native_threshold(scale, tau_native).map(d_in)[1], rel=1e-12
        )

    # --- #2922, observed: keys with count 1 at τ = 3, scale 1 ------------------------------
    keys = 50_000
    out = native_threshold(1.0, 3)({f"k{i}": 1 for i in range(keys)})
    rate = len(out) / keys
    a = math.exp(-1.0)
    truth, reported = a**2 / (1 + a), native_threshold(1.0, 3).map(d_in)[1]  # 0.0989, 0.0364
    sd = math.sqrt(truth * (1 - truth) / keys)  # ≈ 0.0013
    assert abs(rate - truth) < 6 * sd
    assert rate > reported + 40 * sd
    assert min(out.values()) == 3  # released at exactly the threshold: the comparison is ≥

    # --- dpplug's own δ is exact: π(1) is the per-partition δ, never above the budget ------
    selector = dpplug.create("laplace-thresholding", epsilon=epsilon, delta=target_delta)
    assert selector.keep_probability(1) == selector.per_partition.delta
    assert fraction(selector.guarantee.delta) <= Fraction(target_delta)


# --------------------------------------------------------------------------------------------
# serialisation
# --------------------------------------------------------------------------------------------


SERIALISED = [
    ("geosample", i64, {"n": 100, "epsilon": 0.5}, [0, 1, 2, 5]),
    (
        "fixedpoint-geometric",
        lambda: (dp.atom_domain(T="i32"), dp.absolute_distance(T="i32")),
        {"n": 1000, "epsilon": Fraction(1, 3)},
        [0, 1, 4],
    ),
    ("truncated-geometric", i64, {"epsilon": 1, "delta": 1e-6}, [0, 1, 3]),
    (
        "optimal-partition-selection",
        counts_space,
        {"epsilon": EPS, "delta": DELTA, "max_partitions_contributed": 2},
        [(1, 1, 1), (2, 2, 1), (2, 5, 3)],
    ),
    (
        "truncated-geometric-thresholding",
        labels_space,
        {"epsilon": 2, "delta": 1e-7, "pre_threshold": 3},
        [0, 1, 2],
    ),
    (
        "laplace-thresholding",
        lambda: counts_space("i32"),
        {"epsilon": 0.5, "delta": 1e-6, "replace_one": True},
        [(2, 2, 1), (1, 1, 1)],
    ),
]


@pytest.mark.parametrize(("name", "space", "params", "distances"), SERIALISED)
def test_serialise_round_trip(
    name: str,
    space: Callable[[], tuple[Any, Any]],
    params: dict[str, Any],
    distances: list[Any],
    seeded: Callable[[int], None],
) -> None:
    original = make_measurement(name, *space(), **params)
    text = serialize(original)
    assert json.loads(text)["plugin"] == name
    rebuilt = deserialize(text)
    assert rebuilt.input_domain == original.input_domain
    assert rebuilt.input_metric == original.input_metric
    assert rebuilt.output_measure == original.output_measure
    for d_in in distances:
        assert rebuilt.map(d_in) == original.map(d_in)
    assert serialize(rebuilt) == text

    if str(original.input_domain).startswith("AtomDomain"):
        data: Any = 1
    elif str(original.input_domain).startswith("MapDomain"):
        data = {f"label{i}": i % 40 for i in range(200)}
    else:
        data = [f"label{i % 37}" for i in range(600)] + ["rare"]
    for seed in (1, 2, 3):
        seeded(seed)
        assert rebuilt(data) == original(data)


def test_serialise_refuses_what_dpplug_did_not_build() -> None:
    native = dp.m.make_geometric(*i64(), scale=1.0)
    with pytest.raises(dpplug.BadParameter, match="only measurements built by dpplug"):
        serialize(native)
    # a chain ending in a dpplug measurement is a new OpenDP object without the dpplug spec
    chain = count_by() >> then_measurement("optimal-partition-selection", epsilon=1, delta=1e-5)
    with pytest.raises(dpplug.BadParameter):
        serialize(chain)


_GOOD_SPEC = {
    "plugin": "geosample",
    "params": {"n": 100, "epsilon": "41/100"},
    "input": {"form": "count", "T": "i64"},
}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "null",
        "[]",
        "{" * 100_000,  # deep nesting
        json.dumps({**_GOOD_SPEC, "params": [1]}),
        json.dumps({**_GOOD_SPEC, "params": {"n": [1, 2], "epsilon": "1/2"}}),
        json.dumps({**_GOOD_SPEC, "params": {"n": 100, "epsilon": "nan"}}),
        json.dumps({**_GOOD_SPEC, "params": {"n": 0, "epsilon": "1/2"}}),
        json.dumps({**_GOOD_SPEC, "params": {"n": 10**4000, "epsilon": "1/2"}}),
        json.dumps({**_GOOD_SPEC, "params": {"n": 100, "epsilon": "9" * 5000}}),
        json.dumps({**_GOOD_SPEC, "input": {"form": "count", "T": "f64"}}),
        json.dumps({**_GOOD_SPEC, "input": {"form": "label-vector", "T": "i64"}}),
        json.dumps({**_GOOD_SPEC, "input": "count"}),
        json.dumps({**_GOOD_SPEC, "plugin": 3}),
        json.dumps({key: value for key, value in _GOOD_SPEC.items() if key != "input"}),
        b"\xff\xfe",
        *(
            json.dumps({**_GOOD_SPEC, "params": {"n": 100, "epsilon": "1/2", reserved: "x"}})
            for reserved in ("registry", "name", "input_domain", "input_metric")
        ),
    ],
)
def test_deserialise_refuses_malformed_text_with_bad_data(text: str | bytes) -> None:
    with pytest.raises(dpplug.BadData):
        deserialize(text)


def test_deserialise_of_an_epsilon_below_the_range_releases_nothing() -> None:
    """ε ≤ 0 is what a search's measurement below the plugin's range serialises as: rebuilt, it
    releases nothing and its map is 0 (``test_opendp_budget.py``)."""
    rebuilt = deserialize(json.dumps({**_GOOD_SPEC, "params": {"n": 100, "epsilon": "-1"}}))
    assert rebuilt.map(1) == 0
    with pytest.raises(dp.OpenDPException, match="releases nothing"):
        rebuilt(5)


@settings(max_examples=300, derandomize=True, deadline=None, database=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.sampled_from(["plugin", "params", "input", "form", "T"]), children)
        ),
        max_leaves=12,
    )
)
def test_deserialise_of_arbitrary_json_is_a_measurement_or_bad_data(document: object) -> None:
    try:
        rebuilt = deserialize(json.dumps(document))
    except (dpplug.BadData, dpplug.UnknownMechanism):
        return
    assert isinstance(rebuilt, dp.Measurement)


def test_deserialise_recomputes_the_guarantee_from_the_parameters() -> None:
    """The text carries parameters only: its map is the rebuilt plugin's exact guarantee."""
    rebuilt = deserialize(json.dumps(_GOOD_SPEC))
    assert_rounded_up(rebuilt.map(1), ln(Fraction(3, 2)))


def test_maps_at_huge_distances_return_at_once_and_stay_sound() -> None:
    geosample = make_measurement("geosample", *i64(), n=100, epsilon=GEO_EPS)
    assert_rounded_up(geosample.map(2**40), 2**40 * ln(Fraction(3, 2)), ulps=2)
    selector = make_measurement("optimal-partition-selection", epsilon=1, delta=1e-6)
    epsilon, delta = selector.map((2**31, 2**40, 2**31))
    per = dpplug.create("optimal-partition-selection", epsilon=1, delta=1e-6).per_partition
    assert_rounded_up(epsilon, 2**40 * ln(Fraction(per.exp_epsilon)), ulps=2)
    assert delta == 1.0  # a probability: the bound saturates


# --------------------------------------------------------------------------------------------
# Context API
# --------------------------------------------------------------------------------------------


def test_context_api_in_a_fresh_process() -> None:
    """``register_context_constructors`` registers globally and refuses to register twice (OpenDP
    raises on a duplicate name), so this runs in its own interpreter, which opts in to OpenDP's
    features itself. Chaining after ``.count()`` and ``.count_by()`` works; a parameter other
    than ε left out is the plugin's own BadParameter, raised by every step of the search for ε
    (``test_opendp_calibration.py`` checks the search itself)."""
    out = run_fresh(
        """
        import json
        import opendp.prelude as dp
        from opendp.mod import GLOBAL_FEATURES
        import dpplug
        from dpplug.adapters.opendp import enable_features, register_context_constructors
        result = {"features_before": sorted(GLOBAL_FEATURES)}
        enable_features()
        result["names"] = register_context_constructors()
        unit = dp.unit_of(contributions=1)

        context = dp.Context.compositor(
            data=list(range(500)), privacy_unit=unit, privacy_loss=dp.loss_of(epsilon=1.0),
            split_evenly_over=1,
        )
        query = context.query().count().dpplug_fixedpoint_geometric(n=1000, epsilon=1)
        result["count"] = query.release()
        result["spent"] = context.current_privacy_loss()

        labels = ["a"] * 300 + ["b"] * 200 + [f"s{i}" for i in range(50)]
        context = dp.Context.compositor(
            data=labels, privacy_unit=unit, privacy_loss=dp.loss_of(epsilon=2.0, delta=1e-6),
            split_evenly_over=2,
        )
        result["kept"] = context.query().dpplug_optimal_partition_selection(
            epsilon=1, delta=5e-7).release()
        counts = context.query().count_by(TV="i64")
        result["noisy"] = counts.dpplug_truncated_geometric_thresholding(
            epsilon=1, delta=5e-7).release()

        context = dp.Context.compositor(
            data=list(range(5)), privacy_unit=unit, privacy_loss=dp.loss_of(epsilon=1.0),
            split_evenly_over=1,
        )
        try:
            context.query().count().dpplug_fixedpoint_geometric(epsilon=1).release()
        except dpplug.BadParameter as exc:
            result["missing"] = str(exc)
        try:
            context.query().count().dpplug_fixedpoint_geometric().release()
        except dpplug.BadParameter as exc:
            result["missing_in_search"] = str(exc)
        try:
            context.query().count().dpplug_fixedpoint_geometric(n=1000, epsilon=2).release()
        except dp.OpenDPException as exc:
            result["over_budget"] = str(exc)
        try:
            register_context_constructors()
        except ValueError as exc:
            result["twice"] = str(exc)
        print(json.dumps(result))
        """
    )
    assert out["features_before"] == []
    assert "dpplug_fixedpoint_geometric" in out["names"]
    assert "dpplug_optimal_partition_selection" in out["names"]
    assert 0 <= out["count"] <= 1000
    assert out["spent"] == [1.0]
    assert {"a", "b"} <= set(out["kept"]) and out["kept"] == sorted(out["kept"])
    assert len(set(out["kept"]) - {"a", "b"}) <= 3
    assert {"a", "b"} <= set(out["noisy"])
    assert abs(out["noisy"]["a"] - 300) <= 20 and abs(out["noisy"]["b"] - 200) <= 20
    assert "missing parameter n" in out["missing"]
    assert "missing parameter n" in out["missing_in_search"]
    assert "insufficient budget" in out["over_budget"]
    assert "already registered" in out["twice"]


# --------------------------------------------------------------------------------------------
# third-party plugins
# --------------------------------------------------------------------------------------------


def test_a_third_party_plugin_is_a_measurement_with_no_extra_code(third_party: ModuleType) -> None:
    plugins = dpplug.Registry.load([third_party], entry_points=False)
    assert "randomized-response" in plugins
    m = make_measurement("randomized-response", *i64(), registry=plugins)
    assert_rounded_up(m.map(1), ln(Fraction(3)))  # e^ε = 3 exactly
    assert_rounded_up(m.map(2), ln(Fraction(9)))
    assert {m(0) for _ in range(50)} <= {0, 1} and {m(1) for _ in range(50)} <= {0, 1}
    assert {m(2) for _ in range(50)} <= {0, 1}  # clamped into its range [0, 1], like 1
    # Available through the chain helpers too: the measurement is an ordinary OpenDP one.
    geosample = make_measurement("geosample", *i64(), n=1, epsilon=GEO_EPS)  # e^ε = 3/2
    composed = dp.c.make_composition([m, geosample])
    assert composed.map(1) == pytest.approx(math.log(3) + math.log(1.5), rel=1e-12)


@pytest.mark.parametrize("l0", [1, 10])
def test_best_names_the_top_ranked_mechanism_and_measures_as_it(l0: int) -> None:
    """``then_measurement("best:partition-selector", …)`` is the selector
    ``dpplug.compare.best`` ranks first for those public parameters (Laplace thresholding at
    ℓ₀ = 1, Gaussian thresholding at ℓ₀ = 10), says so, has its privacy map and serialises as
    it."""
    params = {"epsilon": 10, "delta": Fraction(1, 1000), "max_partitions_contributed": l0}
    choice = dpplug.compare.best("partition-selector", **params)
    assert choice.name == ("laplace-thresholding" if l0 == 1 else "gaussian-thresholding")
    best = then_measurement("best:partition-selector", **params)(*counts_space())
    direct = make_measurement(choice.name, **choice.params)
    assert best.dpplug_description.startswith(f"dpplug plugin {choice.name}(")
    assert f"the best partition-selector here ({choice.why})" in best.dpplug_description
    assert serialize(best) == serialize(direct)
    for d_in in ((1, 1, 1), (l0, l0, 1)):
        assert best.map(d_in) == direct.map(d_in)
    assert best({"big": 10**6}) == ["big"]
