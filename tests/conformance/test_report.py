"""The HTML report: the summary grid first, then a section per plugin (folded unless it failed)
with its problem, contracts, coverage matrix and plots, and the JSON document beside it."""

from __future__ import annotations

import json
from pathlib import Path

from dpplug.conformance.command import power_legend
from dpplug.conformance.coverage import Status, cell
from dpplug.conformance.report import condensed, power_words, write_report
from dpplug.conformance.results import ContractResult, Outcome, PluginResult
from dpplug.conformance.runner import CONTRACTS
from dpplug.conformance.settings import Settings
from dpplug.surfaces import Dimension

LAW = {"case": "n=4", "outputs": [0, 1, 2], "empirical": [0.5, 0.3, 0.2], "declared": [0.5, 0.5, 0]}
AUDIT = {"epsilon_lower_bound": 0.3, "cases": {"n=4": {"declared": 0.4, "lower": 0.3}}}
POWERS = {"sampling-law": ("TV 0.05", 0.05), "audit": ("Δε 0.37", 0.37), "accuracy": ("4β", 4.0)}
REQUIRED = (("sample", Dimension.LAW), ("sample", Dimension.SIZE), ("guarantee", Dimension.BUDGET))
CELLS = (
    cell("sample", Dimension.LAW, Status.SAMPLED, "χ² of real draws"),
    cell("sample", Dimension.SIZE, Status.INFEASIBLE, "n = 1 has no large counts"),
    cell("guarantee", Dimension.BUDGET, Status.CHECKED, "ε within the budget"),
)


def _passing(
    name: str,
    audit_power: tuple[str, float] = POWERS["audit"],
    law: dict[str, object] = LAW,
    kind: str = "sampler",
) -> PluginResult:
    powers = {**POWERS, "audit": audit_power}
    results = tuple(
        ContractResult(
            contract,
            Outcome.PASSED,
            f"{contract} fine",
            data=law if contract == "sampling-law" else AUDIT if contract == "audit" else {},
            power=powers.get(contract, ("any", 0.0))[0],
            weakness=powers.get(contract, ("any", 0.0))[1],
            cells=CELLS if contract == "hygiene" else (),
        )
        for contract in CONTRACTS
    )
    return PluginResult(name, kind, "dist 1.0 (plugin)", results, "mod", 1.5, required=REQUIRED)


def test_the_grid_comes_first_then_a_section_per_plugin_folded_unless_it_failed(
    tmp_path: Path,
) -> None:
    broken = PluginResult("hangs", "sampler", "dist 1.0", (), "mod", 45.0, "timed out after 45 s")
    index = write_report([_passing("good-sampler"), broken], Settings(mode="fast"), tmp_path)
    page = index.read_text(encoding="utf-8")
    assert page.index("<table>") < page.index('<section id="good-sampler"><details>')
    assert '<section id="hangs"><details open>' in page and "timed out after 45 s" in page
    assert page.count('class="mark passed"') == len(CONTRACTS)
    assert page.count('title="did not run">✗') == len(CONTRACTS)
    for plot in ("good-sampler-law.png", "good-sampler-audit.png"):
        assert (tmp_path / plot).stat().st_size > 0 and f'src="{plot}"' in page
    assert page.count("<figcaption>") == 2
    document = json.loads((tmp_path / "report.json").read_text())
    assert [p["name"] for p in document["plugins"]] == ["good-sampler", "hangs"]
    assert document["plugins"][1]["problem"] == "timed out after 45 s"


def test_each_contracts_power_is_in_the_grid_in_words_and_in_the_terminal_legend(
    tmp_path: Path,
) -> None:
    runs = [_passing("sharp-sampler"), _passing("blunt-sampler", ("Δε 1.2", 1.2))]
    page = write_report(runs, Settings(), tmp_path).read_text(encoding="utf-8")
    grid = page[: page.index("<section")]
    assert grid.count(">Δε 0.37</small>") == 1
    assert grid.count(">Δε 1.2</small>") == 2  # its plugin's mark and the weakest row
    assert grid.count(">TV 0.05</small>") == 3  # two plugins and the weakest row
    assert "an ε 1.2 above the declared one is seen" in grid  # the weakest, in words
    assert "a law 5% away (total variation) is seen" in grid
    legend = power_legend(runs)
    assert max(len(line) for line in legend.splitlines()) <= 80
    flat = " ".join(legend.split())
    assert "1=any 2=any 3=any 4=TV 0.05 5=Δε 1.2 6=4β 7=any" in flat
    assert power_legend([]).endswith("none")


def test_a_power_that_sees_nothing_is_a_warning_not_a_tick(tmp_path: Path) -> None:
    for power in ("TV 1", "none", "any (code: TV 1)"):
        assert power_words(power)[1], power
    for power in ("any", "TV 0.05", "any (code: TV 0.042)", "Δε 0.5", "4.2β", "any tried"):
        assert not power_words(power)[1], power
    blind = _passing("blind-sampler", ("none", float("inf")))
    page = write_report([blind], Settings(), tmp_path).read_text(encoding="utf-8")
    grid = page[: page.index("<section")]
    assert grid.count('class="mark weak"') == 1 and "⚠" in grid


def test_the_coverage_matrix_shows_each_cell_and_spells_out_the_gaps(tmp_path: Path) -> None:
    page = write_report([_passing("some-sampler")], Settings(), tmp_path).read_text("utf-8")
    matrix = page[page.index('<table class="matrix">') :]
    matrix = matrix[: matrix.index("</details>")]
    assert '<td class="sampled" title="sampled: χ² of real draws">S</td>' in matrix
    assert '<td class="checked" title="checked: ε within the budget">C</td>' in matrix
    assert '<td class="infeasible" title="infeasible: n = 1 has no large counts">I</td>' in matrix
    assert "<li>sample × size: infeasible: n = 1 has no large counts</li>" in matrix
    assert "coverage: 2/3 required cells" in page


def test_coded_releases_are_numbered_by_probability_and_named_with_the_rest_as_other(
    tmp_path: Path,
) -> None:
    outputs = list(range(1000, 1100))
    declared = [(100 - i) / 5050 for i in range(100)]  # output 1000 the likeliest
    shown = [f"(x: {i // 10}, y: {i % 10})" for i in range(100)]
    law = {
        "case": "coded",
        "outputs": outputs,
        "empirical": declared,
        "declared": declared,
        "shown": shown,
    }
    histogram = _passing("coded-releaser", law=law, kind="histogram-releaser")
    page = write_report([histogram], Settings(), tmp_path).read_text("utf-8")
    assert "1 = (x: 0, y: 0); 2 = (x: 0, y: 1);" in page
    assert "10 = (x: 0, y: 9); other = every other release." in page
    assert "11 = " not in page
    assert (tmp_path / "coded-releaser-law.png").stat().st_size > 0
    sampler = _passing("many-outputs", law={**law, "shown": None}, kind="sampler")
    page = write_report([sampler], Settings(), tmp_path).read_text("utf-8")
    assert "the 24 most likely outputs, &#x27;other&#x27; the rest." in page


def test_a_failed_audit_is_plotted_and_malformed_plot_data_is_left_out(tmp_path: Path) -> None:
    failing = ContractResult(
        "audit",
        Outcome.FAILED,
        "ε ≥ 1.1 > 0.7",
        data={"epsilon_lower_bound": 1.1, "cases": {"n=4": {"declared": 0.7, "lower": 1.1}}},
    )
    garbled = ContractResult("sampling-law", Outcome.PASSED, "", data={"outputs": "x"})
    result = PluginResult("bad-sampler", "sampler", "d 1", (garbled, failing), "m", 1.0)
    page = write_report([result], Settings(), tmp_path).read_text("utf-8")
    assert 'src="bad-sampler-audit.png"' in page
    assert "(law plot left out: its data is malformed" in page


def test_a_long_run_of_one_sentence_reads_once() -> None:
    detail = "; ".join(["case 1 fine"] + ["the same sentence"] * 25 + ["end"])
    assert condensed(detail) == "case 1 fine; the same sentence (×25); end"
