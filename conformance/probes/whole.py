"""The whole release (:attr:`~dpplug.surfaces.Dimension.WHOLE`): every field of what a call
returns is either covered by the law the exact checks compare or fixed by the kind's contract.

A release of a kind whose outputs are dpplug's own frozen dataclasses (histograms, anonymized
histograms, selections, projections) must be exactly that type, not a subclass (which may carry
data the law does not cover, or answer its methods from the data); it may hold no attribute
besides the dataclass's fields and its cached properties; and the fields the contract fixes are
the mechanism's own: its guarantee, its accuracy at the β the release states, its text, its
universe, its parameters. Every other field is either covered by the law (the probe names them)
or must be the same in releases of other data: a field nobody named is compared too, so a field
a release carries for its own reasons cannot leak the data unseen.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any

import numpy as np

from dpplug.mechanism import Mechanism


def whole_problems(
    mechanism: Mechanism,
    release: object,
    types: tuple[type, ...],
    fixed: dict[str, Any],
    law: frozenset[str],
    reference: object | None,
) -> list[str]:
    """What of *release* is neither the kind's type, its fields, nor the *fixed* values; its
    fields outside *law* (those the law covers, and what is derived from them) and *fixed* must
    equal *reference*'s, a release of other data (None for the first release compared)."""
    if type(release) not in types:
        allowed = " or ".join(t.__name__ for t in types)
        return [
            f"returned a {type(release).__name__}, not exactly a {allowed}: a release is the "
            "kind's own type, which carries nothing the law does not cover"
        ]
    assert dataclasses.is_dataclass(release)
    cached = {
        name
        for klass in inspect.getmro(type(release))
        for name, value in vars(klass).items()
        if isinstance(value, functools.cached_property)
    }
    allowed_names = {field.name for field in dataclasses.fields(release)} | cached
    extra = sorted(set(vars(release)) - allowed_names)
    if extra:
        return [f"the release carries attributes besides its fields: {extra}"]
    for name, expected in fixed.items():
        if getattr(release, name) != expected:
            return [
                f"its {name} is {getattr(release, name)!r}, but the mechanism's is {expected!r}"
            ]
    free = allowed_names - law - fixed.keys() - cached - {"accuracy"}
    if reference is not None and type(reference) is type(release):
        for name in sorted(free):
            if not _same(getattr(release, name), getattr(reference, name)):
                return [
                    f"its {name} differs between releases of different data ("
                    f"{getattr(reference, name)!r:.60} and {getattr(release, name)!r:.60}): "
                    "a field the law does not cover must not depend on the data"
                ]
    accuracy = getattr(release, "accuracy", None)
    if accuracy is not None:
        declared = mechanism.accuracy(accuracy.per_query.beta)
        if accuracy != declared:
            return [
                f"the accuracy it carries is not the mechanism's at its β = "
                f"{accuracy.per_query.beta}: {accuracy.as_dict()} against {declared.as_dict()}"
            ]
    return []


def _same(a: object, b: object) -> bool:
    try:
        return bool(a == b)
    except ValueError:  # arrays: elementwise
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
