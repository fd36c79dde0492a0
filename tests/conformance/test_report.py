"""The HTML report: a summary grid first, a section per plugin with its problem, its folded
contract details and its plots, and the JSON document beside it."""

from __future__ import annotations

import json
from pathlib import Path

from dpplug.conformance.report import write_report
from dpplug.conformance.results import ContractResult, Outcome, PluginResult
from dpplug.conformance.runner import CONTRACTS
from dpplug.conformance.settings import Settings

LAW = {"case": "n=4", "outputs": [0, 1, 2], "empirical": [0.5, 0.3, 0.2], "declared": [0.5, 0.5, 0]}
AUDIT = {"epsilon_lower_bound": 0.3, "cases": {"n=4": {"declared": 0.4, "lower": 0.3}}}


def _passing(name: str) -> PluginResult:
    results = tuple(
        ContractResult(
            contract,
            Outcome.PASSED,
            f"{contract} fine",
            data=LAW if contract == "sampling-law" else AUDIT if contract == "audit" else {},
        )
        for contract in CONTRACTS
    )
    return PluginResult(name, "sampler", "dist 1.0 (plugin)", results, "mod", 1.5)


def test_the_report_has_a_grid_a_section_per_plugin_and_their_plots(tmp_path: Path) -> None:
    broken = PluginResult("hangs", "sampler", "dist 1.0", (), "mod", 45.0, "timed out after 45 s")
    index = write_report([_passing("good-sampler"), broken], Settings(mode="fast"), tmp_path)
    page = index.read_text(encoding="utf-8")
    assert page.index("<table>") < page.index('<h2 id="good-sampler">')
    assert '<h2 id="hangs">' in page and "timed out after 45 s" in page
    assert page.count('class="mark passed"') == len(CONTRACTS)
    assert page.count('title="did not run">✗') == len(CONTRACTS)
    assert "<details><summary>contract details</summary>" in page  # folded when it passed
    for plot in ("good-sampler-law.png", "good-sampler-audit.png"):
        assert (tmp_path / plot).stat().st_size > 0 and f'src="{plot}"' in page
    document = json.loads((tmp_path / "report.json").read_text())
    assert [p["name"] for p in document["plugins"]] == ["good-sampler", "hangs"]
    assert document["plugins"][1]["problem"] == "timed out after 45 s"
