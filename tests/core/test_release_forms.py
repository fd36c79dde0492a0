"""``Kind.release_form``: what a kind's ``apply`` returns, declared before any release so that
frameworks can type it (OpenDP's ``TO``; docs/opendp.md). Checked against real releases of every
built-in sampler and partition selector, and a selector whose release contradicts its
declaration is a plugin fault."""

from __future__ import annotations

from typing import Any

import pytest

import dpplug
import dpplug.kinds
from dpplug.kind import ReleaseForm
from dpplug.plugins.partition.truncated_geometric_thresholding import (
    TruncatedGeometricThresholding,
)

COUNTS = {"fig": 1, "pear": 9}


def entries(kind: Any) -> list[Any]:
    return dpplug.registry().entries(kind)


def case(entry: Any) -> dict[str, Any]:
    return dict(entry.cls.conformance_cases[0])


@pytest.mark.parametrize("entry", entries(dpplug.kinds.SAMPLER), ids=lambda e: e.name)
def test_a_sampler_releases_one_int64_count(entry: Any) -> None:
    sampler = entry.create(**case(entry))
    assert sampler.kind.release_form(sampler) is ReleaseForm.COUNT
    noisy = sampler.kind.apply(sampler, 1, dpplug.SeededSource(3))
    assert type(noisy) is int and -(1 << 63) <= noisy < 1 << 63


@pytest.mark.parametrize("entry", entries(dpplug.kinds.PARTITION_SELECTOR), ids=lambda e: e.name)
def test_a_selector_releases_what_it_declares(entry: Any) -> None:
    selector = entry.create(**case(entry))
    counts = {"apple": selector.saturation, **COUNTS}  # kept with probability π(saturation) = 1
    released = selector.kind.apply(selector, counts, dpplug.SeededSource(4))
    form = selector.kind.release_form(selector)
    if selector.releases_counts:
        assert form is ReleaseForm.LABEL_COUNTS
        assert isinstance(released, dict) and list(released) == sorted(released)
        assert all(type(v) is int for v in released.values())
    else:
        assert form is ReleaseForm.LABELS
        assert isinstance(released, list) and released == sorted(released)
    assert selector.keep_probability(selector.saturation) == 1 and "apple" in released


def test_a_selector_contradicting_its_declaration_is_a_plugin_fault() -> None:
    """The thresholding selector's own code, declared as keep-only: its noisy counts would
    reach a framework typed for labels, so ``apply`` refuses the release."""

    class Misdeclared(TruncatedGeometricThresholding):
        releases_counts = False

    selector = Misdeclared(**TruncatedGeometricThresholding.conformance_cases[0])
    assert selector.kind.release_form(selector) is ReleaseForm.LABELS
    with pytest.raises(dpplug.PluginFault, match="releases_counts = False"):
        selector.kind.apply(selector, COUNTS, dpplug.SeededSource(5))
