"""The conformance suite on anonymized-histogram releasers: the probe's exact check of
one-request programs (tight for the sorted histogram, a stated skip for PrivHist's adaptive
blocks), its codes, and broken releasers each caught by the contract that names their flaw
(in the fast run, which has the smallest samples)."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import anonymized_zoo
import pytest

import dpplug
from dpplug import Registry
from dpplug.conformance.probes.anonymized_histogram_releaser import (
    CHAIN,
    AnonymizedProbe,
    code,
    neighbours,
)
from dpplug.conformance.results import Outcome
from dpplug.conformance.runner import CONTRACTS, run_contract
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported

ZOO = Registry.load([anonymized_zoo], entry_points=False)
FAST = Settings(mode="fast")


def test_the_chain_is_a_chain_of_neighbours() -> None:
    for a, b in itertools.pairwise(CHAIN):
        assert b in neighbours(a)


def test_the_exact_check_of_the_sorted_histogram_is_tight() -> None:
    mechanism = dpplug.create("sorted-histogram", epsilon=1, length=6)
    check = AnonymizedProbe(mechanism, {}).exact_privacy(FAST)
    assert check.failures == ()
    bound = float(mechanism.guarantee.exp_epsilon)
    assert f"noise ratio {bound:.6g} ≤ e^ε = {bound:.6g}" in check.summary


def test_privhist_is_left_to_the_audit_with_a_reason() -> None:
    probe = AnonymizedProbe(dpplug.create("privhist", epsilon=1), {})
    with pytest.raises(NotSupported, match="second noise request"):
        probe.exact_privacy(FAST)


@pytest.mark.parametrize(
    ("params", "small"),
    [
        ({"epsilon": 1, "length": 6}, True),
        ({"epsilon": 1, "length": 5}, False),  # refuses the 6 labels of the widest histogram
        ({"epsilon": Fraction(1, 20), "length": 6}, False),  # e^ε below 5/4
    ],
)
def test_generated_cases_are_kept_when_cheap_and_taking_the_checks_histograms(
    params: dict[str, Any], small: bool
) -> None:
    probe = AnonymizedProbe(dpplug.create("sorted-histogram", **params), params)
    assert probe.small(FAST) is small


def test_the_implementation_check_holds_the_release_to_its_program() -> None:
    probe = AnonymizedProbe(dpplug.create("sorted-histogram", epsilon=1, length=6), {})
    check = probe.implementation_check(FAST)
    assert check.failures == ()
    assert "release() is its program's output on 8 histograms" in check.summary


def test_codes_separate_totals_and_small_shapes() -> None:
    mechanism = dpplug.create("privhist", epsilon=2)
    a = mechanism.histogram({1: 2, 3: 1}, 5)
    b = mechanism.histogram({1: 2, 5: 1}, 5)
    c = mechanism.histogram({1: 2, 3: 1}, 6)
    assert len({code(a), code(b), code(c)}) == 3
    assert (
        AnonymizedProbe(mechanism, {}).show_output(code(b))
        == "(total 5, φ₁…φ₄ [2, 0, 0, 0], counts > 4)"
    )


def test_every_zoo_releaser_registers() -> None:
    assert ZOO.broken == []


@pytest.mark.parametrize(
    ("broken", "contract", "diagnosis"),
    [(cls, contract, diagnosis) for cls, (contract, diagnosis) in anonymized_zoo.ZOO.items()],
    ids=[cls.name for cls in anonymized_zoo.ZOO],
)
def test_broken_releaser_fails_its_contract(broken: Any, contract: str, diagnosis: str) -> None:
    assert contract in CONTRACTS
    result = run_contract(ZOO.get(broken.name), contract, Settings())
    assert result.outcome is Outcome.FAILED, result.detail
    assert diagnosis in result.detail
