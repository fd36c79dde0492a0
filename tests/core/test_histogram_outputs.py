"""What histogram releasers return (dpplug.kinds.histogram_releaser.outputs): sparse and dense
outputs in canonical order, the compact histogram's serialisation, and the empty-bin law M₀ of
Balcer & Vadhan (full version Lemma 8.4; docs/mechanisms.md#compact-histogram), checked exactly: the
S_v intervals partition [1, P] and for every v, q·d/P·Pr[M(0,U)=v] ≤ Pr[M₀(U₀)=v] ≤
(q+1)·d/P·Pr[M(0,U)=v]."""

from __future__ import annotations

import json
import types
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from gmpy2 import mpq
from hypothesis import given, settings
from hypothesis import strategies as st

import dpplug
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee, Neighbouring, Relation
from dpplug.kinds.histogram_releaser.outputs import (
    CompactHistogram,
    DenseHistogram,
    EmptyBinLaw,
    SparseHistogram,
)
from dpplug.param_text import params_from_text
from dpplug.plugins.histograms.prime_field import proth_prime_at_least
from dpplug.universe import IntegerRange, Labels, parse_universe

from support.example_plugin import RandomizedResponse

GUARANTEE = Guarantee(mpq(3, 2), 0, Neighbouring(Relation.REPLACE_ONE))
ACCURACY = Accuracy(ErrorBound(2, mpq(1, 20)), ErrorBound(4, mpq(1, 20)))


def sparse(universe: object, indices: tuple[int, ...], counts: tuple[int, ...]) -> SparseHistogram:
    return SparseHistogram(parse_universe(universe), indices, counts, GUARANTEE, ACCURACY, "test")


# --- sparse and dense --------------------------------------------------------------------------


@pytest.mark.parametrize("indices", [(3, 1), (1, 1), (0, 5, 2)])
def test_sparse_histogram_rejects_non_canonical_order(indices: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="canonical"):
        sparse("range:0:9", indices, tuple(1 for _ in indices))


def test_sparse_histogram_reads_absent_labels_as_zero() -> None:
    universe = Labels(["c", "a", "b", "d"])  # canonical order is c, a, b, d
    hist = sparse(universe, (1, 3), (5, 2))
    assert hist.count("a") == 5 and hist.count("d") == 2
    assert hist.count("c") == 0 and hist.count("b") == 0
    assert list(hist.items()) == [("a", 5), ("d", 2)]
    assert hist.labels == ["a", "d"] and hist.to_dict() == {"a": 5, "d": 2} and len(hist) == 2
    with pytest.raises(dpplug.BadData, match="not in the universe"):
        hist.count("e")


def test_sparse_histogram_items_follow_the_universe_not_the_label_order() -> None:
    hist = sparse("bytes:2", (0, 2, 256, 257), (1, 2, 3, 4))
    assert [label for label, _ in hist.items()] == [b"", b"\x01", b"\xff", b"\x00\x00"]
    assert sparse("range:0:3", (), ()).to_dict() == {}


def test_dense_histogram_counts_every_label_in_order() -> None:
    universe = IntegerRange(-2, 1)
    hist = DenseHistogram(universe, np.array([4, 0, 1, 3]), GUARANTEE, ACCURACY, "test")
    assert list(hist.items()) == [(-2, 4), (-1, 0), (0, 1), (1, 3)]
    assert hist.count(1) == 3 and len(hist) == 4
    with pytest.raises(dpplug.BadData):
        hist.count(2)


def test_the_central_plan_extends_bins_in_place() -> None:
    """The fold reuses the longer list, so gathering B bins costs O(B), not O(B²)."""
    plan = dpplug.kinds.HISTOGRAM_RELEASER.central_plan(
        dpplug.registry().get("compact-histogram").cls
    )
    bins = [plan.per_bin(None, label, count) for label, count in {1: 2, 4: 1, 7: 3}.items()]
    folded = bins[0]
    for one in bins[1:]:
        combined = plan.combine(folded, one)
        assert combined is folded or combined is one
        folded = combined
    assert sorted(folded) == [(1, 2), (4, 1), (7, 3)]
    releaser = dpplug.create("compact-histogram", universe="range:0:9", n=6, epsilon=1)
    released = plan.finish(releaser, None, folded)
    assert isinstance(released, CompactHistogram)
    assert isinstance(plan.finish(releaser, None, plan.empty), CompactHistogram)


# --- compact: serialisation --------------------------------------------------------------------


def compact_release(universe: str = "text:2", seed: int = 1, **params: object) -> CompactHistogram:
    releaser = dpplug.create("compact-histogram", universe=universe, n=3, epsilon=1, **params)
    return releaser.release(["a", "b", "a"], dpplug.SeededSource(seed))


@pytest.mark.parametrize(
    "params",
    [{}, {"sampler": "geosample"}, {"sampler_options": {"gamma": Fraction(1, 997)}}],
    ids=["fastsample", "geosample", "gamma"],
)
def test_compact_to_bytes_from_bytes_round_trip(params: dict[str, object]) -> None:
    hist = compact_release(**params)
    again = CompactHistogram.from_bytes(hist.to_bytes())
    assert again.universe == hist.universe and again.modulus == hist.modulus
    assert again.coefficients == hist.coefficients
    assert again.guarantee == hist.guarantee and again.accuracy == hist.accuracy
    assert again.releaser == hist.releaser and again.parameters == hist.parameters
    assert again.mechanism.startswith("dpplug.create('compact-histogram'")
    assert again.sampler.name == hist.sampler.name and again.sampler.params == hist.sampler.params
    assert again.sampler.d == hist.sampler.d
    labels = ["a", "b", "", "zz", "\U0010ffff"]
    assert again.counts(labels) == hist.counts(labels) == [hist.count(x) for x in labels]
    assert again.to_bytes() == hist.to_bytes()


def test_compact_round_trip_through_a_given_registry() -> None:
    """A sampler from a runtime plugin (randomized response, n = 1, no ε) is rebuilt from the
    registry passed to from_bytes."""

    def register_samplers(register: Any) -> None:
        register(RandomizedResponse)

    plugin = types.ModuleType("randomized_response_plugin")
    plugin.register_samplers = dpplug.hookimpl(register_samplers)  # type: ignore[attr-defined]
    registry = dpplug.Registry.load([plugin], entry_points=False)
    releaser = registry.create(
        "compact-histogram", universe="range:0:9", n=1, sampler="randomized-response"
    )
    hist = releaser.release([3], dpplug.SeededSource(2))
    again = CompactHistogram.from_bytes(hist.to_bytes(), registry=registry)
    assert again.sampler.name == "randomized-response"
    assert again.counts(range(10)) == hist.counts(range(10))
    bare = dpplug.Registry.load(entry_points=False)
    with pytest.raises(dpplug.UnknownMechanism, match="randomized-response"):
        CompactHistogram.from_bytes(hist.to_bytes(), registry=bare)


VALID = compact_release().to_bytes()
HEAD, _, BODY = VALID.partition(b"\n")


def _tampered(body: bytes = BODY, **changes: object) -> bytes:
    """The valid bytes with header fields replaced (``DELETE`` removes one)."""
    header = json.loads(HEAD)
    for key, value in changes.items():
        if value is DELETE:
            del header[key]
        else:
            header[key] = value
    return json.dumps(header).encode() + b"\n" + body


DELETE = object()
PARAMS = json.loads(HEAD)["params"]
MODULUS = int(json.loads(HEAD)["modulus"])
WIDTH = (MODULUS.bit_length() + 7) // 8
GUARANTEE_DICT = json.loads(HEAD)["guarantee"]

GARBAGE: dict[str, object] = {
    "empty": b"",
    "text": b"garbage",
    "not utf-8": b"\xff\xfe\n\x00",
    "empty object": b"{}\n",
    "list header": b"[1, 2]\n",
    "number header": b"123\n",
    "string header": b'"dpplug-compact-histogram/2"\n',
    "deeply nested": b"[" * 100_000 + b"]" * 100_000 + b"\n",
    "integer of 5000 digits": b'{"degree_bound": ' + b"9" * 5000 + b"}\n",
    "header too long": b" " * (1 << 17) + HEAD + b"\n" + BODY,
    "old format": _tampered(format="dpplug-compact-histogram/1"),
    "no newline": HEAD,
    "short body": VALID[:-1],
    "long body": VALID + b"\x00",
    "extra key": _tampered(comment="hi"),
    **{f"no {key}": _tampered(**{key: DELETE}) for key in json.loads(HEAD)},
    "releaser not text": _tampered(releaser=1),
    "params a list": _tampered(params=[1]),
    "modulus a number": _tampered(modulus=MODULUS),
    "modulus not digits": _tampered(modulus="abc"),
    "modulus negative": _tampered(modulus="-5"),
    "modulus in other digits": _tampered(modulus="١٢٣"),
    "modulus of 1000 digits": _tampered(modulus="7" * 1000),
    "modulus 1": _tampered(modulus="1"),
    "zero modulus": _tampered(modulus="0", degree_bound=-1),
    "another prime": _tampered(modulus=str(MODULUS + 2)),  # same width, not the releaser's
    "degree text": _tampered(degree_bound="3"),
    "degree bool": _tampered(degree_bound=True),
    "degree negative": _tampered(degree_bound=-1),
    "degree huge": _tampered(degree_bound=2**60),
    "degree not the releaser's": _tampered(body=BODY[:-WIDTH], degree_bound=2),
    "parameter wrong type": _tampered(params={**PARAMS, "n": "x"}),
    "parameter a float": _tampered(params={**PARAMS, "epsilon": 0.5}),
    "parameter null": _tampered(params={**PARAMS, "epsilon": None}),
    "parameter nested": _tampered(params={**PARAMS, "sampler_options": {"gamma": 1}}),
    "parameter divides by 0": _tampered(params={**PARAMS, "epsilon": "1/0"}),
    "parameter nan": _tampered(params={**PARAMS, "epsilon": "nan"}),
    "parameter out of range": _tampered(params={**PARAMS, "epsilon": "1000"}),
    "parameter of 5000 digits": _tampered(params={**PARAMS, "epsilon": "1" * 5000}),
    "unknown parameter": _tampered(params={**PARAMS, "colour": "red"}),
    "registry as parameter": _tampered(params={**PARAMS, "registry": "x"}),
    "parameter missing": _tampered(params={k: v for k, v in PARAMS.items() if k != "universe"}),
    "other epsilon": _tampered(params={**PARAMS, "epsilon": "2"}),
    "a sampler as releaser": _tampered(releaser="geosample", params={"n": 3, "epsilon": "1"}),
    "a releaser without a field": _tampered(releaser="basic-histogram"),
    "guarantee claims ε = 0": _tampered(guarantee={**GUARANTEE_DICT, "exp_epsilon": "1"}),
    "guarantee claims pure": _tampered(guarantee={**GUARANTEE_DICT, "delta": "1/2"}),
    "guarantee divides by 0": _tampered(guarantee={**GUARANTEE_DICT, "exp_epsilon": "1/0"}),
    "guarantee malformed": _tampered(guarantee={"exp_epsilon": "2"}),
    "guarantee other relation": _tampered(
        guarantee={**GUARANTEE_DICT, "neighbouring": {"relation": "count"}}
    ),
    "coefficient at the modulus": HEAD + b"\n" + MODULUS.to_bytes(WIDTH, "little") + BODY[WIDTH:],
    "all bits set": HEAD + b"\n" + b"\xff" * len(BODY),
    "a str": VALID.decode("latin-1"),
    "None": None,
    "a list of bytes": list(VALID),
}


@pytest.mark.parametrize("data", GARBAGE.values(), ids=GARBAGE.keys())
def test_compact_from_bytes_on_garbage_is_bad_data(data: bytes) -> None:
    with pytest.raises(dpplug.BadData, match="cannot read a compact histogram"):
        CompactHistogram.from_bytes(data)


def test_compact_from_bytes_accepts_every_byte_like() -> None:
    for data in (VALID, bytearray(VALID), memoryview(VALID)):
        assert CompactHistogram.from_bytes(data).coefficients == compact_release().coefficients


def test_compact_from_bytes_names_a_releaser_that_is_not_installed() -> None:
    with pytest.raises(dpplug.UnknownMechanism, match="no-such-releaser"):
        CompactHistogram.from_bytes(_tampered(releaser="no-such-releaser"))


def _mutated(draw: Any) -> bytes:
    """Valid bytes with one random edit: bytes overwritten, cut out or inserted, or one header
    value replaced by random JSON."""
    kind = draw(st.sampled_from(["overwrite", "cut", "insert", "field"]))
    if kind == "field":
        key = draw(st.sampled_from(sorted(json.loads(HEAD))))
        value = draw(JSON)
        return _tampered(**{key: value})
    position = draw(st.integers(0, len(VALID)))
    chunk = draw(st.binary(min_size=1, max_size=8))
    if kind == "overwrite":
        return VALID[:position] + chunk + VALID[position + len(chunk) :]
    if kind == "cut":
        return VALID[:position] + VALID[position + len(chunk) :]
    return VALID[:position] + chunk + VALID[position:]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(data=st.one_of(st.binary(max_size=400), st.composite(lambda draw: _mutated(draw))()))
def test_compact_from_bytes_fuzz(data: bytes) -> None:
    """Whatever the bytes, from_bytes returns a histogram of the releaser the bytes name
    (rebuilt, so with its own guarantee) or raises a dpplug error: never OverflowError,
    ZeroDivisionError, RecursionError, KeyError or another exception."""
    try:
        hist = CompactHistogram.from_bytes(data)
    except (dpplug.BadData, dpplug.UnknownMechanism):
        return
    assert all(0 <= c < hist.modulus for c in hist.coefficients)
    releaser = dpplug.create(hist.releaser, **params_from_text(hist.parameters))
    assert hist.guarantee == releaser.guarantee and hist.modulus == releaser.modulus


# --- the empty-bin law M₀ ----------------------------------------------------------------------

SAMPLERS = {
    "geosample": {"n": 3, "epsilon": Fraction(41, 100)},  # e^ε̃ = 3/2, d = 5·3² = 45
    "fastsample": {"n": 3, "epsilon": Fraction(1, 2), "gamma": Fraction(1, 10)},
    "fixedpoint-geometric": {"n": 4, "epsilon": Fraction(1, 3)},
}


def check_empty_bin_law(law: EmptyBinLaw, brute_force: bool) -> None:
    sampler, modulus = law.sampler, law.modulus
    d = sampler.d
    pmf = sampler.pmf(0)
    following, ratios = 1, []
    for v in range(law.n + 1):
        first, size = law.interval(v)
        assert first == following and size >= 0  # S_0, S_1, … tile [1, P] in order
        following = first + size
        assert abs(size - modulus * pmf[v]) < 1  # the CDF rounded onto P points
        if pmf[v] == 0:
            assert size == 0
        elif size:
            ratios.append(mpq(size, modulus) / pmf[v])
            assert law.value(first) == v and law.value(first + size - 1) == v
        if modulus % d == 0:
            assert mpq(size, modulus) == pmf[v]  # d | P: exactly the law of M(0, U)
    assert following == modulus + 1
    smallest = min(p for p in pmf.values() if p)
    if modulus * smallest > 1:  # the ratio bounds of EmptyBinLaw's docstring
        assert all(1 - 1 / (modulus * smallest) < r < 1 + 1 / (modulus * smallest) for r in ratios)
    if brute_force:
        counts = [0] * (law.n + 1)
        for u0 in range(1, modulus + 1):
            counts[law.value(u0)] += 1
        assert counts == [law.interval(v)[1] for v in range(law.n + 1)]


@pytest.mark.parametrize("modulus", [45, 47, 53, 89, 90, 97, 137, 181, 1009])
def test_empty_bin_law_of_geosample_on_small_fields(modulus: int) -> None:
    sampler = dpplug.create("geosample", **SAMPLERS["geosample"])
    assert sampler.d == 45
    check_empty_bin_law(EmptyBinLaw(sampler, modulus), brute_force=True)


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("factor", [1, 2, 11, 1000])
def test_empty_bin_law_on_proth_prime_fields(name: str, factor: int) -> None:
    sampler = dpplug.create(name, **SAMPLERS[name])
    modulus = proth_prime_at_least(factor * sampler.d)
    check_empty_bin_law(EmptyBinLaw(sampler, modulus), brute_force=modulus < 10**4)


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("q", [1, 10, 100])
def test_empty_bin_law_ratios_follow_the_smallest_probability(name: str, q: int) -> None:
    """With P·p_min ≥ 2q + 1 every S_v is within 1 of P·Pr[M(0,U) = v], so the two ratio
    bounds (computed here exactly) multiply to at most (P·p_min + 1)/(P·p_min − 1) ≤ (q + 1)/q,
    whatever d is."""
    sampler = dpplug.create(name, **SAMPLERS[name])
    pmf = sampler.pmf(0)
    smallest = min(p for p in pmf.values() if p)
    modulus = proth_prime_at_least(int(-(-(2 * q + 1) // smallest)))
    law = EmptyBinLaw(sampler, modulus)
    ratios = [mpq(law.interval(v)[1], modulus) / p for v, p in pmf.items() if p]
    grid = modulus * smallest
    assert max(ratios) * max(1 / r for r in ratios) <= (grid + 1) / (grid - 1) <= mpq(q + 1, q)
