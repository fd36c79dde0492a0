"""Every kind's surface inventory (dpplug.surfaces) names every public attribute of its base
class: as a surface the conformance suite checks, or as one it does not, with the reason. A kind
that grows an entry point no contract reaches fails here."""

from __future__ import annotations

import inspect

import pytest

from dpplug.kind import Kind
from dpplug.kinds import KINDS
from dpplug.surfaces import Dimension


def _public(cls: type) -> set[str]:
    return {
        name
        for klass in inspect.getmro(cls)
        if klass is not object
        for name in vars(klass)
        if not name.startswith("_")
    }


@pytest.mark.parametrize("kind", KINDS, ids=[kind.name for kind in KINDS])
def test_every_public_attribute_is_a_surface_or_says_why_not(kind: Kind) -> None:
    surfaces = {surface.name for surface in kind.surfaces}
    unnamed = _public(kind.base) - surfaces - set(kind.not_surfaces)
    assert not unnamed, f"{kind.name} exposes {sorted(unnamed)}, which its inventory omits"
    assert not surfaces & set(kind.not_surfaces), "a name is a surface or not, not both"


@pytest.mark.parametrize("kind", KINDS, ids=[kind.name for kind in KINDS])
def test_every_surface_has_dimensions_and_the_kind_every_declared_kind(kind: Kind) -> None:
    for surface in kind.surfaces:
        assert surface.dimensions, surface.name
        assert len(set(surface.dimensions)) == len(surface.dimensions), surface.name
    dimensions = {d for s in kind.surfaces for d in s.dimensions}
    assert {Dimension.BUDGET, Dimension.NUMBERS, Dimension.RELATIONS} <= dimensions
