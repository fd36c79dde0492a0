"""Broken plugins a ninth red team wrote blind to the conformance suite's code, in 35 minutes
against 3c22260 and 8fdf3be (12 flaws over five kinds, each confirmed by an independent exact or
numerical computation; 10 were caught on first contact). The two it missed, a sampler's
``probability_at_most`` closed form that the histogram error bounds read and a selector keeping
public partitions only when they hold a unit, are caught now and kept in :data:`ZOO` with the
contract that must fail and words its diagnosis must contain (test_blind_zoo.py);
:data:`CONTROLS` are honest variations that must pass. Each class docstring states its flaw."""

from __future__ import annotations

import dpplug

from support.blind_i import mechanisms as m
from support.kind_hooks import kind_hooks

#: Each caught plugin, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    m.ClosedCdf: ("exact-privacy", "probability_at_most"),
    m.PublicEmpty: ("audit", "a public partition kept"),
}

#: Honest variations, each with the contract most likely to refuse it.
CONTROLS: dict[type[dpplug.Mechanism], str] = {
    m.Linear: "audit",
}

(
    register_samplers,
    register_partition_selectors,
    register_histogram_releasers,
    register_anonymized_histogram_releasers,
    register_query_releasers,
    register_set_union_selectors,
) = kind_hooks((*ZOO, *CONTROLS))
