"""The set-union-selector kind (:mod:`.base`) and the rigorous bounds of thresholded discrete
Gaussian noise its weighted mechanisms are calibrated with (:mod:`.thresholded_gaussian`)."""

from dpplug.kinds.set_union_selector.base import (
    SET_UNION_SELECTOR,
    SetUnionSelector,
    UnitSets,
    canonical_labels,
    register_set_union_selectors,
    unit_sets,
)

__all__ = [
    "SET_UNION_SELECTOR",
    "SetUnionSelector",
    "UnitSets",
    "canonical_labels",
    "register_set_union_selectors",
    "unit_sets",
]
