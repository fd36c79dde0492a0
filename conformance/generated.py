"""Cases the suite derives from a plugin's schema, besides the ones its author declared.

An author's cases show what the author thought of; a flaw that only appears with ℓ₀ > 1, a
pre-threshold, bounded DP or another sampler passes them. From each declared case, one parameter
at a time is moved to values the schema allows: both booleans, the smallest integers, a ladder of
rationals within range (ε from 1/1000 to 64), for text parameters (a releaser's ``sampler``) the
name of every built-in mechanism and of every other mechanism of the plugin's own distribution.
Candidates that the plugin refuses, or that are too large for the exact checks
(:meth:`~dpplug.conformance.probes.base.Probe.small`), are dropped, and at most
:data:`MAX_GENERATED` are kept, chosen by the run's seed.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from gmpy2 import mpq

from dpplug.errors import DpplugError
from dpplug.params import Param
from dpplug.plugin_registry import Entry

#: The most generated cases per plugin.
MAX_GENERATED = 12
#: Rationals tried for rational parameters (those the parameter's range allows).
_RATIONALS = tuple(mpq(v) for v in ("1/1000", "1/20", "1/4", "1/2", "1", "2", "8", "64"))


def _values(param: Param, entry: Entry) -> list[object]:
    """Values of *param* worth trying, all inside its declared range."""
    if param.type == "boolean":
        return [False, True]
    if param.type == "text":  # names of mechanisms (a releaser's sampler): trusted ones only,
        # the built-ins and the plugin's own, so no other plugin's flaw becomes this one's
        trusted = {"dpplug", entry.source.distribution}
        return [
            other.name
            for other in entry.registry or ()
            if other.name != entry.name and other.source.distribution in trusted
        ]
    if param.type == "integer":
        low = int(param.low) if param.low is not None else 0
        values: list[object] = [low, low + 1, low + 2]
        if param.high is not None and param.high <= low + 16:
            values.append(int(param.high))
        return [v for v in values if param.high is None or v <= param.high]
    if param.type == "rational":
        values = [v for v in _RATIONALS if _inside(param, v)]
        bounds = (param.low, param.high)
        values += [bound for bound in bounds if bound is not None and _inside(param, bound)]
        return values
    return []  # universes and options: the declared ones


def _inside(param: Param, value: Any) -> bool:
    try:
        param.coerce(value)
    except DpplugError:
        return False
    return True


def candidates(entry: Entry) -> Iterator[dict[str, Any]]:
    """Each declared case with one parameter moved to each of its values, in schema order."""
    for case in entry.cls.conformance_cases:
        for param in entry.cls.schema:
            for value in _values(param, entry):
                changed = {**case, param.name: value}
                if changed != dict(case):
                    yield changed


def generated_cases(entry: Entry, seed: int) -> Iterator[tuple[dict[str, Any], Any]]:
    """(parameters, instance) for the generated cases the plugin accepts, in a seeded order,
    each built only when asked for; the caller drops those too large for its checks and stops at
    :data:`MAX_GENERATED`."""
    declared = [dict(case) for case in entry.cls.conformance_cases]
    unique: list[dict[str, Any]] = []
    for params in candidates(entry):
        if params not in declared and params not in unique:
            unique.append(params)
    random.Random(seed).shuffle(unique)
    for params in unique:
        try:
            yield params, entry.create(**params)
        except DpplugError:
            continue
