"""The broken plugins a red team wrote blind to the suite (support.blind_a) fail the contract
that catches each, for the reason given, in the default run's settings."""

from __future__ import annotations

import pytest

from dpplug import Registry
from dpplug.conformance.results import Outcome
from dpplug.conformance.runner import CONTRACTS, run_contract
from dpplug.conformance.settings import Settings

from support import blind_a

REGISTRY = Registry.load([blind_a], entry_points=False)


def test_every_blind_plugin_registers() -> None:
    assert REGISTRY.broken == []
    assert {entry.name for entry in REGISTRY.entries()} >= {cls.name for cls in blind_a.ZOO}


@pytest.mark.parametrize(
    ("broken", "contract", "diagnosis"),
    [(cls, contract, diagnosis) for cls, (contract, diagnosis) in blind_a.ZOO.items()],
    ids=[cls.name for cls in blind_a.ZOO],
)
def test_blind_broken_plugin_fails_its_contract(
    broken: type, contract: str, diagnosis: str
) -> None:
    assert contract in CONTRACTS
    result = run_contract(REGISTRY.get(broken.name), contract, Settings())
    assert result.outcome is Outcome.FAILED, result.detail
    assert diagnosis in result.detail
