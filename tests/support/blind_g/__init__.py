"""Broken plugins a seventh red team wrote blind to the conformance suite's code, against the
code that had learnt from the six batches before it (24 flaws over the six kinds, each confirmed
by an independent exact or Clopper–Pearson computation; 20 were caught on first contact, at
b41fd46; 5 of its 7 honest controls were exactly verified, one refused by a draw-for-draw batch
check since relaxed, one outside the kind's model). The ones the suite now catches are in
:data:`ZOO`, each with the contract that must fail and words its diagnosis must contain
(test_blind_zoo.py); :data:`CONTROLS` are honest variations that must pass. Each class docstring
states its flaw."""

from __future__ import annotations

import dpplug

from support.blind_g import anonymized, histograms, queries, samplers, selectors, set_union
from support.kind_hooks import kind_hooks

#: Each caught plugin, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    samplers.SignClampLaplace: ("sampling-law", "do not follow the declared law"),
    samplers.TelescopingLaplace: ("sampling-law", "(independent pairs)"),
    samplers.ApproxKTruncatedGeometric: ("exact-privacy", "hockey-stick divergence"),
    samplers.BulkTelescopingLaplace: ("sampling-law", "(independent pairs)"),
    selectors.LinearOverflow: ("exact-privacy", "up to 2^62"),
    selectors.OneSidedRecurrence: ("exact-privacy", "exceeds the per-partition δ"),
    selectors.FixedSeedDecider: ("sampling-law", "two deciders made with the source left out"),
    selectors.HeavyShortNoise: ("sampling-law", "the 2147483649 elements"),
    histograms.RowsInText: ("hygiene", "its mechanism is"),
    histograms.DeltaOnce: ("exact-privacy", "hockey-stick divergence"),
    histograms.ClampUniverse: ("accuracy", "raised BadData"),
    histograms.EpsilonCeil3: ("declaration", "spends more than it was granted"),
    anonymized.ParamsRecordLabels: ("hygiene", "its params is"),
    anonymized.ThreeDecimalEpsilon: ("exact-privacy", "likelihood ratio"),
    anonymized.CumulativeToMaxCount: ("exact-privacy", "likelihood ratio ∞"),
    queries.DebugAttribute: ("audit", "public attributes"),
    queries.IntegerScale: ("exact-privacy", "hockey-stick divergence"),
    queries.RowsDedupe: ("bad-input", ""),
    queries.PlanWithoutNoise: ("hygiene", "central plan released the same thing twice"),
    set_union.FisherYatesOffByOne: ("exact-privacy", "it does not do what it declares"),
    set_union.UnboundedCandidates: ("exact-privacy", "it does not do what it declares"),
    set_union.ThresholdMinusTwo: ("accuracy", "dropped"),
    set_union.RoundKeepStd: ("exact-privacy", "the distributed route"),
    set_union.BigUnitWindow: ("sampling-law", "bound() of a unit of 257 labels"),
}

#: Honest variations, each with a contract that once refused it or is most likely to.
CONTROLS: dict[type[dpplug.Mechanism], str] = {
    samplers.MemoGeoSample: "exact-privacy",
    selectors.LinearNoOverflow: "exact-privacy",
    histograms.AddRemoveGeometric: "exact-privacy",
    anonymized.SortedRepeat: "exact-privacy",
    queries.ReverseBatch: "hygiene",  # batch noise drawn in reverse: refused at b41fd46
    set_union.SelectionSampling: "sampling-law",
}

(
    register_samplers,
    register_partition_selectors,
    register_histogram_releasers,
    register_anonymized_histogram_releasers,
    register_query_releasers,
    register_set_union_selectors,
) = kind_hooks((*ZOO, *CONTROLS))
