"""Broken plugins a twelfth red team wrote blind to the conformance suite's code against
1af2598 (each flaw confirmed by an independent exact or rigorous computation). The one it
missed on first contact is kept in :data:`ZOO` with the contract that must fail and words its
diagnosis must contain (test_blind_zoo.py): a dense histogram that noises its bins in chunks
of 4096 and drops a non-empty bin at the start of a later chunk (the placement check's labels
missed the chunk edges; it now puts data on both sides of 2^6, 2^8, 2^10, 2^12 and 2^16).
:data:`CONTROLS` are honest variations that must pass. Each class docstring states its flaw."""

from __future__ import annotations

import dpplug

from support.blind_l import mechanisms as m
from support.kind_hooks import kind_hooks

#: Each caught plugin, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    m.ChunkBoundary: ("hygiene", "its own label's"),
}

#: Honest variations, each with the contract most likely to refuse it.
CONTROLS: dict[type[dpplug.Mechanism], str] = {
    m.WholeVector: "hygiene",
}

(
    register_samplers,
    register_partition_selectors,
    register_histogram_releasers,
    register_anonymized_histogram_releasers,
    register_query_releasers,
    register_set_union_selectors,
) = kind_hooks((*ZOO, *CONTROLS))
