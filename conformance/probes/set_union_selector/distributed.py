"""The route distributed runs take (PipelineDP on Beam, Spark or locally), composed in one
process so its law can be enumerated like ``select``'s: each unit bounded once
(:meth:`~dpplug.kinds.set_union_selector.SetUnionSelector.bound`), then, round after round, each
unit's labels not yet released weighted by
:meth:`~dpplug.kinds.set_union_selector.SetUnionSelector.round_weight`, the weights summed per
label, and each label decided by
:meth:`~dpplug.kinds.set_union_selector.SetUnionSelector.round_keep` (the engines' stages, in the
canonical order of the labels: the decisions are independent). A sequential selector (a policy)
takes every unit in one worker, through ``select``, so it has no other route."""

from __future__ import annotations

from typing import Any

from dpplug.kinds.set_union_selector import SetUnionSelector, canonical_labels, unit_sets
from dpplug.randomness import RandomSource


def has_rounds(selector: SetUnionSelector) -> bool:
    """Whether distributed runs of *selector* sum weights per label (not a policy)."""
    return not type(selector).sequential


def distributed_select(selector: SetUnionSelector, data: object, source: RandomSource) -> list[Any]:
    """The labels the distributed route releases for *data* (see the module docstring)."""
    sets = [selector.bound(labels, source) for _, labels in unit_sets(data)]
    released: set[Any] = set()
    for r in range(type(selector).pipeline_rounds(selector.params)):
        totals: dict[Any, int] = {}
        for labels in sets:
            remaining = [label for label in labels if label not in released]
            if remaining:
                weight = selector.round_weight(r, len(remaining))
                for label in remaining:
                    totals[label] = totals.get(label, 0) + weight
        for label in canonical_labels(totals):
            if selector.round_keep(r, totals[label], source):
                released.add(label)
    return canonical_labels(released)
