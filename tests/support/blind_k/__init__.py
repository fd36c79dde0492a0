"""Broken plugins an eleventh red team wrote blind to the conformance suite's code, in about
80 minutes against 3e7cace (20 flaws over six kinds, each confirmed by an independent exact or
rigorous computation; 15 were caught on first contact). The five it missed are kept in
:data:`ZOO` with the contract that must fail and words its diagnosis must contain
(test_blind_zoo.py): a dense histogram whose noise path changes past 4096 labels (the exact
one-among-many check ran on universes of 128 labels only); one that lays its counts out in
the labels' text order (accuracy was read on the first labels only); PrivHist whose
HIGHPRIVACY boundaries read the true large counts (adaptive releases were compared on small
histograms only); a query session answering a complement as n·W minus the earlier answer (no
workload held a complement, nor data of fewer than n rows with two queries); and a policy
set union whose grid follows the largest unit present (the large data always held a unit of
Δ₀ labels). :data:`CONTROLS` are honest variations that must pass. Each class docstring
states its flaw."""

from __future__ import annotations

import dpplug

from support.blind_k import mechanisms as m
from support.kind_hooks import kind_hooks

#: Each caught plugin, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    m.ShiftNoise: ("exact-privacy", "4173 labels"),
    m.SortedLabels: ("hygiene", "its own label's"),
    m.PrivhistBoundaries: ("exact-privacy", "counts up to 5000"),
    m.Complement: ("sampling-law", "the total of the answers"),
    m.DataGrid: ("exact-privacy", "cut to at most"),
}

#: Honest variations, each with the contract most likely to refuse it.
CONTROLS: dict[type[dpplug.Mechanism], str] = {
    m.PerBin: "hygiene",
    m.CounterTotals: "exact-privacy",
}

(
    register_samplers,
    register_partition_selectors,
    register_histogram_releasers,
    register_anonymized_histogram_releasers,
    register_query_releasers,
    register_set_union_selectors,
) = kind_hooks((*ZOO, *CONTROLS))
