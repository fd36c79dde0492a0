"""The OpenDP adapter and budgets: a plugin is refused when it declares more than the ε and δ it
was given; ε beyond a plugin's range gives a measurement whose map OpenDP's searches can use;
Context queries give approximate plugins their δ share.

- Every route that builds a measurement (``make_measurement``, ``then_measurement`` in a chain,
  ``deserialize``, the Context constructors, with ε given and searched) refuses the deliberately
  overspending plugins of ``overspending.py`` with a ``PluginFault`` when it is built, so no
  data reaches them.
- ``binary_search_chain`` over ε finds a measurement within any target for every built-in
  sampler and selector: at targets beyond a plugin's range it settles at the top of the range
  (a measurement asked for more reports ε = +∞ at every nonzero distance, so the search goes
  lower), and the Context calibrates ε the same way.
- Under an (ε, δ) Context, a query whose constructor leaves δ out takes the query's δ share (the
  float OpenDP compares with), scaled for the group distance when a transformation before it
  multiplies the distance; a query releaser whose declared loss equals its share is accepted.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

dp = pytest.importorskip("opendp.prelude")

import dpplug  # noqa: E402
import dpplug.kinds  # noqa: E402
from dpplug.adapters import opendp as adapter  # noqa: E402
from dpplug.adapters.opendp import (  # noqa: E402
    deserialize,
    make_measurement,
    serialize,
    then_measurement,
)
from dpplug.guarantee import within_budget  # noqa: E402

from support import overspending  # noqa: E402
from support.fresh_interpreter import run_fresh  # noqa: E402

SAMPLERS = [entry.name for entry in dpplug.registry().entries(dpplug.kinds.SAMPLER)]
SELECTORS = [entry.name for entry in dpplug.registry().entries(dpplug.kinds.PARTITION_SELECTOR)]
LABELS = ["a"] * 300 + ["b"] * 200 + [f"s{i}" for i in range(20)]
UNIVERSE = 'labels:["a", "b", "c"]'


@pytest.fixture(autouse=True, scope="module")
def _features() -> None:
    adapter.enable_features()


def i64() -> tuple[Any, Any]:
    return dp.atom_domain(T="i64"), dp.absolute_distance(T="i64")


def vectors() -> tuple[Any, Any]:
    return dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()


def count_by() -> Any:
    return dp.t.make_count_by(*vectors(), TV="i64")


# --------------------------------------------------------------------------------------------
# plugins that spend more than they are given
# --------------------------------------------------------------------------------------------

#: Each overspending plugin with the parameters it is given and the chain it enters after.
OVERSPENDERS = [
    *((name, {"epsilon": 0.5}, "count") for name in overspending.SAMPLERS),
    *((name, {"epsilon": 0.5, "delta": 1e-6}, "count_by") for name in overspending.SELECTORS),
    *(
        (name, {"epsilon": 0.5, "universe": UNIVERSE, "n": 1000}, "count_by")
        for name in overspending.RELEASERS
    ),
]


@pytest.mark.parametrize(("name", "params", "after"), OVERSPENDERS, ids=lambda v: str(v)[:24])
def test_every_route_refuses_a_plugin_that_declares_more_than_it_was_given(
    name: str, params: dict[str, Any], after: str
) -> None:
    plugins = overspending.registry()
    declared = plugins.create(name, **params).guarantee
    assert not within_budget(declared, params["epsilon"], params.get("delta", 0))
    domain_metric = i64() if after == "count" else None
    with pytest.raises(dpplug.PluginFault, match="more than the budget"):
        make_measurement(name, *(domain_metric or ()), registry=plugins, **params)
    before = dp.t.make_count(*vectors()) if after == "count" else count_by()
    with pytest.raises(dpplug.PluginFault, match=name):
        before >> then_measurement(name, registry=plugins, **params)
    form = {"form": "count", "T": "i64"} if after == "count" else {"form": "label-vector"}
    written = {k: str(v) if isinstance(v, float) else v for k, v in params.items()}
    text = json.dumps({"plugin": name, "params": written, "input": {"T": None, **form}})
    with pytest.raises(dpplug.PluginFault):
        deserialize(text, plugins)
    # The honest built-in with the same parameters is a measurement.
    honest = {"count": "discrete-laplace", "count_by": "optimal-partition-selection"}[after]
    if name.endswith("histogram"):
        honest = "basic-histogram"
    assert make_measurement(honest, *(domain_metric or ()), **params) is not None


def test_the_context_constructors_refuse_them_with_epsilon_given_or_searched() -> None:
    """In a fresh interpreter (OpenDP's registrations are global): the Context constructors of
    the overspending plugins raise the PluginFault for ε given and inside the search for ε,
    and a query of an honest plugin then still releases within its share."""
    out = run_fresh(
        """
        import json, sys
        sys.path.insert(0, "tests")
        import opendp.prelude as dp
        from support import overspending
        import dpplug
        from dpplug.adapters.opendp import context_constructor, enable_features
        enable_features()
        plugins = overspending.registry()
        for name in overspending.SAMPLERS + overspending.SELECTORS:
            constructor = context_constructor(name, plugins.get(name).cls.schema, plugins)
            dp.register(constructor, name=constructor.__name__.removeprefix("make_"))
        context = dp.Context.compositor(
            data=["a"] * 300 + ["b"] * 5, privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-6), split_evenly_over=8)
        refused = {}
        for name in overspending.SAMPLERS + overspending.SELECTORS:
            attribute = "dpplug_" + name.replace("-", "_")
            base = context.query()
            base = base.count() if name in overspending.SAMPLERS else base
            for how, kwargs in (("given", {"epsilon": 0.1}), ("searched", {})):
                try:
                    getattr(base, attribute)(**kwargs).release()
                    refused[f"{name} {how}"] = "released"
                except dpplug.PluginFault:
                    refused[f"{name} {how}"] = "PluginFault"
                except Exception as other:
                    refused[f"{name} {how}"] = type(other).__name__ + str(other)[:200]
        print(json.dumps({"refused": refused, "spent": context.current_privacy_loss()}))
        """
    )
    assert set(out["refused"].values()) == {"PluginFault"}, out["refused"]
    assert out["spent"] == []  # nothing was released


# --------------------------------------------------------------------------------------------
# ε beyond a plugin's range, and searches at any target
# --------------------------------------------------------------------------------------------


def test_epsilon_outside_the_range_gives_a_measurement_for_searches() -> None:
    """discrete-laplace takes ε in [2^-20, 16]: asked for 100 it runs at 16 (its guarantee
    within both) and its map is +∞ at every nonzero distance, 0 at distance 0; asked for 0 (or
    2^-21) it releases nothing, the same refusal for every input, and its map is 0. Serialised
    and rebuilt they are the same."""
    m = make_measurement("discrete-laplace", *i64(), epsilon=100)
    assert m.map(1) == math.inf and m.map(5) == math.inf and m.map(0) == 0
    top = make_measurement("discrete-laplace", *i64(), epsilon=16)
    assert top.map(1) <= 16
    assert isinstance(m(7), int)
    rebuilt = deserialize(serialize(m))
    assert rebuilt.map(1) == math.inf
    selector = make_measurement("optimal-partition-selection", epsilon=1000, delta=1e-6)
    assert selector.map((1, 1, 1))[0] == math.inf
    for below in (0, 2.0**-21, -3):
        nothing = make_measurement("discrete-laplace", *i64(), epsilon=below)
        assert nothing.map(1) == 0 and deserialize(serialize(nothing)).map(3) == 0
        for count in (0, 7, -(2**40)):
            with pytest.raises(dp.OpenDPException, match="releases nothing"):
                nothing(count)
    quiet = make_measurement("laplace-thresholding", epsilon=0, delta=1e-6)
    assert quiet.map((1, 1, 1)) == (0.0, 0.0)
    with pytest.raises(dp.OpenDPException, match=r"below its range \[1/1024, 64\]"):
        quiet({"a": 5})


def sampler_case(name: str) -> dict[str, Any]:
    """The sampler's first conformance case without ε, with δ as the float a user passes."""
    case = dict(dpplug.registry().get(name).cls.conformance_cases[0])
    case.pop("epsilon", None)
    if "delta" in case:
        case["delta"] = float(case["delta"])
    return case


def spends_within(name: str, case: dict[str, Any]) -> bool:
    """Whether the plugin's declared guarantee is within the ε and δ it is given at its first
    conformance case (a built-in that rounds e^ε up is refused by the adapter until fixed)."""
    given = dict(dpplug.registry().get(name).cls.conformance_cases[0])
    declared = dpplug.create(name, **given).guarantee
    return within_budget(declared, given["epsilon"], given.get("delta", 0))


#: Targets from well inside every plugin's range to far beyond all of them.
TARGETS = [0.5, 3.0, 40.0, 1e6]


@pytest.mark.parametrize("name", SAMPLERS)
def test_binary_search_chain_finds_a_sampler_within_any_target(name: str) -> None:
    """No bounds (OpenDP's exponential search finds them): at each target the search returns a
    measurement within it, spending at least 99% of min(target, the most the sampler spends)."""
    case = sampler_case(name)
    if not spends_within(name, case):
        with pytest.raises(dpplug.PluginFault):
            make_measurement(name, *i64(), epsilon=1, **case)
        return
    top = make_measurement(name, *i64(), epsilon=max(TARGETS), **case)
    schema_top = next(p.high for p in dpplug.registry().get(name).cls.schema if p.name == "epsilon")
    most = make_measurement(name, *i64(), epsilon=schema_top, **case).map(1)
    most = most[0] if isinstance(most, tuple) else most
    assert top.map(1) == math.inf or top.map(1)[0] == math.inf
    for target in TARGETS:
        d_out: Any = (target, case["delta"]) if "delta" in case else target
        found = dp.binary_search_chain(
            lambda e: make_measurement(name, *i64(), epsilon=e, **case), 1, d_out
        )
        epsilon = found.map(1)[0] if "delta" in case else found.map(1)
        assert 0.99 * min(target, most) <= epsilon <= target, (target, epsilon)
        assert found.check(1, d_out)


@pytest.mark.parametrize("name", SELECTORS)
def test_binary_search_chain_finds_a_selector_within_any_target(name: str) -> None:
    delta = 1e-5
    most = make_measurement(name, epsilon=64, delta=delta).map((1, 1, 1))[0]
    for target in TARGETS:
        found = dp.binary_search_chain(
            lambda e: make_measurement(name, epsilon=e, delta=delta), (1, 1, 1), (target, delta)
        )
        epsilon, reported = found.map((1, 1, 1))
        # A selector's achieved loss is a step function of the ε asked for (truncated geometric
        # thresholding's integer parameters: asked 0.5 it spends 0.482, its largest below 0.5), so
        # the search must spend at least 99% of what the plugin spends when asked the target.
        direct = make_measurement(name, epsilon=min(target, 64), delta=delta).map((1, 1, 1))[0]
        assert 0.99 * min(direct, most) <= epsilon <= target and reported == delta
        assert found.check((1, 1, 1), (target, delta))


def test_context_calibration_at_any_target_in_a_fresh_process() -> None:
    """Every sampler (after a count) and every selector (on the labels, δ from the budget)
    solves its ε from a Context budget at every target, and releases within it."""
    out = run_fresh(
        f"""
        import json
        import opendp.prelude as dp
        import dpplug, dpplug.kinds
        from dpplug.adapters.opendp import enable_features, register_context_constructors
        from dpplug.guarantee import within_budget
        enable_features()
        register_context_constructors()
        result = {{}}
        for entry in dpplug.registry().entries():
            if entry.kind not in (dpplug.kinds.SAMPLER, dpplug.kinds.PARTITION_SELECTOR):
                continue
            case = dict(entry.cls.conformance_cases[0])
            if not within_budget(
                entry.create(**case).guarantee, case["epsilon"], case.get("delta", 0)
            ):
                continue  # refused by the adapter (the sampler-search test checks that)
            given = {{k: v for k, v in case.items() if k not in ("epsilon", "delta")}}
            approximate = entry.kind is dpplug.kinds.PARTITION_SELECTOR or "delta" in case
            for target in {TARGETS!r}:
                loss = dp.loss_of(epsilon=target, delta=1e-6 if approximate else 0.0)
                context = dp.Context.compositor(
                    data={LABELS!r}, privacy_unit=dp.unit_of(contributions=1),
                    privacy_loss=loss, split_evenly_over=1)
                query = context.query()
                if entry.kind is dpplug.kinds.SAMPLER:
                    query = query.count()
                query = getattr(query, "dpplug_" + entry.name.replace("-", "_"))(**given)
                release = query.release()
                result[f"{{entry.name}} {{target}}"] = {{
                    "spent": context.current_privacy_loss(), "type": type(release).__name__}}
        print(json.dumps(result))
        """
    )
    names = {key.rsplit(" ", 1)[0] for key in out}
    assert names >= set(SELECTORS) and "discrete-laplace" in names and "geosample" in names
    for key, value in out.items():
        target = float(key.rsplit(" ", 1)[1])
        ((spent,),) = [value["spent"]]
        spent_epsilon = spent[0] if isinstance(spent, list) else spent
        assert spent_epsilon == target, (key, value)  # the Context charges its share
        assert value["type"] in ("int", "list", "dict"), (key, value)


# --------------------------------------------------------------------------------------------
# δ from the Context, and shares equal to the request
# --------------------------------------------------------------------------------------------


def test_delta_comes_from_the_context_share_in_a_fresh_process() -> None:
    """(1, 10^-6) split over three: each share's δ is OpenDP's float 3.333…e-7, which no
    decimal typed by hand need match. A selector left without δ takes it (one step: the map
    reports it exactly) and a query releaser after OpenDP's resize (distance 2: the group δ)
    takes it scaled so that its map at distance 2 is within the share; all three release, and
    the compositor charges exactly the shares."""
    out = run_fresh(
        """
        import json
        import opendp.prelude as dp
        from dpplug.adapters.opendp import enable_features, register_context_constructors
        enable_features()
        register_context_constructors()
        labels = ["a"] * 300 + ["b"] * 200
        context = dp.Context.compositor(
            data=labels, privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-6), split_evenly_over=3)
        share = context.remaining_privacy_loss()[0]
        selector = context.query().dpplug_optimal_partition_selection()
        selector_map = selector.resolve().map(1)
        kept = selector.release()
        smw = context.query().resize(size=500, constant="a").dpplug_sparse_multiplicative_weights(
            n=10**7, max_queries=4, sparsity=2, grid=4)
        smw_map = smw.resolve().map(1)
        session = smw.release()
        answer = session({"a": 1})
        pure = context.query().resize(size=500, constant="a").dpplug_independent_laplace(
            n=1000, max_queries=4, sparsity=2, delta=0)
        pure.release()
        print(json.dumps({"share": share, "selector_map": selector_map, "kept": kept,
                          "smw_map": smw_map, "answer": float(answer),
                          "spent": context.current_privacy_loss()}))
        """
    )
    share = out["share"]
    assert share[1] == 1e-6 / 3 and out["selector_map"][1] == share[1]
    assert out["kept"] == ["a", "b"]
    assert out["smw_map"][0] <= share[0] and out["smw_map"][1] <= share[1]
    assert 0 <= out["answer"] <= 1
    assert out["spent"] == [share] * 3


def test_a_query_releaser_whose_loss_equals_its_share_is_accepted() -> None:
    """A compositor whose share is exactly the ε asked for (two rows changed: 2·0.5 = 1.0) now
    accepts independent-laplace, which declared e^ε rounded up (ε 5e-21 above the request); it
    declares ε·(1 − 2^-10) now."""
    sized = dp.vector_domain(dp.atom_domain(T=str), size=500), dp.symmetric_distance()
    params = {"n": 1000, "epsilon": 0.5, "max_queries": 3, "sparsity": 2}
    measurement = make_measurement("independent-laplace", *sized, **params)
    assert measurement.map(2) <= 1.0
    compositor = dp.c.make_adaptive_composition(*sized, dp.max_divergence(), d_in=2, d_mids=[1.0])
    session = compositor(["a"] * 300 + ["b"] * 200)(measurement)
    assert 0 <= session({"a": 1}) <= 1
