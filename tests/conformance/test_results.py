"""Results and their JSON document (``dpplug conform --json``, the report's ``report.json``)."""

from __future__ import annotations

import json

import pytest

from dpplug.cli import main
from dpplug.conformance.results import (
    JSON_FORMAT,
    ContractResult,
    Level,
    Outcome,
    PluginResult,
    results_json,
    weakest_powers,
)
from dpplug.conformance.settings import Settings


def _result(*outcomes: Outcome) -> PluginResult:
    names = ("declaration", "bad-input", "exact-privacy", "sampling-law", "audit")
    contracts = tuple(
        ContractResult(name, outcome, f"{name} detail")
        for name, outcome in zip(names, outcomes, strict=False)
    )
    return PluginResult("some-plugin", "sampler", "dist 1.0 (plugin)", contracts)


def test_a_skipped_contract_reads_as_skipped_never_as_failed() -> None:
    result = _result(Outcome.PASSED, Outcome.PASSED, Outcome.SKIPPED)
    document = json.loads(json.dumps(results_json([result], Settings(mode="fast"))))
    assert document["format"] == JSON_FORMAT
    (plugin,) = document["plugins"]
    skipped = plugin["contracts"]["exact-privacy"]
    assert skipped == {"outcome": "skipped", "detail": "exact-privacy detail", "power": ""}
    assert "passed" not in skipped
    assert plugin["level"] == Level.DECLARED.value


def test_a_failed_contract_fails_the_plugin() -> None:
    result = _result(Outcome.PASSED, Outcome.FAILED)
    (plugin,) = results_json([result], Settings())["plugins"]
    assert plugin["contracts"]["bad-input"]["outcome"] == "failed"
    assert plugin["level"] == "failed"


def test_the_conform_command_comes_from_the_conformance_package(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["conform", "--help"])
    assert exit_info.value.code == 0
    assert "--report" in capsys.readouterr().out


def test_the_weakest_power_of_a_run_is_the_largest_flaw_a_passed_result_needs() -> None:
    def plugin(name: str, audit: ContractResult) -> PluginResult:
        exact = ContractResult("exact-privacy", Outcome.PASSED, "", power="any")
        return PluginResult(name, "sampler", "dist 1.0", (exact, audit))

    sharp = ContractResult("audit", Outcome.PASSED, "", power="Δε 0.1", weakness=0.1)
    blunt = ContractResult("audit", Outcome.PASSED, "", power="Δε 0.7", weakness=0.7)
    skipped = ContractResult("audit", Outcome.SKIPPED, "no pairs")
    runs = [plugin("a", sharp), plugin("b", blunt), plugin("c", skipped)]
    assert weakest_powers(runs) == {"exact-privacy": "any", "audit": "Δε 0.7"}
    assert weakest_powers(runs[:1]) == {"exact-privacy": "any", "audit": "Δε 0.1"}
    document = results_json(runs, Settings())
    assert document["plugins"][1]["contracts"]["audit"]["power"] == "Δε 0.7"
