"""Contract 2, bad input: every invalid parameter and every invalid piece of data raises a dpplug
error, and nothing is drawn from the random source first (a bad call releases nothing).

Three parts: the boundary values of every declared parameter, as its type lists them
(:meth:`~dpplug.param_types.ParamType.bad_values`: ≤ 0, NaN, ±inf, wrong type, out of range,
huge; malformed names, universes and option lists); the bad data each kind's probe lists
(negative or out-of-range counts, non-integers, wrong types; for histogram releasers also labels
outside the universe, more than n rows, and a string where rows are expected); then a
property-based search (hypothesis, derandomised from the run's seed) over arbitrary parameter
values and the data the probe's :meth:`~dpplug.conformance.probes.base.Probe.data_space`
generates.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import hypothesis
from hypothesis import strategies as st

from dpplug.conformance.probes import probes
from dpplug.conformance.probes.base import Probe
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import DpplugError
from dpplug.params import Param
from dpplug.plugin_registry import Entry
from dpplug.randomness import SeededSource

NAME = "bad-input"


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


def _property_search(entry: Entry, probe: Probe, settings: Settings) -> None:
    """Arbitrary parameter values and data: valid and run, or a dpplug error, no draws."""
    params = list(entry.cls.schema)
    case = probe.params
    space = probe.data_space()
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
        for probe in probes(entry):
            case = probe.params
            source = SeededSource(settings.seed)
            for param in entry.cls.schema:
                for value in param.bad_values():
                    tried += 1
                    call = _changed(entry, case, {param.name: value})
                    _expect_rejection(f"{param.name}={value!r}", call, source)
            call = _changed(entry, case, {"no_such_parameter": 1})
            _expect_rejection("an unknown parameter", call, source)
            for what, bad_call in probe.bad_data(source):
                _expect_rejection(what, bad_call, source)
            _property_search(entry, probe, settings)
    except _Violation as violation:
        return ContractResult(NAME, Outcome.FAILED, str(violation))
    except hypothesis.errors.HypothesisException as exc:
        return ContractResult(NAME, Outcome.FAILED, f"property search: {exc}")
    return ContractResult(
        NAME,
        Outcome.PASSED,
        f"{tried} boundary parameter values, bad data and {settings.examples} generated inputs "
        "per case rejected with dpplug errors before any draw",
        power="any tried",
    )
