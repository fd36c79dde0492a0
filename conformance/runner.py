"""Runs the contracts on registered plugins: the engine behind ``dpplug conform`` and
``pytest --dpplug``.

The contracts, in order (``docs/conformance.md``; each module's docstring states its test):

1. ``declaration``   — :mod:`.declaration`
2. ``bad-input``     — :mod:`.bad_input`
3. ``exact-privacy`` — :mod:`.exact_privacy`
4. ``sampling-law``  — :mod:`.sampling_law`
5. ``audit``         — :mod:`.audit`
6. ``accuracy``      — :mod:`.accuracy`
7. ``hygiene``       — :mod:`.hygiene`

A contract that raises is a failure of the plugin (with the exception in the detail). If the
declaration fails, the other contracts are skipped: they build on it.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator

from dpplug.conformance import (
    accuracy,
    audit,
    bad_input,
    declaration,
    exact_privacy,
    hygiene,
    sampling_law,
)
from dpplug.conformance.coverage import Key, required_cells
from dpplug.conformance.results import ContractResult, Outcome, PluginResult
from dpplug.conformance.settings import Settings
from dpplug.errors import AccuracyWarning, NotSupported
from dpplug.plugin_registry import Entry

Check = Callable[[Entry, Settings], ContractResult]

CONTRACTS: dict[str, Check] = {
    declaration.NAME: declaration.check,
    bad_input.NAME: bad_input.check,
    exact_privacy.NAME: exact_privacy.check,
    sampling_law.NAME: sampling_law.check,
    audit.NAME: audit.check,
    accuracy.NAME: accuracy.check,
    hygiene.NAME: hygiene.check,
}


def run_contract(entry: Entry, contract: str, settings: Settings) -> ContractResult:
    """One contract on one plugin; an exception from the plugin is a failure, not a crash.

    Conformance cases are tiny on purpose, so a releaser's warning that its accuracy covers no
    count of such a case (AccuracyWarning) is expected and silenced; the accuracy contract
    tests the declared bounds themselves."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AccuracyWarning)
            return CONTRACTS[contract](entry, settings)
    except NotSupported as exc:
        return ContractResult(contract, Outcome.SKIPPED, str(exc))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # whatever the plugin raises, SystemExit included
        return ContractResult(contract, Outcome.FAILED, f"raised {type(exc).__name__}: {exc}")


def run_plugin(
    entry: Entry,
    settings: Settings,
    on_contract: Callable[[str, ContractResult], None] | None = None,
) -> PluginResult:
    """Every contract on *entry*, in order; *on_contract* is told after each one."""
    start = time.perf_counter()
    results: list[ContractResult] = []
    for result in contract_results(entry, settings):
        results.append(result)
        if on_contract is not None:
            on_contract(result.contract, result)
    return PluginResult(
        entry.name,
        entry.kind.name,
        entry.source.describe(),
        tuple(results),
        module=entry.module,
        seconds=time.perf_counter() - start,
        required=required_of(entry),
    )


def contract_results(
    entry: Entry, settings: Settings, first: int = 0, declared: bool = True
) -> Iterator[ContractResult]:
    """The contracts from the *first*-th on, in order, each result as it comes; the others are
    skipped once the declaration failed (*declared*: whether it passed, when *first* is past
    it)."""
    for contract in list(CONTRACTS)[first:]:
        if contract != declaration.NAME and not declared:
            result = ContractResult(contract, Outcome.SKIPPED, "declaration failed")
        else:
            result = run_contract(entry, contract, settings)
        if contract == declaration.NAME:
            declared = result.passed
        yield result


def required_of(entry: Entry) -> tuple[Key, ...]:
    """The cells the plugin's kind requires of its first declared case (none if it has no case
    that builds: the declaration fails then)."""
    cases = entry.cls.conformance_cases
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AccuracyWarning)
            return required_cells(entry.create(**cases[0])) if cases else ()
    except Exception:  # the declaration contract reports it
        return ()
