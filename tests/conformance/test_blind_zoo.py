"""The broken plugins red teams wrote blind to the suite (support.blind_a to _h) fail
the contract that catches each, for the reason given, in the default run's settings; the honest
variations the suite once refused pass theirs."""

from __future__ import annotations

from types import ModuleType

import pytest

from dpplug import Registry
from dpplug.conformance.results import Outcome
from dpplug.conformance.runner import CONTRACTS, run_contract
from dpplug.conformance.settings import Settings

from support import (
    blind_a,
    blind_b,
    blind_c,
    blind_d,
    blind_e,
    blind_f,
    blind_g,
    blind_h,
    blind_i,
    blind_j,
    blind_k,
    blind_l,
    blind_m,
)

ZOOS = (
    blind_a,
    blind_b,
    blind_c,
    blind_d,
    blind_e,
    blind_f,
    blind_g,
    blind_h,
    blind_i,
    blind_j,
    blind_k,
    blind_l,
    blind_m,
)
#: The zoos that keep honest variations, each with the contract most likely to refuse it.
WITH_CONTROLS = (blind_e, blind_g, blind_h, blind_i, blind_j, blind_k, blind_l, blind_m)
REGISTRIES = {zoo: Registry.load([zoo], entry_points=False) for zoo in ZOOS}


@pytest.mark.parametrize("zoo", ZOOS, ids=[zoo.__name__ for zoo in ZOOS])
def test_every_blind_plugin_registers(zoo: ModuleType) -> None:
    registry = REGISTRIES[zoo]
    assert registry.broken == []
    assert {entry.name for entry in registry.entries()} >= {cls.name for cls in zoo.ZOO}


@pytest.mark.parametrize(
    ("zoo", "broken", "contract", "diagnosis"),
    [
        (zoo, cls, contract, diagnosis)
        for zoo in ZOOS
        for cls, (contract, diagnosis) in zoo.ZOO.items()
    ],
    ids=[cls.name for zoo in ZOOS for cls in zoo.ZOO],
)
def test_blind_broken_plugin_fails_its_contract(
    zoo: ModuleType, broken: type, contract: str, diagnosis: str
) -> None:
    assert contract in CONTRACTS
    result = run_contract(REGISTRIES[zoo].get(broken.name), contract, Settings())
    assert result.outcome is Outcome.FAILED, result.detail
    assert diagnosis in result.detail


@pytest.mark.parametrize(
    ("zoo", "control", "contract"),
    [
        (zoo, control, contract)
        for zoo in WITH_CONTROLS
        for control, contract in zoo.CONTROLS.items()
    ],
    ids=[control.name for zoo in WITH_CONTROLS for control in zoo.CONTROLS],
)
def test_honest_variation_passes_the_contract_that_once_refused_it(
    zoo: ModuleType, control: type, contract: str
) -> None:
    result = run_contract(REGISTRIES[zoo].get(control.name), contract, Settings())
    assert result.outcome is Outcome.PASSED, result.detail
