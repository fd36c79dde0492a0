"""Contract 2, bad input: every invalid parameter and every invalid piece of data raises a dpplug
error, and nothing is drawn from the random source first (a bad call releases nothing).

Two parts: the boundary values of every declared parameter (≤ 0, NaN, ±inf, wrong type, out of
range, huge) and of the data (negative or out-of-range counts, non-integers, wrong types), then a
property-based search (hypothesis, derandomised from the run's seed) over arbitrary values.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import hypothesis
import numpy as np
from hypothesis import strategies as st

from dpplug.conformance.cases import instances
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import DpplugError, NotSupported
from dpplug.kinds import UNBOUNDED_COUNT, CountingQuerySampler, Mechanism, PartitionSelector
from dpplug.params import Param
from dpplug.randomness import SeededSource
from dpplug.registry import Entry

NAME = "bad-input"
_WRONG_TYPES: tuple[object, ...] = ("1", True, [1], {"a": 1}, object())
_NON_FINITE = (math.nan, math.inf, -math.inf)


def _invalid_values(param: Param) -> list[object]:
    if param.type == "boolean":
        return ["true", 1, 0, 1.0, math.nan, [True], *([] if param.optional else [None])]
    values: list[object] = [*_WRONG_TYPES, *_NON_FINITE, 10**400, -(10**400)]
    if not param.optional:
        values.append(None)
    if param.low is not None:
        values.append(param.low if param.low_open else param.low - 1)
    if param.high is not None:
        values.append(param.high if param.high_open else param.high + 1)
    if param.type == "integer":
        values += [1.5, 2.0]
    return values


def _data_entry(mechanism: Mechanism) -> tuple[Callable[[object, SeededSource], object], int, int]:
    """The data-taking call of a mechanism and the integer range its inputs must lie in."""
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


def _data_checks(mechanism: Mechanism, source: SeededSource) -> None:
    run, low, high = _data_entry(mechanism)
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


def _property_search(
    entry: Entry, case: dict[str, Any], mechanism: Mechanism, settings: Settings
) -> None:
    """Arbitrary parameter values and count arrays: valid and run, or a dpplug error, no draws."""
    params = list(entry.cls.schema)
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
    @hypothesis.given(
        st.sampled_from(params) if params else st.none(),
        anything,
        st.lists(st.one_of(st.integers(-(2**65), 2**65), st.floats()), max_size=4),
    )
    def search(param: Param | None, value: object, counts: list[object]) -> None:
        source = SeededSource(settings.seed)
        if param is not None:
            try:
                entry.create(**{**case, param.name: value})
            except DpplugError:
                pass
            except Exception as exc:
                raise _Violation(f"{param.name}={value!r}: raised {type(exc).__name__}") from exc
        run, low, high = _data_entry(mechanism)
        if all(isinstance(c, int) and low <= c <= high for c in counts):
            run(np.array(counts, dtype=np.int64), source)
        else:
            _expect_rejection(f"{run.__name__}({counts!r})", lambda: run(counts, source), source)

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
        f"{tried} boundary parameter values, bad counts and {settings.examples} generated inputs "
        "per case rejected with dpplug errors before any draw",
    )
