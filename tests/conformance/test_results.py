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
    assert skipped == {"outcome": "skipped", "detail": "exact-privacy detail"}
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
