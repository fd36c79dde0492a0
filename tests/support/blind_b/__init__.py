"""Broken plugins a second red team wrote blind to the conformance suite's code (25 flaws, five
per kind, each confirmed by an independent exact or large-sample computation; 11 were caught
when they were written). The ones the suite now catches are in :data:`ZOO`, each with the
contract that must fail and words its diagnosis must contain (test_blind_zoo.py); the classes of
the ones still missed are kept beside them, unregistered. Each class docstring states its flaw."""

from __future__ import annotations

import dpplug

from support.blind_b import anonymized, histograms, queries, samplers, selectors
from support.kind_hooks import kind_hooks

#: Each caught plugin, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    samplers.SearchsortedGeoSample: ("exact-privacy", "it does not do what it declares: sample()"),
    samplers.SharedTableGeoSample: ("exact-privacy", "it does not do what it declares: sample()"),
    samplers.FloatAccuracyLaplace: ("accuracy", "over every count has probability"),
    samplers.SensitivityTwoGeoSample: ("exact-privacy", "for counts 0 and 2 exceeds"),
    samplers.TailCutGeoSample: ("exact-privacy", "where the output is far in a tail"),
    selectors.SaturationShortcutDecider: ("exact-privacy", "a decider's decision replayed"),
    selectors.IdCachedSelection: ("exact-privacy", "it does not do what it declares: select()"),
    selectors.FloatKeptFrom: ("accuracy", "units dropped] has probability"),
    selectors.BulkUnsort: ("sampling-law", "mixed values: samples do not follow"),
    selectors.BoundedRelabel: ("exact-privacy", "replace_one=False, but the guarantee"),
    histograms.ClampToRows: ("exact-privacy", "(one row replaced, added or removed)"),
    histograms.OutputGuarantee: ("hygiene", "carrying the mechanism's own declaration"),
    histograms.UnionOverRows: ("hygiene", "exceeded the simultaneous a"),
    histograms.BincountFastPath: ("hygiene", "over range:1:"),
    histograms.EmptyChunkCache: ("hygiene", "must not be served again"),
    anonymized.TotalScope: ("accuracy", "the released total's error exceeds"),
    anonymized.PaddedCache: ("hygiene", "depends on the instance's history"),
    anonymized.ChunkedPadding: ("exact-privacy", "one count apart: noise ratio"),
    anonymized.DataLengthDefault: ("exact-privacy", "likelihood ratio ∞"),
    queries.BatchUncounted: ("bad-input", "a query past the k-th: was accepted"),
    queries.UnlockedAnswer: ("hygiene", "sessions shared by 8 threads"),
    queries.CountsCache: ("exact-privacy", "it does not do what it declares"),
    queries.UnionOffByOne: ("accuracy", "the largest error exceeds"),
    queries.MinWeightScale: ("exact-privacy", "it does not do what it declares"),
}


(
    register_samplers,
    register_partition_selectors,
    register_histogram_releasers,
    register_anonymized_histogram_releasers,
    register_query_releasers,
    register_set_union_selectors,
) = kind_hooks(ZOO)
