"""The conformance suite catches known-broken mechanisms, each at the contract that names its
flaw, in the default run's settings; the built-in plugins pass every contract they can be
checked by, in a fast run made as ``dpplug conform --fast --seed S`` makes it (a process per
plugin), at a seed S from 1 to 20 that rotates with the commit (the main job runs seed 0), so
that CI sweeps the seeds a false alarm could hide behind."""

from __future__ import annotations

import os
from typing import Any

import pytest

from dpplug import Registry
from dpplug.conformance.isolation import Target, run_isolated
from dpplug.conformance.results import ContractResult, Level, Outcome, PluginResult
from dpplug.conformance.runner import CONTRACTS, run_contract
from dpplug.conformance.settings import Settings

from support import zoo
from support.rotation import rotation

ZOO_REGISTRY = Registry.load([zoo], entry_points=False)
DEFAULT = Settings()


def test_every_zoo_plugin_registers() -> None:
    assert ZOO_REGISTRY.broken == []
    assert len(zoo.ZOO) >= 8


@pytest.mark.parametrize(
    ("broken", "contract", "diagnosis"),
    [(cls, contract, diagnosis) for cls, (contract, diagnosis) in zoo.ZOO.items()],
    ids=[cls.name for cls in zoo.ZOO],
)
def test_broken_mechanism_fails_its_contract_for_the_right_reason(
    broken: type, contract: str, diagnosis: str
) -> None:
    assert contract in CONTRACTS
    result = run_contract(ZOO_REGISTRY.get(broken.name), contract, DEFAULT)
    assert result.outcome is Outcome.FAILED, result.detail
    assert diagnosis in result.detail


@pytest.mark.parametrize("broken", zoo.ANY_SEED, ids=[cls.name for cls in zoo.ANY_SEED])
def test_a_flaw_outside_the_declared_cases_is_caught_at_another_seed_too(broken: type) -> None:
    """The zoo's flaws that a seeded choice could hide fail at seed 1 as at the default 0."""
    contract, diagnosis = zoo.ZOO[broken]
    result = run_contract(ZOO_REGISTRY.get(broken.name), contract, Settings(seed=1))
    assert result.outcome is Outcome.FAILED, result.detail
    assert diagnosis in result.detail


#: Contracts a built-in plugin skips, with the reason its skip must give: none (every built-in
#: declares an exact law: independent-laplace its answers', sparse-projection its coordinate
#: noise and sparse-multiplicative-weights its sparse-vector structure).
EXPECTED_SKIPS: dict[tuple[str, str], str] = {}
#: Built-in plugins known to fail a contract, and why (remove an entry once its plugin is fixed;
#: the test then passes unexpectedly, which strict xfail reports).
KNOWN_FAILURES: dict[str, str] = {}


def _builtin(name: str) -> Any:
    if name in KNOWN_FAILURES:
        return pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN_FAILURES[name], strict=True))
    return name


def _expected_skip(name: str, result: ContractResult) -> bool:
    reason = EXPECTED_SKIPS.get((name, result.contract))
    return result.outcome is Outcome.SKIPPED and reason is not None and reason in result.detail


BUILTINS = Registry.load(entry_points=False)
#: Seconds a built-in's fast run may take before the test fails it (the run's own limit).
BUILTIN_TIMEOUT = 900
#: The seeds the fast run rotates through, one per commit.
SWEEP_SEEDS = range(1, 21)


def sweep_seed() -> int:
    """The fast run's seed: ``DPPLUG_SWEEP_SEED`` if set, else one of :data:`SWEEP_SEEDS` chosen
    by the checked-out commit (:func:`support.rotation.rotation`)."""
    given = os.environ.get("DPPLUG_SWEEP_SEED")
    if given is not None:
        return int(given)
    return SWEEP_SEEDS[rotation(len(SWEEP_SEEDS))]


@pytest.fixture(scope="module")
def fast_run() -> dict[str, PluginResult]:
    """Every built-in's fast run at :func:`sweep_seed`, each in its own process, as many at once
    as there are cores (what ``dpplug conform --fast --seed S`` does)."""
    seed = sweep_seed()
    print(f"fast run of the built-ins at seed {seed} (DPPLUG_SWEEP_SEED={seed} repeats it)")
    results = run_isolated(
        [Target.of(entry) for entry in BUILTINS],
        Settings(mode="fast", seed=seed),
        jobs=os.cpu_count() or 1,
        timeout=BUILTIN_TIMEOUT,
        on_result=lambda result: None,
    )
    return {result.name: result for result in results}


@pytest.mark.parametrize("name", [_builtin(e.name) for e in BUILTINS])
def test_builtin_plugins_pass_every_contract_in_the_fast_run(
    name: str, fast_run: dict[str, PluginResult]
) -> None:
    result = fast_run[name]
    assert result.problem is None
    failures = [
        f"{r.contract}: {r.detail}"
        for r in result.results
        if not r.passed and not _expected_skip(name, r)
    ]
    assert failures == []
    skips = any(plugin == name for plugin, _ in EXPECTED_SKIPS)
    assert result.level is (Level.AUDITED if skips else Level.EXACTLY_VERIFIED)
