"""The exact law of a compact histogram release through certified components
(dpplug.kinds.histogram_releaser.compact_law; Balcer & Vadhan, full version Alg. 8.2 / Thm 8.3;
docs/conformance.md#compact-histograms). The zoo (tests/support/zoo.py) keeps releasers
whose components are subtly wrong, which the exact-privacy contract must name."""

from __future__ import annotations

import warnings
from typing import Any

from gmpy2 import mpq

import dpplug
from dpplug.conformance.structures.compact_field import component_problems
from dpplug.kinds.histogram_releaser.release_law import release_law


def create(name: str, **params: object) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpplug.AccuracyWarning)
        return dpplug.create(name, **params)


def test_compact_decoded_law_is_the_sampler_on_the_data_and_the_class_sizes_elsewhere() -> None:
    """The law of the counts a compact release decodes at its first three labels
    (dpplug.kinds.histogram_releaser.compact_law): the sampler's pmf at the nonempty bin, |S_v|/P at
    the others, independent; and the real release passes its component checks."""
    releaser = create(
        "compact-histogram", universe="range:0:3", n=2, epsilon=2, sampler="geosample"
    )
    law = release_law(releaser, {1: 2})
    assert sum(law.values()) == 1
    pmf, modulus = releaser.sampler.pmf(2), releaser.modulus
    for released, p in law.items():
        (_, v0), (_, v1), (_, v2) = released
        sizes = [releaser.law.interval(v)[1] for v in (v0, v2)]
        assert p == pmf[v1] * mpq(sizes[0], modulus) * mpq(sizes[1], modulus)
    assert component_problems(releaser, releaser.exact_structure(), {1: 2}) == []
