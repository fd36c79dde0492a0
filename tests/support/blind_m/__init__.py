"""Broken plugins a thirteenth red team wrote blind to the conformance suite's code against
6a75858 (25 flaws over six kinds, each confirmed by an independent exact or rigorous
computation; 20 were caught on first contact). The five it missed are kept in :data:`ZOO` with
the contract that must fail and words its diagnosis must contain (test_blind_zoo.py): a sampler
whose accuracy rounds β to two digits (the exact grid held only short βs), one noising all-int32
batches in int32 (the large call always held a count past 2^31), a histogram whose counts are
uint8 when the data's largest count fits (no check read the dtype), one noising only the low 16
bits of counts past n = 2^16 (no count crossed 2^16), and a session counting a batch's repeated
queries once (no batch repeated a query past k). :data:`CONTROLS` are honest variations that
must pass. Each class docstring states its flaw."""

from __future__ import annotations

import dpplug

from support.blind_m import mechanisms as m
from support.kind_hooks import kind_hooks

#: Each caught plugin, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    m.BetaTwoDigits: ("accuracy", "149/10000"),
    m.Int32Batches: ("accuracy", "copies of one count"),
    m.DtypeByMax: ("hygiene", "not an int64 array"),
    m.Limbs: ("exact-privacy", "at count 65535 and at 65536"),
    m.DupesOnce: ("hygiene", "copies of one query"),
}

#: Honest variations, each with the contract most likely to refuse it.
CONTROLS: dict[type[dpplug.Mechanism], str] = {
    m.OneCall: "accuracy",
}

(
    register_samplers,
    register_partition_selectors,
    register_histogram_releasers,
    register_anonymized_histogram_releasers,
    register_query_releasers,
    register_set_union_selectors,
) = kind_hooks((*ZOO, *CONTROLS))
