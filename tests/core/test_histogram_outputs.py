"""What histogram releasers return (dpplug.histograms): sparse and dense outputs in canonical
order, the compact histogram's serialisation, and the empty-bin law M₀ of Balcer & Vadhan (full
version Lemma 8.4; docs/mechanisms.md#compact-histogram), checked exactly: the S_v intervals
partition [1, P] and for every v, q·d/P·Pr[M(0,U)=v] ≤ Pr[M₀(U₀)=v] ≤ (q+1)·d/P·Pr[M(0,U)=v]."""

from __future__ import annotations

import json
import types
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from conftest import RandomizedResponse
from gmpy2 import mpq

import dpplug
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee, Neighbouring, Relation
from dpplug.histograms import CompactHistogram, DenseHistogram, EmptyBinLaw, SparseHistogram
from dpplug.plugins.histograms.prime_field import proth_prime_at_least
from dpplug.universe import IntegerRange, Labels, parse_universe

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
    plan = dpplug.kinds.HISTOGRAM_RELEASER.central_plan()
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
    assert again.mechanism == hist.mechanism
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


def _tampered(**changes: object) -> bytes:
    raw = compact_release().to_bytes()
    head, _, body = raw.partition(b"\n")
    header = json.loads(head)
    for key, value in changes.items():
        if value is None:
            del header[key]
        else:
            header[key] = value
    return json.dumps(header).encode() + b"\n" + body


GARBAGE = {
    "empty": b"",
    "text": b"garbage",
    "not utf-8": b"\xff\xfe\n\x00",
    "empty object": b"{}\n",
    "list header": b"[1, 2]\n",
    "number header": b"123\n",
    "string header": b'"dpplug-compact-histogram/1"\n',
    "wrong format": _tampered(format="other/1"),
    "no newline": compact_release().to_bytes().partition(b"\n")[0],
    "short body": compact_release().to_bytes()[:-1],
    "long body": compact_release().to_bytes() + b"\x00",
    "no modulus": _tampered(modulus=None),
    "bad modulus": _tampered(modulus="abc"),
    "zero modulus": _tampered(modulus="0", degree_bound=-1),
    "negative degree": _tampered(degree_bound=-1),
    "no sampler parameters": _tampered(sampler_params=None),
    "sampler parameters a list": _tampered(sampler_params=[1]),
    "bad sampler parameter": _tampered(sampler_params={"n": "x", "epsilon": "1/2"}),
    "no universe": _tampered(universe=None),
    "bad universe": _tampered(universe="nope:1"),
    "bad guarantee": _tampered(guarantee={"exp_epsilon": "2"}),
    "bad accuracy": _tampered(accuracy="high"),
    "a releaser as sampler": _tampered(
        sampler="basic-histogram", sampler_params={"universe": "range:0:1", "n": 1, "epsilon": 1}
    ),
}


@pytest.mark.parametrize("data", GARBAGE.values(), ids=GARBAGE.keys())
def test_compact_from_bytes_on_garbage_is_bad_data(data: bytes) -> None:
    with pytest.raises(dpplug.BadData, match="cannot read a compact histogram"):
        CompactHistogram.from_bytes(data)


# --- the empty-bin law M₀ ----------------------------------------------------------------------

SAMPLERS = {
    "geosample": {"n": 3, "epsilon": Fraction(1, 2)},
    "fastsample": {"n": 3, "epsilon": Fraction(1, 2), "gamma": Fraction(1, 10)},
    "fixedpoint-geometric": {"n": 4, "epsilon": Fraction(1, 3)},
}


def check_empty_bin_law(law: EmptyBinLaw, brute_force: bool) -> None:
    sampler, modulus = law.sampler, law.modulus
    d = sampler.d
    q, r = divmod(modulus, d)
    assert (law.q, law.r) == (q, r) and q >= 1
    pmf = sampler.pmf(0)
    following = 1
    for v in range(law.n + 1):
        first, size = law.interval(v)
        assert first == following and size >= 0  # S_0, S_1, … tile [1, P] in order
        following = first + size
        m0 = mpq(size, modulus)
        assert q * d * pmf[v] / modulus <= m0 <= (q + 1) * d * pmf[v] / modulus
        if r == 0:
            assert m0 == pmf[v]  # d | P: exactly the law of M(0, U)
        if size:
            assert law.value(first) == v and law.value(first + size - 1) == v
    assert following == modulus + 1
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


def test_empty_bin_law_share_of_epsilon_is_at_most_one_over_q() -> None:
    """ε₂ + ε₃ = ln((q+1)/q): the two ratio bounds multiply to (q+1)/q ≤ e^{1/q}."""
    sampler = dpplug.create("geosample", **SAMPLERS["geosample"])
    for modulus in (47, 97, 1009, proth_prime_at_least(10**6)):
        law = EmptyBinLaw(sampler, modulus)
        upper = mpq((law.q + 1) * sampler.d, modulus)
        lower = mpq(law.q * sampler.d, modulus)
        assert lower <= 1 <= upper and upper / lower == mpq(law.q + 1, law.q)
