"""The conformance suite catches known-broken mechanisms, each at the contract that names its
flaw, in the default run's settings; the built-in plugins pass every contract."""

from __future__ import annotations

import pytest
import zoo

from dpplug import Registry
from dpplug.conformance.results import Level, Outcome
from dpplug.conformance.runner import CONTRACTS, run_contract, run_plugin
from dpplug.conformance.settings import Settings

ZOO_REGISTRY = Registry.load([zoo], entry_points=False)
DEFAULT = Settings()


def test_every_zoo_plugin_registers() -> None:
    assert ZOO_REGISTRY.broken == []
    assert len(zoo.ZOO) >= 8


@pytest.mark.parametrize(
    ("broken", "contract"), list(zoo.ZOO.items()), ids=lambda v: getattr(v, "name", v)
)
def test_broken_mechanism_fails_its_contract(broken: type, contract: str) -> None:
    assert contract in CONTRACTS
    result = run_contract(ZOO_REGISTRY.get(broken.name), contract, DEFAULT)
    assert result.outcome is Outcome.FAILED, result.detail


@pytest.mark.parametrize("name", [e.name for e in Registry.load(entry_points=False)])
def test_builtin_plugins_pass_every_contract_in_the_fast_run(name: str) -> None:
    result = run_plugin(ZOO_REGISTRY.get(name), Settings(mode="fast"))
    failures = [f"{r.contract}: {r.detail}" for r in result.results if not r.passed]
    assert failures == []
    assert result.level is Level.EXACTLY_VERIFIED
