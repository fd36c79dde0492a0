"""Bad input to the histogram releasers: dpplug errors (BadParameter at creation, BadData at
release), raised before any randomness is drawn (source.draws unchanged) and with nothing
released."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import dpplug

from support.histograms import plugin_registry

RELEASERS = {
    "basic-histogram": {"universe": "range:0:9", "n": 4, "epsilon": 1},
    "stability-histogram": {
        "universe": "range:0:9",
        "n": 4,
        "epsilon": 1,
        "delta": Fraction(1, 1000),
    },
    "pure-sparse-histogram": {"universe": "range:0:19", "n": 4, "epsilon": 1},
    "compact-histogram": {"universe": "range:0:9", "n": 4, "epsilon": 1},
    "blanket-sparse-histogram": {"universe": "range:0:9", "n": 4, "epsilon": 1},
}
BOUNDED_ONLY = (
    "stability-histogram",
    "pure-sparse-histogram",
    "compact-histogram",
    "blanket-sparse-histogram",
)
NAN, INF = float("nan"), float("inf")


def create(name: str, **overrides: object) -> Any:
    params = {**RELEASERS[name], **overrides}
    return plugin_registry().create(name, **{k: v for k, v in params.items() if v is not None})


def used_source() -> dpplug.SeededSource:
    """A source that has already served draws, so 'nothing drawn' is not trivially 0."""
    source = dpplug.SeededSource(11)
    source.uniform(1000)
    return source


BAD_PARAMS = {
    "epsilon 0": {"epsilon": 0},
    "epsilon negative": {"epsilon": -1},
    "epsilon nan": {"epsilon": NAN},
    "epsilon inf": {"epsilon": INF},
    "epsilon -inf": {"epsilon": -INF},
    "epsilon too large": {"epsilon": 65},
    "epsilon text": {"epsilon": "one"},
    "epsilon missing": {"epsilon": None},
    "n 0": {"n": 0},
    "n negative": {"n": -3},
    "n fractional": {"n": 2.5},
    "n bool": {"n": True},
    "n huge": {"n": 1 << 41},
    "beta 0": {"beta": 0},
    "beta above 1/2": {"beta": 0.6},
    "beta nan": {"beta": NAN},
    "universe garbage": {"universe": "range:9:0"},
    "universe missing": {"universe": None},
    "universe wrong type": {"universe": 10},
    "unknown sampler": {"sampler": "no-such-sampler"},
    "empty sampler name": {"sampler": ""},
    "selector as sampler": {"sampler": "optimal-partition-selection"},
    "releaser as sampler": {"sampler": "basic-histogram"},
    "options set n": {"sampler_options": {"n": 100}},
    "options set epsilon": {"sampler_options": {"epsilon": 2}},
    "options text set epsilon": {"sampler_options": "epsilon=2"},
    "options unknown key": {"sampler_options": {"bogus": 1}},
    "options not key=value": {"sampler_options": "gamma"},
    "options wrong type": {"sampler_options": 3},
    "gamma out of range": {"sampler": "fastsample", "sampler_options": {"gamma": 2}},
    "epsilon for a sampler without one": {"sampler": "ternary-response", "n": 2},
    "sampler's n too small": {"sampler": "ternary-response", "epsilon": None, "n": 3},
    "truncated-geometric without delta": {"sampler": "truncated-geometric"},
    "unknown parameter": {"gamma": Fraction(1, 100)},
}


@pytest.mark.parametrize("name", RELEASERS)
@pytest.mark.parametrize("bad", BAD_PARAMS.values(), ids=BAD_PARAMS.keys())
def test_bad_parameters(name: str, bad: dict[str, Any]) -> None:
    with pytest.raises((dpplug.BadParameter, dpplug.UnknownMechanism)) as raised:
        create(name, **bad)
    if bad.get("sampler") == "no-such-sampler":
        assert raised.type is dpplug.UnknownMechanism
    else:
        assert raised.type is dpplug.BadParameter, raised.value


def test_messages_say_what_to_change() -> None:
    with pytest.raises(dpplug.BadParameter, match="not a counting-query sampler"):
        create("basic-histogram", sampler="optimal-partition-selection")
    with pytest.raises(dpplug.BadParameter, match="leave epsilon out"):
        create("basic-histogram", sampler="ternary-response", n=2)
    with pytest.raises(dpplug.BadParameter, match="not in sampler_options"):
        create("compact-histogram", sampler_options={"epsilon": 1})
    with pytest.raises(dpplug.UnknownMechanism, match="geosample"):
        create("basic-histogram", sampler="geosampel")  # a suggestion for the typo


@pytest.mark.parametrize("name", BOUNDED_ONLY)
@pytest.mark.parametrize(
    ("sampler", "options"),
    [("discrete-laplace", {}), ("truncated-geometric", {"delta": Fraction(1, 10**6)})],
)
def test_unbounded_or_approximate_samplers_are_refused(
    name: str, sampler: str, options: dict[str, Any]
) -> None:
    """Stability, pure-sparse and compact read M's scaled CDF on [0, n] and need pure DP."""
    with pytest.raises(dpplug.BadParameter, match="sampler"):
        create(name, sampler=sampler, sampler_options=options)


def test_stability_delta_must_be_in_zero_one() -> None:
    for delta in (0, 1, -0.5, NAN, None):
        with pytest.raises(dpplug.BadParameter):
            create("stability-histogram", delta=delta)


@pytest.mark.parametrize(("universe", "n"), [("range:0:15", 5), ("range:0:7", 3), ("bytes:0", 1)])
def test_pure_sparse_needs_four_n_labels(universe: str, n: int) -> None:
    with pytest.raises(dpplug.BadParameter, match="4n"):
        create("pure-sparse-histogram", universe=universe, n=n)
    create("pure-sparse-histogram", universe="range:0:15", n=4)  # |X| = 4n is enough


@pytest.mark.parametrize(("universe", "n"), [("range:0:3", 4), ('labels:["a", "b"]', 2)])
def test_compact_needs_n_plus_one_labels(universe: str, n: int) -> None:
    with pytest.raises(dpplug.BadParameter, match="n \\+ 1"):
        create("compact-histogram", universe=universe, n=n)
    create("compact-histogram", universe="range:0:4", n=4)  # |X| = n + 1 is enough


@pytest.mark.parametrize("universe", ["bytes:4", "range:0:100000000", "text:2"])
def test_basic_refuses_more_than_10_to_the_8_labels(universe: str) -> None:
    with pytest.raises(dpplug.BadParameter, match="compact-histogram"):
        create("basic-histogram", universe=universe)
    create("basic-histogram", universe="range:1:100000000", n=1)  # exactly 10^8: accepted


BAD_DATA = {
    "label outside": [1, 2, 99],
    "negative label": [-1],
    "label of the wrong type": ["1"],
    "float label": [1.0],
    "bool label": [True],
    "unhashable label": [[1]],
    "too many rows": [0, 1, 2, 3, 4],
    "text as rows": "0123",
    "bytes as rows": b"\x00\x01",
    "a number": 3,
    "None": None,
    "count outside": {99: 1},
    "negative count": {0: 2, 1: -1},
    "fractional count": {0: 1.5},
    "float count": {0: 2.0},
    "text count": {0: "2"},
    "bool count": {0: True},
    "counts sum above n": {0: 3, 1: 2},
    "one count above n": {0: 5},
}


@pytest.mark.parametrize("name", RELEASERS)
@pytest.mark.parametrize("data", BAD_DATA.values(), ids=BAD_DATA.keys())
def test_bad_data_raises_before_any_draw(name: str, data: object) -> None:
    releaser = create(name)
    source = used_source()
    before = source.draws
    with pytest.raises(dpplug.BadData):
        releaser.release(data, source)
    assert source.draws == before


@pytest.mark.parametrize("name", RELEASERS)
def test_good_data_forms_are_accepted(name: str) -> None:
    releaser = create(name)
    for data in (
        [0, 0, 3, 9],
        (x for x in [1, 2]),
        np.array([4, 4]),
        {0: 2, 5: 0, 9: 2},
        {np.int64(3): np.int64(4)},
        [],
        {},
    ):
        releaser.release(data, dpplug.SeededSource(1))
    assert releaser.true_counts([9, 0, 9]).indices == (0, 9)
    assert list(releaser.true_counts({9: 2, 0: 1}).counts) == [1, 2]


@pytest.mark.parametrize("name", RELEASERS)
def test_source_must_be_a_random_source(name: str) -> None:
    with pytest.raises(dpplug.BadParameter, match="RandomSource"):
        create(name).release([1], source=np.random.default_rng(0))


@pytest.mark.parametrize("name", RELEASERS)
def test_accuracy_needs_beta_in_zero_one(name: str) -> None:
    releaser = create(name)
    for beta in (0, 1, -0.1, NAN, "0.1"):
        with pytest.raises(dpplug.BadParameter):
            releaser.accuracy(beta)


def test_pure_sparse_cannot_promise_a_beta_below_its_mixing_failure() -> None:
    """β₂ = β/6 of the releases come from the random histogram: accuracy at β ≤ β₂ is refused."""
    releaser = create("pure-sparse-histogram")
    assert releaser.beta2 == Fraction(1, 120)
    for beta in (Fraction(1, 120), Fraction(1, 200)):
        with pytest.raises(dpplug.BadParameter, match="β₂ = 1/120"):
            releaser.accuracy(beta)
    assert releaser.accuracy(Fraction(1, 119)).per_query.beta == Fraction(1, 119)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n": 10**7, "epsilon": 1}, "give basic-histogram n ≤ 1000000"),
        ({"n": 10, "epsilon": 1e-9}, "give basic-histogram epsilon ≥ 1/524288"),
    ],
)
def test_a_releaser_names_its_own_parameter_when_its_sampler_cannot_take_it(
    params: dict[str, object], message: str
) -> None:
    with pytest.raises(dpplug.BadParameter, match=message):
        dpplug.create("basic-histogram", universe="range:0:9", sampler="geosample", **params)


def test_true_counts_add_up_labels_on_both_sides_of_2_to_the_64() -> None:
    """Over bytes:8 the indices below 2^64 are summed in numpy and the others in Python: the
    bins come out in index order with repeated labels added up."""
    releaser = create("blanket-sparse-histogram", universe="bytes:8", n=1000)
    high = [b"\xff" * 8, b"\xff" * 7 + b"\xfe", b"\xfe" + b"\xff" * 7]
    low = [bytes([i]) * (1 + i % 8) for i in range(120)]
    rows = [*low, *high, *low[:30], high[0], *np.array([b"x"] * 3, dtype=object)]
    counts = releaser.true_counts(rows)
    universe = releaser.universe
    expected: dict[int, int] = {}
    for label in rows:
        expected[universe.index(label)] = expected.get(universe.index(label), 0) + 1
    assert counts.indices == tuple(sorted(expected))
    assert counts.counts.tolist() == [expected[i] for i in sorted(expected)]
    assert counts.rows == len(rows)
    assert counts.indices[-1] >= 1 << 64 > counts.indices[0]
