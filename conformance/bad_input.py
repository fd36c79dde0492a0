"""Contract 2, bad input: every invalid parameter and every invalid piece of data raises a dpplug
error, and nothing is drawn from the random source first (a bad call releases nothing).

Two parts: the boundary values of every declared parameter (≤ 0, NaN, ±inf, wrong type, out of
range, huge; malformed names, universes and option lists) and of the data (negative or
out-of-range counts, non-integers, wrong types; for histogram releasers also labels outside the
universe, more than n rows, and a string where rows are expected), then a property-based search
(hypothesis, derandomised from the run's seed) over arbitrary values: count arrays, or rows and
label → count mappings for releasers.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import hypothesis
import numpy as np
from hypothesis import strategies as st

from dpplug.conformance.cases import instances
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import DpplugError, NotSupported
from dpplug.kinds import (
    UNBOUNDED_COUNT,
    CountingQuerySampler,
    HistogramReleaser,
    Mechanism,
    PartitionSelector,
)
from dpplug.params import Param
from dpplug.randomness import SeededSource
from dpplug.registry import Entry
from dpplug.universe import Universe

NAME = "bad-input"
_WRONG_TYPES: tuple[object, ...] = ("1", True, [1], {"a": 1}, object())
_NON_FINITE = (math.nan, math.inf, -math.inf)


#: Invalid values of the non-numeric parameter types (see :meth:`dpplug.params.Param.coerce`).
_INVALID_BY_TYPE: dict[str, tuple[object, ...]] = {
    "boolean": ("true", 1, 0, 1.0, math.nan, [True]),
    "text": ("", 1, 1.5, True, b"name", ["name"], {"name": 1}),
    "universe": (
        "",
        "range:5:1",
        "range:0",
        "range:a:b",
        "bytes:-1",
        "text:x",
        "labels:[]",
        'labels:["a", "a"]',
        "labels:[true]",
        'labels:{"a": 1}',
        "no-such-universe:3",
        3,
        ["a", "b"],
    ),
    "options": ("gamma", "=1", "gamma=1,,=2", 5, ["gamma=1"], {1: 2}, {"no_such_option": 1}),
}


def _invalid_values(param: Param) -> list[object]:
    if param.type in _INVALID_BY_TYPE:
        values = list(_INVALID_BY_TYPE[param.type])
    else:
        values = _invalid_numbers(param)
    return values if param.optional else [*values, None]


def _invalid_numbers(param: Param) -> list[object]:
    values: list[object] = [*_WRONG_TYPES, *_NON_FINITE, 10**400, -(10**400)]
    if param.low is not None:
        values.append(param.low if param.low_open else param.low - 1)
    if param.high is not None:
        values.append(param.high if param.high_open else param.high + 1)
    if param.type == "integer":
        values += [1.5, 2.0]
    return values


def _count_entry(mechanism: Mechanism) -> tuple[Callable[[object, SeededSource], object], int, int]:
    """The count-taking call of a sampler or selector and the range its counts must lie in."""
    if isinstance(mechanism, CountingQuerySampler):
        return mechanism.sample, *mechanism.count_bounds
    if isinstance(mechanism, PartitionSelector):
        return mechanism.select, 0, UNBOUNDED_COUNT
    raise NotSupported(f"no bad-data checks for a {mechanism.kind} yet")


def _bad_counts(low: int, high: int) -> list[object]:
    return [
        [low - 1],
        [high + 1],
        [0.5],
        np.array([1.0]),
        [True],
        np.array(["1"]),
        np.array([1, 2], dtype=object),
        [2**70],
        "12",
    ]


class _Violation(Exception):
    """A bad input that was accepted, or rejected the wrong way."""


def _expect_rejection(what: str, call: Callable[[], object], source: SeededSource) -> None:
    before = source.draws
    try:
        call()
    except DpplugError:
        if source.draws != before:
            raise _Violation(f"{what}: raised, but only after drawing randomness") from None
        return
    except Exception as exc:
        raise _Violation(
            f"{what}: raised {type(exc).__name__} ({exc}), not a dpplug error"
        ) from exc
    raise _Violation(f"{what}: was accepted")


def _outside(universe: Universe) -> list[object]:
    """Labels that are not in *universe* (of the right type and of wrong ones)."""
    candidates: list[object] = [-1, universe.size, 10**30, "\udc80", "z" * 1000, b"\xff" * 1000]
    candidates += [0.5, None, True, (0,), frozenset()]
    return [label for label in candidates if label not in universe]


def _bad_release_data(releaser: HistogramReleaser) -> list[object]:
    """Data every releaser must refuse: labels outside the universe, more than n rows, counts
    that are negative, above n or not integers, strings where rows belong, and wrong types."""
    n, x, y = releaser.n, releaser.universe.label(0), releaser.universe.label(1)
    bad: list[object] = [[label] for label in _outside(releaser.universe)]
    bad += [{label: 1} for label in _outside(releaser.universe)]
    bad += [[x] * (n + 1), {x: n, y: 1}, {x: n + 1}, {x: -1}, {x: 0.5}, {x: 1.0}, {x: True}]
    bad += [{x: "1"}, {x: None}, {x: np.float64(1)}, {x: 2**70}, [[x]], [{x: 1}]]
    return [*bad, "ab", b"ab", str(x), 5, 1.5, None, object()]


def _data_checks(mechanism: Mechanism, source: SeededSource) -> None:
    if isinstance(mechanism, HistogramReleaser):
        for data in _bad_release_data(mechanism):
            _expect_rejection(
                f"release({data!r})", partial(mechanism.release, data, source), source
            )
        return
    run, low, high = _count_entry(mechanism)
    for counts in _bad_counts(low, high):
        _expect_rejection(f"{run.__name__}({counts!r})", partial(run, counts, source), source)
    if isinstance(mechanism, PartitionSelector):
        for bad in (-1, 0.5, True):
            call = partial(mechanism.keep_probability, bad)
            _expect_rejection(f"keep_probability({bad!r})", call, source)
        for mask in (np.ones(3, dtype=np.int64), np.ones(2, dtype=np.bool_)):
            call = partial(mechanism.select, [1, 2, 3], source, public=mask)
            _expect_rejection(f"select(public={mask!r})", call, source)
        return
    assert isinstance(mechanism, CountingQuerySampler)
    for counts in _bad_counts(low, high):
        _expect_rejection(f"pmf({counts!r})", partial(mechanism.pmf, counts), source)
    if mechanism.d is not None:
        for u in (0, mechanism.d + 1, 1.0):
            _expect_rejection(f"M(0, u={u!r})", partial(mechanism, 0, u), source)
        _expect_rejection("M(count=n+1, 1)", partial(mechanism, high + 1, 1), source)


@dataclass(frozen=True)
class _DataSpace:
    """What the property search feeds a mechanism: arbitrary data, which of it is valid, and the
    call that takes it."""

    data: st.SearchStrategy[Any]
    valid: Callable[[object], bool]
    call: Callable[[object, SeededSource], object]


def _count_space(mechanism: Mechanism) -> _DataSpace:
    """Short lists of integers (any size) and floats, for samplers and selectors."""
    run, low, high = _count_entry(mechanism)

    def valid(counts: object) -> bool:
        return isinstance(counts, list) and all(
            isinstance(c, int) and low <= c <= high for c in counts
        )

    return _DataSpace(
        st.lists(st.one_of(st.integers(-(2**65), 2**65), st.floats()), max_size=4), valid, run
    )


def _is_count(value: object, n: int) -> bool:
    return (
        isinstance(value, numbers.Integral) and not isinstance(value, bool) and 0 <= int(value) <= n
    )


def _release_space(releaser: HistogramReleaser) -> _DataSpace:
    """Rows and label → count mappings whose labels are sometimes in the universe."""
    universe, n = releaser.universe, releaser.n
    inside = sorted({0, 1, universe.size - 1})
    label = st.one_of(
        st.sampled_from([universe.label(i) for i in inside]),
        st.integers(-3, 2**70),
        st.text(max_size=3),
        st.binary(max_size=3),
        st.floats(),
        st.booleans(),
        st.none(),
    )
    count = st.one_of(st.integers(-2, n + 2), st.floats(), st.booleans(), st.fractions())
    data = st.one_of(
        st.lists(label, max_size=n + 2),
        st.dictionaries(label, count, max_size=3),
        st.text(max_size=3),
        st.integers(),
        st.none(),
    )

    def valid(given: object) -> bool:
        if isinstance(given, dict):
            counts = list(given.values())
            labels_ok = all(label in universe for label in given)
            return labels_ok and all(_is_count(c, n) for c in counts) and sum(counts) <= n
        return isinstance(given, list) and len(given) <= n and all(x in universe for x in given)

    return _DataSpace(data, valid, releaser.release)


def _property_search(
    entry: Entry, case: dict[str, Any], mechanism: Mechanism, settings: Settings
) -> None:
    """Arbitrary parameter values and data: valid and run, or a dpplug error, no draws."""
    params = list(entry.cls.schema)
    space = (
        _release_space(mechanism)
        if isinstance(mechanism, HistogramReleaser)
        else _count_space(mechanism)
    )
    anything = st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(2**80), 2**80),
        st.fractions(),
        st.booleans(),
        st.text(max_size=3),
        st.none(),
    )

    @hypothesis.settings(
        max_examples=settings.examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(st.sampled_from(params) if params else st.none(), anything, space.data)
    def search(param: Param | None, value: object, data: object) -> None:
        source = SeededSource(settings.seed)
        if param is not None:
            try:
                entry.create(**{**case, param.name: value})
            except DpplugError:
                pass
            except Exception as exc:
                raise _Violation(f"{param.name}={value!r}: raised {type(exc).__name__}") from exc
        call = partial(space.call, data, source)
        if space.valid(data):
            call()
        else:
            _expect_rejection(f"{space.call.__name__}({data!r})", call, source)

    search()


def _changed(entry: Entry, case: dict[str, Any], change: dict[str, object]) -> Callable[[], object]:
    """Creating the plugin with *case* modified by *change*, as a call to make later."""
    return lambda: entry.create(**{**case, **change})


def check(entry: Entry, settings: Settings) -> ContractResult:
    tried = 0
    try:
        for case, mechanism in instances(entry):
            source = SeededSource(settings.seed)
            for param in entry.cls.schema:
                for value in _invalid_values(param):
                    tried += 1
                    call = _changed(entry, case, {param.name: value})
                    _expect_rejection(f"{param.name}={value!r}", call, source)
            call = _changed(entry, case, {"no_such_parameter": 1})
            _expect_rejection("an unknown parameter", call, source)
            _data_checks(mechanism, source)
            _property_search(entry, case, mechanism, settings)
    except _Violation as violation:
        return ContractResult(NAME, Outcome.FAILED, str(violation))
    except hypothesis.errors.HypothesisException as exc:
        return ContractResult(NAME, Outcome.FAILED, f"property search: {exc}")
    return ContractResult(
        NAME,
        Outcome.PASSED,
        f"{tried} boundary parameter values, bad data and {settings.examples} generated inputs "
        "per case rejected with dpplug errors before any draw",
    )
