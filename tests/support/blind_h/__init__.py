"""Broken plugins an eighth red team wrote blind to the conformance suite's code, against the code
that had learnt from the seven batches before it (18 flaws over the six kinds, each confirmed by
an independent exact, Clopper–Pearson or deterministic computation; 17 were caught on first
contact, at 9eb93be and 639d5ad; 4 of its 5 honest controls were exactly verified and the fifth, a
dense histogram with GeoSample noise, ran past the time limit on a loaded machine). The ones the
suite now catches are in :data:`ZOO`, each with the contract that must fail and words its
diagnosis must contain (test_blind_zoo.py); :data:`CONTROLS` are honest variations that must pass.
Each class docstring states its flaw."""

from __future__ import annotations

import dpplug

from support.blind_h import mechanisms as m
from support.kind_hooks import kind_hooks

#: Each caught plugin, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    m.TgeoKShort: ("exact-privacy", "hockey-stick divergence"),
    m.GeoAccFloat: ("declaration", "OverflowError"),
    m.GeoAccFloatGuarded: ("accuracy", "(exact)"),
    m.RRBulkExclusive: ("exact-privacy", "it does not do what it declares"),
    m.GeoEpsRoundUp: ("exact-privacy", "likelihood ratio 5/3"),
    m.LinSatFloor: ("exact-privacy", "it does not do what it declares"),
    m.LinL0DeltaOnce: ("exact-privacy", "is below the composition"),
    m.TgtBulkPrefilter: ("hygiene", "drew nothing from its source"),
    m.GeoHistMono: ("exact-privacy", "likelihood ratio ∞"),
    m.GeoHistDenseCache: ("exact-privacy", "likelihood ratio"),
    m.GeoHistSimulTimes: ("accuracy", "the largest error exceeds"),
    m.SortedAscending: ("exact-privacy", "likelihood ratio"),
    m.SortedPavaUp: ("accuracy", "the largest error exceeds"),
    m.IndepClampTop: ("exact-privacy", "it does not do what it declares"),
    m.IndepMedian3: ("sampling-law", "samples do not follow the declared law"),
    m.IndepFixedSeed: ("exact-privacy", "it does not do what it declares"),
    m.PlUnitsShort: ("accuracy", "(exact)"),
    m.PlFirstSeen: ("hygiene", "not in canonical order"),
}

#: Honest variations, each with the contract most likely to refuse it.
CONTROLS: dict[type[dpplug.Mechanism], str] = {
    m.OkLinear: "exact-privacy",
    m.OkSorted: "exact-privacy",
    m.OkIndep: "sampling-law",
    m.OkPolicy: "exact-privacy",
}

(
    register_samplers,
    register_partition_selectors,
    register_histogram_releasers,
    register_anonymized_histogram_releasers,
    register_query_releasers,
    register_set_union_selectors,
) = kind_hooks((*ZOO, *CONTROLS))
