"""dpplug measurements where OpenDP 0.16 calibrates or selects: their declared output types (so
``make_select_private_candidate`` reads a dpplug release as a score), ``binary_search_chain`` over
ε for every built-in sampler and partition selector (scalar and (ε, δ) targets), and the
Context API solving for a missing ε from its budget (docs/kinds.md, "In OpenDP").

Searches are checked against their targets: the found measurement's map is within d_out and
its ε at least :data:`SPENT` of the target's (every built-in spends its budget up to a rounding
of e^ε: GeoSample and FastSample round it down to a ratio of small integers, about 0.2% at
ε = 1/2; the others to a dyadic grid).
"""

from __future__ import annotations

import inspect
import itertools
import sys
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

dp = pytest.importorskip("opendp.prelude")

import dpplug  # noqa: E402
import dpplug.kinds  # noqa: E402
from dpplug.adapters import opendp as adapter  # noqa: E402
from dpplug.adapters.opendp import make_measurement  # noqa: E402
from dpplug.guarantee import within_budget  # noqa: E402

from support.fresh_interpreter import run_fresh  # noqa: E402

#: A search's ε lands within this fraction of the target's ε, from below.
SPENT = 0.99
SAMPLERS = [entry.name for entry in dpplug.registry().entries(dpplug.kinds.SAMPLER)]
SELECTORS = [entry.name for entry in dpplug.registry().entries(dpplug.kinds.PARTITION_SELECTOR)]
LABELS = ["apple"] * 40 + ["pear"] * 9 + ["fig"]
UNIVERSE = 'labels:["apple", "fig", "pear"]'


@pytest.fixture(autouse=True, scope="module")
def _features() -> None:
    adapter.enable_features()


def i64() -> tuple[Any, Any]:
    return dp.atom_domain(T="i64"), dp.absolute_distance(T="i64")


def labels_space() -> tuple[Any, Any]:
    return dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()


def declared_type(measurement: Any) -> str:
    """The output type ``TO`` the measurement was built with, as OpenDP recorded it."""
    return str(measurement.__opendp_dict__["__kwargs__"]["TO"])


def assert_spends(found: float, target: float, spent: float = SPENT) -> None:
    assert spent * target <= found <= target, (found, target)


# --------------------------------------------------------------------------------------------
# output types
# --------------------------------------------------------------------------------------------


def test_every_form_of_release_has_its_opendp_type() -> None:
    """A sampler releases an i64 whatever the integer type of its input (its releases are
    int64, and an unbounded sampler's may not fit u32); a selector that only decides releases
    Vec<String> (sorted); other releases (noisy-count mappings and histograms in canonical
    label order, which an OpenDP HashMap would lose, and objects) stay ExtrinsicObject."""
    i32 = dp.atom_domain(T="i32"), dp.absolute_distance(T="i32")
    sampler = make_measurement("discrete-laplace", *i32, epsilon=1)
    assert declared_type(sampler) == "i64"
    assert isinstance(sampler(7), int)
    assert declared_type(make_measurement("geosample", *i64(), n=10, epsilon=1)) == "i64"
    keep = make_measurement("optimal-partition-selection", *labels_space(), epsilon=1, delta=1e-5)
    assert declared_type(keep) == "Vec<String>"
    kept = keep(LABELS)
    assert isinstance(kept, list) and kept == sorted(kept)
    noisy = make_measurement(
        "truncated-geometric-thresholding", *labels_space(), epsilon=1, delta=1e-5
    )
    assert declared_type(noisy) == "ExtrinsicObject"
    histogram = make_measurement(
        "basic-histogram", *labels_space(), universe=UNIVERSE, n=100, epsilon=1
    )
    assert declared_type(histogram) == "ExtrinsicObject"


def score_and_candidate() -> Any:
    """The issue's composition on label vectors: a dpplug sampler's noisy row count as the
    score, a dpplug histogram as the candidate (both pure, ε = ln(3/2) and 2·ln 2)."""
    score = dp.t.make_count(*labels_space()) >> adapter.then_measurement(
        "geosample", n=100, epsilon=Fraction(41, 100)
    )
    candidate = dp.t.make_count_by(*labels_space(), TV="i64") >> adapter.then_measurement(
        "basic-histogram", universe=UNIVERSE, n=100, epsilon=Fraction(1, 2)
    )
    return dp.c.make_composition([score, candidate])


def test_select_private_candidate_over_a_composition_with_dpplug_measurements(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """OpenDP reads a composition's (score, candidate) pair only if the score's type is a
    number; an untyped release was NaN, never above the threshold, so the selection looped
    forever (stop probability 0) or always returned None. With every draw seeded the score is
    one known value s: the selection returns exactly (s, that histogram) at once for a
    threshold below s, and None for one above it."""
    seed = 11
    expected = dpplug.create("geosample", n=100, epsilon=Fraction(41, 100)).sample(
        np.array([len(LABELS)]), dpplug.SeededSource(seed)
    )[0]
    for kind in dpplug.KINDS:
        module = sys.modules[kind.base.__module__]
        monkeypatch.setattr(
            module, "default_source", lambda s: dpplug.SeededSource(seed) if s is None else s
        )
    pair = score_and_candidate()
    assert pair(LABELS)[0] == expected
    below = dp.c.make_select_private_candidate(pair, stop_probability=0, threshold=expected - 0.5)
    score, histogram = below(LABELS)
    assert score == expected
    assert histogram == pair(LABELS)[1] and list(histogram) == ["apple", "fig", "pear"]
    above = dp.c.make_select_private_candidate(pair, stop_probability=0.5, threshold=expected + 0.5)
    assert above(LABELS) is None
    assert below.map(1) == pytest.approx(2 * pair.map(1), rel=1e-12)


def test_select_private_candidate_returns_candidates_unseeded() -> None:
    """With real randomness and a threshold every score passes, the selection returns a
    candidate every time (before output types: None every time)."""
    selection = dp.c.make_select_private_candidate(
        score_and_candidate(), stop_probability=0.5, threshold=-1.0
    )
    for _ in range(10):
        score, histogram = selection(LABELS)
        assert 0 <= score <= 100 and score == int(score)
        assert list(histogram) == ["apple", "fig", "pear"]  # canonical order kept


# --------------------------------------------------------------------------------------------
# binary_search_chain
# --------------------------------------------------------------------------------------------


def sampler_case(name: str) -> dict[str, Any]:
    """The sampler's first conformance case without ε, with δ as the float a user passes."""
    case = dict(dpplug.registry().get(name).cls.conformance_cases[0])
    case.pop("epsilon", None)
    if "delta" in case:
        case["delta"] = float(case["delta"])
    return case


@pytest.mark.parametrize("name", SAMPLERS)
def test_binary_search_chain_over_epsilon_for_every_sampler(name: str) -> None:
    """The issue's ``binary_search_chain(lambda ε: sampler(ε), d_in=1, d_out=0.5)`` (no
    bounds: OpenDP's exponential search finds them), with d_out = (0.5, δ) for approximate
    samplers, δ the one the sampler is given."""
    case = sampler_case(name)

    def make(epsilon: float) -> Any:
        return make_measurement(name, *i64(), epsilon=epsilon, **case)

    given = dict(dpplug.registry().get(name).cls.conformance_cases[0])
    if not within_budget(dpplug.create(name, **given).guarantee, given["epsilon"], 1):
        # A sampler that declares e^ε rounded up is refused (test_opendp_budget.py), in the
        # search too (at its first probe inside the range).
        with pytest.raises(dpplug.PluginFault):
            dp.binary_search_chain(make, d_in=1, d_out=(0.5, case["delta"]))
        return
    d_out: Any = (0.5, case["delta"]) if "delta" in case else 0.5
    found = dp.binary_search_chain(make, d_in=1, d_out=d_out)
    if "delta" in case:
        epsilon, delta = found.map(1)
        assert delta <= d_out[1]
    else:
        epsilon = found.map(1)
    assert_spends(epsilon, 0.5)
    assert found.check(1, d_out)


@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize(("d_in", "params"), [((1, 1, 1), {}), ((2, 2, 1), {"replace_one": True})])
def test_binary_search_chain_over_epsilon_for_every_selector(
    name: str, d_in: tuple[int, int, int], params: dict[str, object]
) -> None:
    """An (ε, δ) d_out: the map reports the requested δ wherever the achieved one is below it,
    so candidates are ordered by ε and the search does not fail with "unknown ordering"."""
    target = (1.0, 1e-5)

    def make(epsilon: float) -> Any:
        return make_measurement(name, epsilon=epsilon, delta=target[1], **params)

    found = dp.binary_search_chain(make, d_in, target, bounds=(0.25, 4.0))
    epsilon, delta = found.map(d_in)
    assert delta == target[1]
    # truncated-geometric-thresholding gives up about ε/k of ε to spend 95% of δ (k = 11 here:
    # docs/mechanisms.md#truncated-geometric-thresholding)
    assert_spends(epsilon, target[0], 0.97 if name == "truncated-geometric-thresholding" else SPENT)
    assert found.check(d_in, target)


def test_beyond_the_guarantee_opendp_cannot_order_the_maps_but_a_componentwise_search_can() -> None:
    """At a group distance (one partition moving by 2 units) the δ reported is the group δ,
    above the requested one and growing with ε, so some candidates have a larger ε but a
    smaller δ than the target and OpenDP's search stops on "unknown ordering" (documented in
    docs/opendp.md); ``dp.binary_search`` on both coordinates finds the largest ε within it."""
    d_in, target = (1, 2, 2), (2.0, 1e-4)

    def make(epsilon: float) -> Any:
        return make_measurement("laplace-thresholding", epsilon=epsilon, delta=1e-5)

    with pytest.raises(dp.OpenDPException, match="unknown ordering"):
        dp.binary_search_chain(make, d_in, target, bounds=(0.25, 4.0))

    def within(epsilon: float) -> bool:
        return all(a <= b for a, b in zip(make(epsilon).map(d_in), target, strict=True))

    found = make(dp.binary_search(within, bounds=(0.25, 4.0)))
    epsilon, delta = found.map(d_in)
    assert delta <= target[1] and epsilon <= target[0]
    assert found.check(d_in, target)
    assert epsilon >= SPENT * target[0] or delta >= SPENT * target[1]  # one coordinate binds


def test_selector_map_is_monotone_in_epsilon() -> None:
    """What the search relies on, on a grid of ε: ε of the map never decreases, δ is constant."""
    maps = [
        make_measurement("laplace-thresholding", epsilon=e / 16, delta=1e-6).map((1, 1, 1))
        for e in range(4, 40)
    ]
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(maps))
    assert {delta for _, delta in maps} == {1e-6}


# --------------------------------------------------------------------------------------------
# the Context API
# --------------------------------------------------------------------------------------------


def test_context_solves_for_a_missing_epsilon_in_a_fresh_process() -> None:
    """``query.dpplug_<name>(...)`` without ε is a partial chain whose ε OpenDP solves from the
    query's share of the budget, as for its own constructors: ``param()`` is the solved ε, the
    map is within the share and spends it, and ``release()`` spends exactly the share."""
    out = run_fresh(
        """
        import json
        import opendp.prelude as dp
        from dpplug.adapters.opendp import enable_features, register_context_constructors
        enable_features()
        register_context_constructors()
        unit = dp.unit_of(contributions=1)
        result = {}

        context = dp.Context.compositor(
            data=list(range(500)), privacy_unit=unit, privacy_loss=dp.loss_of(epsilon=1.0),
            split_evenly_over=2,
        )
        for name in ("discrete_laplace", "geosample"):
            params = {"n": 1000} if name == "geosample" else {}
            query = getattr(context.query().count(), "dpplug_" + name)(**params)
            result[name] = {"param": query.param(), "map": query.resolve().map(1),
                            "release": query.release()}
        result["spent"] = context.current_privacy_loss()

        labels = ["a"] * 300 + ["b"] * 200 + [f"s{i}" for i in range(50)]
        context = dp.Context.compositor(
            data=labels, privacy_unit=unit, privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-6),
            split_evenly_over=1,
        )
        query = context.query().dpplug_optimal_partition_selection(delta=1e-6)
        result["selector"] = {"param": query.param(), "map": query.resolve().map(1),
                              "release": query.release()}
        print(json.dumps(result))
        """
    )
    for name in ("discrete_laplace", "geosample"):
        solved = out[name]
        assert_spends(solved["map"], 0.5)
        assert solved["param"] >= solved["map"]  # achieved ε ≤ the parameter
        assert isinstance(solved["release"], int) and 0 <= solved["release"] <= 1000
        assert abs(solved["release"] - 500) <= 60  # fails with probability below 1e-9
    assert out["spent"] == [0.5, 0.5]
    selector = out["selector"]
    assert_spends(selector["map"][0], 1.0)
    assert selector["map"][1] == 1e-6
    assert {"a", "b"} <= set(selector["release"]) and len(selector["release"]) <= 5


def test_context_constructor_signature_names_epsilon_as_the_missing_parameter() -> None:
    """The signature OpenDP's Context reads: input domain and metric, then ε without a default
    (what a budget calibrates), then every other schema parameter keyword-only."""
    constructor: Callable[..., Any] = adapter.context_constructor(
        "geosample", dpplug.registry().get("geosample").cls.schema
    )
    parameters = inspect.signature(constructor).parameters
    assert list(parameters)[:3] == ["input_domain", "input_metric", "epsilon"]
    assert parameters["epsilon"].default is inspect.Parameter.empty
    assert parameters["n"].kind is inspect.Parameter.KEYWORD_ONLY
    assert constructor.__name__ == "make_dpplug_geosample"
    m = constructor(*i64(), 0.41, n=100)  # ε positionally, as OpenDP's search passes it
    with pytest.raises(dpplug.BadParameter, match="only epsilon positionally"):
        constructor(*i64(), 0.41, 100)
    assert m.map(1) == pytest.approx(0.4054651081081644, rel=1e-15)  # ln(3/2)
