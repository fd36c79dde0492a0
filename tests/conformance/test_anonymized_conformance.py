"""The conformance suite on anonymized-histogram releasers: the probe's exact check of noise
programs by coupled transcripts (tight for the sorted histogram and for PrivHist's adaptive
blocks), its window law of real releases, its codes, and broken releasers each caught by the
contract that names their flaw."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest

import dpplug
from dpplug import Registry
from dpplug.conformance.probes.anonymized_histogram_releaser.probe import (
    CHAIN,
    LEFT_CODES,
    AnonymizedProbe,
    code,
    neighbours,
)
from dpplug.conformance.results import Outcome
from dpplug.conformance.runner import CONTRACTS, run_contract
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.randomness import SeededSource

from support import anonymized_zoo

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


@pytest.mark.parametrize(
    "params", [{"epsilon": Fraction(1, 2), "smoothing_up_to": 1}, {"epsilon": 2}], ids=str
)
def test_the_coupled_check_of_privhist_is_tight(params: dict[str, Any]) -> None:
    """Both branches, at the declared cases (HIGHPRIVACY at ε = 1/2 by the paper's rule)."""
    mechanism = dpplug.create("privhist", **params)
    check = AnonymizedProbe(mechanism, params).exact_privacy(FAST)
    assert check.failures == ()
    bound = float(mechanism.guarantee.exp_epsilon)
    assert f"noise ratio {bound:.6g} ≤ e^ε = {bound:.6g}" in check.summary
    assert "coupled transcripts" in check.summary


def test_an_adaptive_program_is_checked_on_its_declared_cases_only() -> None:
    probe = AnonymizedProbe(dpplug.create("privhist", epsilon=3), {"epsilon": 3})
    with pytest.raises(NotSupported, match="declared cases only"):
        probe.exact_privacy(FAST)


@pytest.mark.parametrize(
    ("name", "params"),
    [("sorted-histogram", {"epsilon": 2, "length": 8}), ("privhist", {"epsilon": 2})],
)
def test_real_releases_fall_in_the_cells_of_the_exact_window_law(
    name: str, params: dict[str, Any]
) -> None:
    probe = AnonymizedProbe(dpplug.create(name, **params), params)
    assert probe.law_inputs == (0,)  # the declared case with the largest e^ε
    law = probe.law(0)
    assert law.total() == 1 and law.bounded
    left = [z for z in law if z >= LEFT_CODES]
    assert left and all(law[z] > 0 for z in law)
    cells = probe.law_draw(0, 200, SeededSource(5))
    assert all(z in law for z in cells.tolist())
    assert any(z >= LEFT_CODES for z in cells.tolist())  # some noise leaves the window


def test_only_the_least_noisy_declared_case_is_tested_for_its_law() -> None:
    probe = AnonymizedProbe(dpplug.create("privhist", epsilon=Fraction(1, 2)), {})
    assert probe.law_inputs == ()


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


def test_the_exact_check_replays_the_real_release_not_a_declaration() -> None:
    probe = AnonymizedProbe(dpplug.create("sorted-histogram", epsilon=1, length=6), {})
    check = probe.implementation_check(FAST)
    assert check.failures == ()
    assert "the real release enumerated through its served draws" in check.summary


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
