"""The conformance report, written by ``dpplug conform --report DIR``: ``index.html``, the plots it
shows, and ``report.json`` (the document ``--json`` prints).

The page opens with the run's settings, what each level means, and a summary grid (plugin ×
contract, ✓ ✗ –, the level coloured, each contract's power under its mark and the run's weakest
in the last row); then a section per plugin with its problem (if any), its
contracts' details (folded, opened on demand) and its plots: the declared law against the
empirical frequencies, declared against empirical accuracy or the keep-probability curve, and for
every plugin that was audited, its declared ε against the audit's lower bound.
"""

from __future__ import annotations

import html
import json
import textwrap
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from dpplug.conformance.results import (
    Level,
    Outcome,
    PluginResult,
    results_json,
    weakest_powers,
)
from dpplug.conformance.runner import CONTRACTS
from dpplug.conformance.settings import Settings

_MARKS = {Outcome.PASSED: "✓", Outcome.FAILED: "✗", Outcome.SKIPPED: "–"}
_LEVELS = {
    Level.EXACTLY_VERIFIED: ("#1a7f37", "every contract passed, the exact ones included"),
    Level.AUDITED: ("#4d8f2d", "all but the exact checks passed; they were skipped (no exact law)"),
    Level.DECLARED: ("#9a6700", "declaration and bad input pass; audit, accuracy or hygiene not"),
    Level.NONE: ("#6e7781", "not even the declaration could be checked"),
    Level.FAILED: ("#cf222e", "a contract failed, or the plugin is broken, hung or crashed"),
}
_STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;max-width:75em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #d0d7de;padding:3px 8px}
th{background:#f6f8fa;text-align:left}td.mark{text-align:center;font-weight:bold}
.passed{color:#1a7f37}.failed{color:#cf222e;background:#ffebe9}.skipped{color:#6e7781}
.level{font-weight:bold}details{margin:.4em 0}summary{cursor:pointer;color:#0969da}
.detail td{font-size:90%;vertical-align:top}img{margin:4px;border:1px solid #eee;max-width:100%}
.problem{color:#cf222e;font-weight:bold}small{color:#57606a}
.plots{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start}"""


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in name)


def _title(axes: Any, text: str) -> None:
    axes.set_title("\n".join(textwrap.wrap(text, 60)), fontsize=8)


def _save(figure: Any, path: Path) -> str:
    """Write *figure* to *path*, close it, and return the file's name for the page."""
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path.name


def _pmf_plot(result: PluginResult, data: dict[str, Any], directory: Path) -> str:
    figure, axes = plt.subplots(figsize=(6, 3.2))
    axes.bar(data["outputs"], data["declared"], color="#9ecae1", label="declared law")
    axes.plot(data["outputs"], data["empirical"], "k.", label="empirical frequency")
    _title(axes, f"{result.name}: {data['case']}")
    axes.set_xlabel("output")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    return _save(figure, directory / f"{_slug(result.name)}-law.png")


def _accuracy_plot(result: PluginResult, data: dict[str, Any], directory: Path) -> str:
    figure, axes = plt.subplots(figsize=(5.5, 3.2))
    positions = range(len(data["betas"]))
    declared = [p - 0.2 for p in positions]
    axes.bar(declared, data["declared_a"], 0.4, color="#9ecae1", label="declared a")
    axes.bar(
        [p + 0.2 for p in positions],
        data["empirical_quantile"],
        0.4,
        color="#636363",
        label="empirical (1−β)-quantile",
    )
    axes.set_xticks(list(positions), [f"β = {b}" for b in data["betas"]])
    axes.set_ylabel("|error|")
    _title(axes, f"{result.name}: {data['case']}")
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    return _save(figure, directory / f"{_slug(result.name)}-accuracy.png")


def _keep_curve_plot(result: PluginResult, data: dict[str, Any], directory: Path) -> str:
    figure, axes = plt.subplots(figsize=(6, 3.2))
    axes.step(data["units"], data["keep"], where="post", label="declared π(n)")
    empirical = data["empirical"]
    axes.plot([int(n) for n in empirical], list(empirical.values()), "k.", label="empirical rate")
    axes.set_xlabel("privacy units in the partition")
    axes.set_ylabel("keep probability")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    _title(axes, f"{result.name}: {data['case']}")
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    return _save(figure, directory / f"{_slug(result.name)}-keep.png")


def _audit_plot(result: PluginResult, data: dict[str, Any], directory: Path) -> str:
    cases = data["cases"]
    figure, axes = plt.subplots(figsize=(6, 0.9 + 0.45 * len(cases)))
    rows = range(len(cases))
    axes.barh(
        [r + 0.2 for r in rows],
        [c["declared"] for c in cases.values()],
        0.4,
        color="#9ecae1",
        label="declared ε",
    )
    axes.barh(
        [r - 0.2 for r in rows],
        [c["lower"] for c in cases.values()],
        0.4,
        color="#636363",
        label="audited lower bound",
    )
    axes.set_yticks(list(rows), ["\n".join(textwrap.wrap(case, 45)) for case in cases], fontsize=7)
    axes.set_xlabel("ε")
    _title(axes, f"{result.name}: privacy audit")
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    return _save(figure, directory / f"{_slug(result.name)}-audit.png")


def _plots(result: PluginResult, directory: Path) -> list[str]:
    figures = []
    for r in result.results:
        if not r.data:
            continue
        if r.contract == "sampling-law":
            figures.append(_pmf_plot(result, r.data, directory))
        elif r.contract == "accuracy" and "units" in r.data:
            figures.append(_keep_curve_plot(result, r.data, directory))
        elif r.contract == "accuracy":
            figures.append(_accuracy_plot(result, r.data, directory))
        elif r.contract == "audit" and r.data.get("cases"):
            figures.append(_audit_plot(result, r.data, directory))
    return figures


def _level(level: Level) -> str:
    colour, meaning = _LEVELS[level]
    return f'<span class="level" style="color:{colour}" title="{meaning}">{level.value}</span>'


def _summary(results: list[PluginResult]) -> str:
    header = "".join(f'<th title="{name}">{i}</th>' for i, name in enumerate(CONTRACTS, 1))
    rows = []
    for result in results:
        outcomes = {r.contract: r for r in result.results}
        cells = []
        for contract in CONTRACTS:
            r = outcomes.get(contract)
            if r is None:
                cells.append('<td class="mark failed" title="did not run">✗</td>')
            else:
                tip = html.escape(f"{contract}: {r.detail}")
                mark = _MARKS[r.outcome]
                power = f"<br><small>{html.escape(r.power)}</small>" if r.power else ""
                cells.append(f'<td class="mark {r.outcome.value}" title="{tip}">{mark}{power}</td>')
        name = html.escape(result.name)
        rows.append(
            f'<tr><th><a href="#{_slug(result.name)}">{name}</a></th>'
            f"<td>{html.escape(result.kind or '?')}</td><td>{_level(result.level)}</td>"
            f"{''.join(cells)}</tr>"
        )
    powers = weakest_powers(results)
    weakest = "".join(
        f'<td class="mark"><small>{html.escape(powers.get(name, ""))}</small></td>'
        for name in CONTRACTS
    )
    legend = " · ".join(f"{i} {name}" for i, name in enumerate(CONTRACTS, 1))
    return (
        f"<table><tr><th>plugin</th><th>kind</th><th>level</th>{header}</tr>{''.join(rows)}"
        f'<tr><th colspan="3">power: weakest of the run</th>{weakest}</tr>'
        f"</table><p><small>{legend}. ✓ passed, ✗ failed, – skipped (not applicable; hover a "
        f"mark for its detail). Under each mark, the contract's power: the smallest flaw it "
        f"detects with probability ≥ 1/2 (any: exact or deterministic; TV: total-variation "
        f"distance from the law; Δε: excess over the declared ε; fβ: a failure rate f times "
        f"the declared β).</small></p>"
    )


def _section(result: PluginResult, directory: Path) -> str:
    parts = [
        f'<h2 id="{_slug(result.name)}">{html.escape(result.name)}</h2>',
        f"<p>{html.escape(result.kind or 'unknown kind')} from {html.escape(result.source)}: "
        f"{_level(result.level)} <small>({result.seconds:.1f} s)</small></p>",
    ]
    if result.problem:
        parts.append(f'<p class="problem">{html.escape(result.problem)}</p>')
    if result.results:
        rows = "".join(
            f'<tr><td>{html.escape(r.contract)}</td><td class="{r.outcome.value}">'
            f"{r.outcome.value}</td><td>{html.escape(r.power)}</td>"
            f"<td>{html.escape(r.detail)}</td></tr>"
            for r in result.results
        )
        opened = " open" if result.failed else ""
        parts.append(
            f"<details{opened}><summary>contract details</summary>"
            f'<table class="detail"><tr><th>contract</th><th>outcome</th><th>power</th>'
            f"<th>detail</th></tr>{rows}</table></details>"
        )
    images = "".join(f'<img src="{name}" alt="{name}">' for name in _plots(result, directory))
    parts.append(f'<div class="plots">{images}</div>')
    return "\n".join(parts)


def write_report(results: list[PluginResult], settings: Settings, directory: Path) -> Path:
    """Write ``index.html``, ``report.json`` and the plots into *directory*."""
    directory.mkdir(parents=True, exist_ok=True)
    levels = "".join(f"<li>{_level(level)}: {text}</li>" for level, (_, text) in _LEVELS.items())
    sections = "\n".join(_section(result, directory) for result in results)
    page = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>dpplug conformance</title><style>{_STYLE}</style></head><body>
<h1>dpplug conformance report</h1>
<p>{html.escape(settings.describe())}. Statistical contracts split their false-alarm rate by
Bonferroni over their tests; exact contracts use rational arithmetic and have no false alarms.</p>
<ul>{levels}</ul>
{_summary(results)}
{sections}
</body></html>"""
    (directory / "index.html").write_text(page, encoding="utf-8")
    (directory / "report.json").write_text(
        json.dumps(results_json(results, settings), indent=2), encoding="utf-8"
    )
    return directory / "index.html"
