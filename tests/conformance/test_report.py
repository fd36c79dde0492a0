"""The HTML report: a summary grid first, a section per plugin with its problem, its folded
contract details and its plots, and the JSON document beside it."""

from __future__ import annotations

import json
from pathlib import Path

from dpplug.conformance.command import power_legend
from dpplug.conformance.report import write_report
from dpplug.conformance.results import ContractResult, Outcome, PluginResult
from dpplug.conformance.runner import CONTRACTS
from dpplug.conformance.settings import Settings

LAW = {"case": "n=4", "outputs": [0, 1, 2], "empirical": [0.5, 0.3, 0.2], "declared": [0.5, 0.5, 0]}
AUDIT = {"epsilon_lower_bound": 0.3, "cases": {"n=4": {"declared": 0.4, "lower": 0.3}}}


POWERS = {"sampling-law": ("TV 0.05", 0.05), "audit": ("Δε 0.37", 0.37), "accuracy": ("4β", 4.0)}


def _passing(name: str, audit_power: tuple[str, float] = POWERS["audit"]) -> PluginResult:
    powers = {**POWERS, "audit": audit_power}
    results = tuple(
        ContractResult(
            contract,
            Outcome.PASSED,
            f"{contract} fine",
            data=LAW if contract == "sampling-law" else AUDIT if contract == "audit" else {},
            power=powers.get(contract, ("any", 0.0))[0],
            weakness=powers.get(contract, ("any", 0.0))[1],
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


def test_each_contracts_power_is_in_the_grid_the_details_and_the_terminal_legend(
    tmp_path: Path,
) -> None:
    runs = [_passing("sharp-sampler"), _passing("blunt-sampler", ("Δε 1.2", 1.2))]
    page = write_report(runs, Settings(), tmp_path).read_text(encoding="utf-8")
    grid = page[: page.index("<h2")]
    assert grid.count("<br><small>Δε 0.37</small>") == 1
    assert grid.count("<br><small>Δε 1.2</small>") == 1
    assert grid.count("<br><small>TV 0.05</small>") == 2
    weakest = grid[grid.index("power: weakest of the run") :]
    cells = weakest[: weakest.index("</tr>")]
    for power in ("any", "TV 0.05", "Δε 1.2", "4β"):
        assert f"<small>{power}</small>" in cells
    assert "Δε 0.37" not in cells
    assert "<th>power</th>" in page and "<td>Δε 0.37</td>" in page
    legend = power_legend(runs)
    assert max(len(line) for line in legend.splitlines()) <= 80
    flat = " ".join(legend.split())
    assert "1=any 2=any 3=any 4=TV 0.05 5=Δε 1.2 6=4β 7=any" in flat
    assert power_legend([]).endswith("none")
