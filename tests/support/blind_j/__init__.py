"""Broken plugins a tenth red team wrote blind to the conformance suite's code, in about 50
minutes against ddc74a7 (23 flaws over six kinds, each confirmed by an independent exact or
rigorous computation; 19 were caught on first contact). Three of the four it missed are kept
in :data:`ZOO` with the contract that must fail and words its diagnosis must contain
(test_blind_zoo.py): two sorted histograms whose post-processing reads the true counts (the
coupled check compared outputs at the noise-free outcome of a vector request only) and a set
union counting a repeated (unit, label) pair twice (no form repeated a pair); a third sorted
histogram, cutting its release to the true number of labels, was caught by the audit alone and
now fails the exact check too. The fourth miss, DP-SIPS whose ``pipeline_rounds`` read a
parameter the user left out, is a test of the PipelineDP adapter now
(tests/adapters/test_set_union_routes.py): the adapter lays rounds out from the complete
parameters. :data:`CONTROLS` are honest variations that must pass. Each class docstring states
its flaw."""

from __future__ import annotations

import dpplug

from support.blind_j import mechanisms as m
from support.kind_hooks import kind_hooks

#: Each caught plugin, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    m.PavaTrueWeights: ("exact-privacy", "likelihood ratio"),
    m.NoiseFloor: ("exact-privacy", "likelihood ratio"),
    m.TrimToLabels: ("exact-privacy", "likelihood ratio"),
    m.DupPairs: ("hygiene", "duplicated pairs"),
}

#: Honest variations, each with the contract most likely to refuse it.
CONTROLS: dict[type[dpplug.Mechanism], str] = {
    m.RepeatPadded: "exact-privacy",
}

(
    register_samplers,
    register_partition_selectors,
    register_histogram_releasers,
    register_anonymized_histogram_releasers,
    register_query_releasers,
    register_set_union_selectors,
) = kind_hooks((*ZOO, *CONTROLS))
