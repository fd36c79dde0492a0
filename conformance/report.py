"""The conformance report: an HTML page with the plugin × contract table, the run's settings
(samples, false-alarm rates, seed) and plots: declared pmf against empirical frequencies,
declared against empirical accuracy, and partition selectors' keep-probability curves with
empirical keep rates. Written by ``dpplug conform --report DIR``."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from dpplug.conformance.results import Outcome, PluginResult, results_json
from dpplug.conformance.settings import Settings

_COLOURS = {Outcome.PASSED: "#d7f5d7", Outcome.FAILED: "#f8d0d0", Outcome.SKIPPED: "#eeeeee"}


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in name)


def _save(figure: Any, path: Path) -> str:
    """Write *figure* to *path*, close it, and return the file's name for the page."""
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path.name


def _pmf_plot(result: PluginResult, data: dict[str, Any], directory: Path) -> str:
    figure, axes = plt.subplots(figsize=(6, 3))
    axes.bar(data["outputs"], data["declared"], color="#9ecae1", label="declared pmf")
    axes.plot(data["outputs"], data["empirical"], "k.", label="empirical frequency")
    axes.set_title(f"{result.name}: {data['case']}", fontsize=9)
    axes.set_xlabel("output")
    axes.legend(fontsize=8)
    return _save(figure, directory / f"{_slug(result.name)}-pmf.png")


def _accuracy_plot(result: PluginResult, data: dict[str, Any], directory: Path) -> str:
    figure, axes = plt.subplots(figsize=(4, 3))
    positions = range(len(data["betas"]))
    axes.bar(
        [p - 0.2 for p in positions], data["declared_a"], 0.4, color="#9ecae1", label="declared a"
    )
    axes.bar(
        [p + 0.2 for p in positions],
        data["empirical_quantile"],
        0.4,
        color="#636363",
        label="empirical (1−β)-quantile",
    )
    axes.set_xticks(list(positions), [f"β = {b}" for b in data["betas"]])
    axes.set_ylabel("|error|")
    axes.set_title(f"{result.name}: {data['case']}", fontsize=8)
    axes.legend(fontsize=7)
    return _save(figure, directory / f"{_slug(result.name)}-accuracy.png")


def _keep_curve_plot(result: PluginResult, data: dict[str, Any], directory: Path) -> str:
    figure, axes = plt.subplots(figsize=(5, 3))
    axes.step(data["units"], data["keep"], where="post", label="declared π(n)")
    empirical = data["empirical"]
    axes.plot(list(empirical), list(empirical.values()), "k.", label="empirical keep rate")
    axes.set_xlabel("privacy units in the partition")
    axes.set_ylabel("keep probability")
    axes.set_title(f"{result.name}: {data['case']}", fontsize=8)
    axes.legend(fontsize=7)
    return _save(figure, directory / f"{_slug(result.name)}-keep.png")


def write_report(results: list[PluginResult], settings: Settings, directory: Path) -> Path:
    """Write ``index.html`` (and ``report.json`` and the plots) into *directory*."""
    directory.mkdir(parents=True, exist_ok=True)
    contracts = list(dict.fromkeys(r.contract for p in results for r in p.results))
    rows, figures = [], []
    for plugin in results:
        cells = []
        for r in plugin.results:
            cells.append(
                f'<td style="background:{_COLOURS[r.outcome]}" title="'
                f'{html.escape(r.detail)}">{r.outcome.value}<br><small>'
                f"{html.escape(r.detail)}</small></td>"
            )
            if r.contract == "sampling-law" and r.data:
                figures.append(_pmf_plot(plugin, r.data, directory))
            if r.contract == "accuracy" and "units" in r.data:
                figures.append(_keep_curve_plot(plugin, r.data, directory))
            elif r.contract == "accuracy" and r.data:
                figures.append(_accuracy_plot(plugin, r.data, directory))
        rows.append(
            f"<tr><th>{html.escape(plugin.name)}<br><small>{html.escape(plugin.source)}"
            f"</small></th><td>{plugin.level.value}</td>{''.join(cells)}</tr>"
        )
    header = "".join(f"<th>{html.escape(c)}</th>" for c in contracts)
    images = "".join(f'<img src="{name}" alt="{name}">' for name in figures)
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>dpplug conformance</title>
<style>body{{font-family:sans-serif}} td,th{{border:1px solid #999;padding:4px;vertical-align:top;
font-size:12px}} table{{border-collapse:collapse}} img{{margin:4px}}</style></head><body>
<h1>dpplug conformance report</h1>
<p>{html.escape(settings.describe())}. Statistical contracts split their false-alarm rate by
Bonferroni over their tests; exact contracts use rational arithmetic and have no false alarms.</p>
<table><tr><th>plugin</th><th>level</th>{header}</tr>{"".join(rows)}</table>
<h2>Plots</h2>{images}</body></html>"""
    (directory / "index.html").write_text(page, encoding="utf-8")
    (directory / "report.json").write_text(
        json.dumps(results_json(results, settings), indent=2), encoding="utf-8"
    )
    return directory / "index.html"
