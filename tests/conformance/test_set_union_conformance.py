"""The conformance suite on set-union selectors: broken selectors, each caught by the contract
that names its flaw in the default run's settings, and the probe's checks of declared rounds."""

from __future__ import annotations

from typing import Any

import pytest

import dpplug
from dpplug import Registry
from dpplug.conformance.probes.set_union_selector.probe import SetUnionProbe
from dpplug.conformance.results import Outcome
from dpplug.conformance.runner import CONTRACTS, run_contract
from dpplug.conformance.settings import Settings

from support import set_union_zoo

ZOO = Registry.load([set_union_zoo], entry_points=False)


def test_every_zoo_selector_registers() -> None:
    assert ZOO.broken == []
    assert len(set_union_zoo.ZOO) >= 3


@pytest.mark.parametrize(
    ("broken", "contract", "diagnosis"),
    [(cls, contract, diagnosis) for cls, (contract, diagnosis) in set_union_zoo.ZOO.items()],
    ids=[cls.name for cls in set_union_zoo.ZOO],
)
def test_broken_selector_fails_its_contract(broken: Any, contract: str, diagnosis: str) -> None:
    assert contract in CONTRACTS
    result = run_contract(ZOO.get(broken.name), contract, Settings())
    assert result.outcome is Outcome.FAILED, result.detail
    assert diagnosis in result.detail


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("weighted-gaussian", {"max_partitions_contributed": 3, "replace_one": True}),
        ("dp-sips", {"max_partitions_contributed": 2, "rounds": 3}),
    ],
)
def test_the_declared_rounds_of_the_built_ins_pass_the_accounting_check(
    name: str, params: dict[str, Any]
) -> None:
    """The check that catches the zoo's accounting flaws passes the honest rounds, which declare
    exactly their composition (so the check is tight)."""
    params = {"epsilon": 1, "delta": 1e-5, **params}
    mechanism = dpplug.create(name, **params)
    assert SetUnionProbe(mechanism, params)._rounds_problems() == []
    assert mechanism.guarantee.delta == mechanism.calibration.delta
