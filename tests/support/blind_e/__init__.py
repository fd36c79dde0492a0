"""Broken plugins a fifth red team wrote blind to the conformance suite's code (21 flaws over the
six kinds, each confirmed by an independent exact, rigorous or real-pipeline computation; 13 were
caught when they were written, at 2711776). The ones the suite now catches are in :data:`ZOO`,
each with the contract that must fail and words its diagnosis must contain
(test_blind_zoo.py). :data:`CONTROLS` are the batch's honest variations that the suite once
refused, each with the contract it must now pass. Each class docstring states its flaw or its
variation."""

from __future__ import annotations

import dpplug

from support.blind_e import (
    anonymized,
    controls,
    histograms,
    queries,
    samplers,
    selectors,
    set_union,
)
from support.kind_hooks import kind_hooks

#: Each caught plugin, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    samplers.SharedTableGeoSample: ("exact-privacy", ""),
    samplers.OsFastPathLaplace: ("sampling-law", "with the default source"),
    samplers.UntruncatedDeltaTSGD: ("exact-privacy", ""),
    samplers.LargeNExponentGeoSample: ("exact-privacy", "likelihood ratio"),
    selectors.LeakyDroppedCounts: ("hygiene", ""),
    selectors.PublicTrueCount: ("audit", "a public partition kept"),
    selectors.ShiftedReleasedCounts: ("accuracy", ""),
    selectors.ContributionsClaim: ("exact-privacy", ""),
    histograms.FewRowsShortcut: ("exact-privacy", ""),
    histograms.PureOnlyBasic: ("exact-privacy", "sampler_options=delta=1e-6"),
    histograms.DataSeededDefault: ("sampling-law", "with the default source"),
    histograms.ZeroCountDelta: ("exact-privacy", ""),
    anonymized.IntRowsAsCounts: ("hygiene", "small integer labels"),
    anonymized.RoundingDiscount: ("accuracy", ""),
    anonymized.SharedReleaseAccuracy: ("hygiene", ""),
    queries.SingleAnswerOffByOne: ("bad-input", ""),
    queries.EdgeHalfNoise: ("exact-privacy", ""),
    queries.FloatStepBudget: ("exact-privacy", ""),
    queries.ReproduciblePipelineProjection: ("hygiene", "its central plan"),
    set_union.StickyReleased: ("exact-privacy", ""),
    set_union.GroupbyPairs: ("hygiene", "pairs"),
}

#: Honest variations the suite once refused (a false alarm each), and the contract each passes.
CONTROLS: dict[type[dpplug.Mechanism], str] = {
    controls.MirroredGeoSample: "exact-privacy",
    controls.EligibleDrawsThresholding: "hygiene",
}


(
    register_samplers,
    register_partition_selectors,
    register_histogram_releasers,
    register_anonymized_histogram_releasers,
    register_query_releasers,
    register_set_union_selectors,
) = kind_hooks([*ZOO, *CONTROLS])
