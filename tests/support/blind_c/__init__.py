"""Broken plugins a third red team wrote blind to the conformance suite's code (18 flaws over
the six kinds, each confirmed by an independent exact or large-sample computation; 11 were
caught when they were written, 17 after the fixes they prompted, all 18 now). They are in
:data:`ZOO`, each with the contract that must fail and words its diagnosis must contain
(test_blind_zoo.py). Each class docstring states its flaw."""

from __future__ import annotations

import dpplug

from support.blind_c import anonymized, histograms, queries, samplers, selectors, setunion
from support.kind_hooks import kind_hooks

#: Each caught plugin, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    samplers.SmallBetaGeoSample: ("accuracy", "fails with probability"),
    samplers.RankedNoiseLaplace: ("sampling-law", "mixed values"),
    samplers.SignMagnitudeLaplace: ("sampling-law", "samples do not follow"),
    selectors.MemoDeciderSelection: ("sampling-law", "decider"),
    selectors.ShiftedPreThreshold: ("exact-privacy", "but output_pmf"),
    selectors.FastKeepLinear: ("exact-privacy", "δ = 1/1000000: select() at 1000 units"),
    histograms.BonferroniStability: ("exact-privacy", "datasets with many non-empty labels"),
    histograms.VectorThresholdStability: ("exact-privacy", "65 labels of 2 rows, and a label"),
    histograms.OptionsGeometricHistogram: ("exact-privacy", "likelihood ratio"),
    anonymized.TrueTotalSorted: ("exact-privacy", "likelihood ratio ∞"),
    anonymized.CappedSorted: ("accuracy", "the largest error exceeds"),
    anonymized.HashedRowsSorted: ("hygiene", "as rows of the labels"),
    queries.RowsNormalised: ("exact-privacy", "it does not do what it declares"),
    queries.SortedBatch: ("sampling-law", "the second answer of the batch"),
    queries.LabelCache: ("exact-privacy", "it does not do what it declares"),
    setunion.DistributedWeightOffByOne: ("exact-privacy", "the distributed route"),
    setunion.PopularBound: ("exact-privacy", "the declared rounds give"),
    setunion.UnitsNeededOneItem: ("accuracy", "units_needed"),
}


(
    register_samplers,
    register_partition_selectors,
    register_histogram_releasers,
    register_anonymized_histogram_releasers,
    register_query_releasers,
    register_set_union_selectors,
) = kind_hooks(ZOO)
