"""Broken plugins a red team wrote blind to the conformance suite's code (its first batch: 25
flaws of every kind, each confirmed by an independent exact or large-sample computation; all
but four were certified "exactly verified" when they were written). Each must now fail the
contract named in :data:`ZOO`, with a diagnosis holding the words given
(tests/conformance/test_blind_zoo.py). Each class docstring states its flaw."""

from __future__ import annotations

import dpplug

from support.blind_a import anonymized, histograms, queries, samplers, selectors
from support.kind_hooks import kind_hooks

#: Each broken plugin, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    samplers.AntitheticPairs: ("sampling-law", "(independent pairs)"),
    samplers.UnderstatedStd: ("accuracy", "noise_std against the standard deviation"),
    samplers.RatioRoundedNearest: ("declaration", "spends more than it was granted"),
    samplers.FloatSumLaplace: ("sampling-law", "the 9007199254740993 elements of one call"),
    samplers.CoarseBulk: ("exact-privacy", "its draw explored exactly with the others fixed"),
    selectors.CycledDecider: ("sampling-law", "decider(): the 12 elements of one call"),
    selectors.PublicThresholdEverywhere: ("exact-privacy", "with public_threshold="),
    selectors.NarrowIndex: ("exact-privacy", "replayed at unit counts up to 2^62"),
    selectors.MemoryOrder: ("hygiene", "as a Fortran-ordered array gave other outputs"),
    selectors.RenoisedCounts: ("sampling-law", "samples do not follow the declared law"),
    histograms.ConsistentTotal: ("exact-privacy", "(one row replaced, added or removed)"),
    histograms.ReusedOutputBuffer: ("hygiene", "the same seeded source gave different outputs"),
    histograms.PrescanRows: ("hygiene", "passed as a generator"),
    histograms.PerBinAccuracyAttached: ("hygiene", "carrying the mechanism's own declarations"),
    histograms.ChunkTail: ("hygiene", "draws a raw 63-bit integer outside its served draws"),
    anonymized.RunLengthNoise: ("exact-privacy", "outside its served draws"),
    anonymized.ExactSupport: ("hygiene", "carrying the mechanism's declarations"),
    anonymized.KeepsLargestCounts: ("accuracy", "the largest error exceeds"),
    anonymized.FreeSmoothing: ("declaration", "spends more than it was granted"),
    anonymized.NarrowPadding: ("accuracy", "the largest error exceeds"),
    queries.SharedIndex: ("exact-privacy", "it does not do what it declares"),
    queries.NumpyDot: ("accuracy", "the first query's error exceeds"),
    queries.TextLabels: ("exact-privacy", "it does not do what it declares"),
    queries.RedrawnHash: ("hygiene", "its public part does not depend on the data"),
    queries.AbsentLabelsExact: ("hygiene", "drew nothing from the RandomSource"),
}


(
    register_samplers,
    register_partition_selectors,
    register_histogram_releasers,
    register_anonymized_histogram_releasers,
    register_query_releasers,
    register_set_union_selectors,
) = kind_hooks(ZOO)
