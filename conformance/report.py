"""The conformance report, written by ``dpplug conform --report DIR``: ``index.html``, the plots it
shows, and ``report.json`` (the document ``--json`` prints).

The page is made to be read at a glance on a 1280-pixel screen. It opens with the run's settings,
what each level means, and a summary grid: plugin × contract (✓ ✗ –, a warning sign where a
passed contract's power says it could see nothing), each plugin's level and how many of the
surface × dimension cells its kind requires were covered, and each contract's power in words
under its mark, the run's weakest in the last row. Then one section per plugin, folded unless it
failed: its problem (if any), its contracts (outcome, power in words, the detail with repeated
sentences counted once), its coverage matrix (surfaces × dimensions, each cell exact, checked,
sampled, infeasible or not reached, with how on hover and the gaps spelt out below), and its
plots, three to a row: the declared law against the empirical frequencies (the most likely
outputs, the rest as "other", so bars stay visible), declared against empirical accuracy or the
keep-probability curve, and the declared ε against the audit's lower bound per case (a bound of
0 drawn as a tick, a failing case in red, also when the audit failed).
"""

from __future__ import annotations

import html
import json
import re
import textwrap
from collections.abc import Callable
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
from dpplug.surfaces import Dimension

_MARKS = {Outcome.PASSED: "✓", Outcome.FAILED: "✗", Outcome.SKIPPED: "–"}
_LEVELS = {
    Level.EXACTLY_VERIFIED: ("#1a7f37", "every contract passed and every required cell covered"),
    Level.AUDITED: (
        "#4d8f2d",
        "audit, accuracy and hygiene pass; the exact checks or some cells not",
    ),
    Level.DECLARED: ("#9a6700", "declaration and bad input pass; audit, accuracy or hygiene not"),
    Level.NONE: ("#6e7781", "not even the declaration could be checked"),
    Level.FAILED: ("#cf222e", "a contract failed, or the plugin is broken, hung or crashed"),
}
#: How each cell of the coverage matrix is shown: (mark, class).
_CELLS = {
    "exact": ("E", "exact"),
    "checked": ("C", "checked"),
    "sampled": ("S", "sampled"),
    "infeasible": ("I", "infeasible"),
    "not reached": ("✗", "unreached"),
}
#: Kinds whose outputs are numbers (the others' probes code each whole release as an integer).
_READABLE_OUTPUTS = ("sampler", "partition-selector")
#: The most outputs a law plot shows one by one (the rest are one "other" bar): numbers, and
#: whole releases (named in the caption).
_SHOWN_OUTPUTS = 24
_NAMED_OUTPUTS = 10
_STYLE = """body{font-family:system-ui,sans-serif;margin:1.2em auto;max-width:78em;padding:0 1em}
table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #d0d7de;padding:2px 7px}
th{background:#f6f8fa;text-align:left}td.mark{text-align:center;font-weight:bold}
.passed{color:#1a7f37}.failed{color:#cf222e;background:#ffebe9}.skipped{color:#6e7781}
.weak{color:#9a6700;background:#fff8c5}.level{font-weight:bold}small{color:#57606a}
details{margin:.3em 0}summary{cursor:pointer}section{border-top:1px solid #d0d7de;margin:.6em 0}
section>details>summary{font-size:1.15em;padding:.3em 0}section h2{display:inline;font-size:1em}
.problem{color:#cf222e;font-weight:bold}.detail td{font-size:90%;vertical-align:top}
.matrix td{text-align:center;font-size:90%;min-width:3.2em}.matrix th{font-size:90%}
.exact{background:#d1f0d8;color:#116329}.checked{background:#ddf4ff;color:#0a3069}
.sampled{background:#eef6ff;color:#0550ae}.infeasible{background:#f6f8fa;color:#6e7781}
.unreached{background:#ffebe9;color:#cf222e;font-weight:bold}
.plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(400px,1fr));gap:8px}
.plots figure{margin:0}.plots img{width:100%;border:1px solid #eee}
figcaption{font-size:85%;color:#57606a}"""
#: Opens the section a link or the page's address names (fragment navigation does not open a
#: folded section by itself), and every section when the address ends in ``?open``.
_SCRIPT = """function show(){var id=decodeURIComponent(location.hash.slice(1));
var e=id&&document.getElementById(id);if(e&&e.tagName==='SECTION'){e.firstElementChild.open=true;
e.scrollIntoView();}if(location.search==='?open'){document.querySelectorAll('section>details')
.forEach(function(d){d.open=true;});}}window.addEventListener('hashchange',show);
window.addEventListener('load',show);"""


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in name)


# --------------------------------------------------------------------------- powers in words


def power_words(power: str) -> tuple[str, bool]:
    """What a contract's *power* (``ContractResult.power``) means, in words, and whether it is
    a warning: the check could see no flaw at all (a total-variation distance of 1, or
    ``none``), so its ✓ says nothing."""
    number = r"([0-9.e+-]+)"
    if power in ("", "any"):
        return ("exact: a flaw of any size is found" if power else "", False)
    if power == "any tried":
        return "deterministic: any flaw on the inputs it tried", False
    if power == "any seen":
        return "deterministic: any flaw in the calls it made", False
    if power == "none":
        return "no power: none of its tests could see a flaw", True
    if found := re.fullmatch(rf"any \(code: TV {number}\)", power):
        tv = float(found[1])
        if tv >= 1:
            return "the declared law exactly; the code's own draws unchecked (TV 1)", True
        return f"the declared law exactly; the code off by TV {found[1]} is seen", False
    if found := re.fullmatch(rf"TV {number}", power):
        tv = float(found[1])
        if tv >= 1:
            return "no power: only a law 100% away would be seen (TV 1)", True
        return f"a law {tv:.0%} away (total variation) is seen", False
    if found := re.fullmatch(rf"Δε {number}", power):
        return f"an ε {found[1]} above the declared one is seen", False
    if found := re.fullmatch(rf"{number}β", power):
        return f"a failure rate {found[1]} times the declared β is seen", False
    return power, False


def _power_cell(power: str, signed: bool = True) -> str:
    """*power* with its words on hover, and a warning sign if it sees nothing (unless
    *signed* is false: the mark above it says so already)."""
    words, weak = power_words(power)
    sign = "⚠ " if weak and signed else ""
    return f'<small title="{html.escape(words)}">{sign}{html.escape(power)}</small>'


# --------------------------------------------------------------------------- plots


def _title(axes: Any, text: str) -> None:
    lines = textwrap.wrap(text, 58)
    shown = lines[:2] if len(lines) <= 2 else [lines[0], lines[1][:55] + "…"]
    axes.set_title("\n".join(shown), fontsize=9)


def _figure(height: float = 2.9) -> tuple[Any, Any]:
    figure, axes = plt.subplots(figsize=(4.6, height), dpi=100)
    axes.tick_params(labelsize=8)
    return figure, axes


def _save(figure: Any, path: Path) -> str:
    """Write *figure* to *path*, close it, and return the file's name for the page."""
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path.name


def _legend(axes: Any) -> None:
    axes.legend(fontsize=7, loc="best", framealpha=0.85)


def _law_plot(result: PluginResult, data: dict[str, Any], path: Path) -> tuple[str, str]:
    """Declared law against empirical frequencies. A sampler's or selector's outputs are
    numbers, shown on the axis (the most likely :data:`_SHOWN_OUTPUTS` if there are more); other
    kinds' outputs are whole releases coded as integers by the probe, so the most likely
    :data:`_NAMED_OUTPUTS` are numbered by probability and named in the caption."""
    outputs = [int(v) for v in data["outputs"]]
    declared = [float(v) for v in data["declared"]]
    empirical = [float(v) for v in data["empirical"]]
    shown = [str(v) for v in (outputs if data.get("shown") is None else data["shown"])]
    if not len(outputs) == len(declared) == len(empirical) == len(shown):
        raise ValueError("outputs, frequencies and names differ in length")
    readable = result.kind in _READABLE_OUTPUTS
    limit = _SHOWN_OUTPUTS if readable else _NAMED_OUTPUTS
    order = sorted(range(len(outputs)), key=lambda i: (-declared[i], -empirical[i], outputs[i]))
    kept = sorted(order[:limit], key=lambda i: outputs[i]) if readable else order[:limit]
    dropped = order[limit:]
    labels = [shown[i] if readable else str(rank) for rank, i in enumerate(kept, 1)]
    heights = [declared[i] for i in kept]
    dots = [empirical[i] for i in kept]
    if dropped:
        labels.append("other")
        heights.append(sum(declared[i] for i in dropped))
        dots.append(sum(empirical[i] for i in dropped))
    positions = list(range(len(labels)))
    figure, axes = _figure()
    axes.bar(positions, heights, 0.8, color="#9ecae1", edgecolor="#3182bd", label="declared law")
    axes.plot(positions, dots, "k.", markersize=5, label="empirical frequency")
    step = max(1, -(-len(labels) // 12))  # at most 12 tick labels
    ticks = [p for p in positions if p % step == 0 or labels[p] == "other"]
    axes.set_xticks(ticks, [labels[p] for p in ticks], fontsize=7)
    if readable:
        axes.set_xlabel("output", fontsize=8)
    else:
        axes.set_xlabel("release, numbered by declared probability (named below)", fontsize=8)
    axes.set_ylabel("probability", fontsize=8)
    _title(axes, f"{result.name}: {data['case']}")
    _legend(axes)
    caption = "Declared law (bars) and the frequencies of real draws (dots)"
    if readable:
        caption += f", the {limit} most likely outputs, 'other' the rest." if dropped else "."
    else:
        names = "; ".join(f"{rank} = {shown[i]}" for rank, i in enumerate(kept, 1))
        caption += f": {names}" + ("; other = every other release." if dropped else ".")
    return _save(figure, path), caption


def _accuracy_plot(result: PluginResult, data: dict[str, Any], path: Path) -> tuple[str, str]:
    figure, axes = _figure()
    positions = range(len(data["betas"]))
    axes.bar(
        [p - 0.2 for p in positions],
        data["declared_a"],
        0.4,
        color="#9ecae1",
        edgecolor="#3182bd",
        label="declared a",
    )
    axes.bar(
        [p + 0.2 for p in positions],
        data["empirical_quantile"],
        0.4,
        color="#636363",
        label="empirical (1−β)-quantile",
    )
    axes.set_xticks(list(positions), [f"β = {b}" for b in data["betas"]], fontsize=8)
    axes.set_ylabel("|error|", fontsize=8)
    _title(axes, f"{result.name}: {data['case']}")
    _legend(axes)
    caption = "The declared error bound a against the error real draws exceed w.p. β."
    return _save(figure, path), caption


def _keep_curve_plot(result: PluginResult, data: dict[str, Any], path: Path) -> tuple[str, str]:
    figure, axes = _figure()
    axes.step(data["units"], data["keep"], where="post", label="declared π(n)")
    empirical = data["empirical"]
    axes.plot(
        [int(n) for n in empirical],
        list(empirical.values()),
        "k.",
        markersize=5,
        label="empirical rate",
    )
    axes.set_xlabel("privacy units in the partition", fontsize=8)
    axes.set_ylabel("keep probability", fontsize=8)
    axes.xaxis.set_major_locator(MaxNLocator(nbins=8, integer=True))
    _title(axes, f"{result.name}: {data['case']}")
    _legend(axes)
    return _save(figure, path), "The declared keep probability against the kept fraction."


def _audit_plot(result: PluginResult, data: dict[str, Any], path: Path) -> tuple[str, str]:
    cases = data["cases"]
    names = list(cases)
    declared = [float(cases[c]["declared"]) for c in names]
    lower = [float(cases[c]["lower"]) for c in names]
    figure, axes = _figure(1.2 + 0.42 * len(names))
    rows = range(len(names))
    axes.barh(
        [r + 0.2 for r in rows],
        declared,
        0.4,
        color="#9ecae1",
        edgecolor="#3182bd",
        label="declared ε",
    )
    pairs = zip(lower, declared, strict=True)
    colours = ["#cf222e" if low > dec else "#636363" for low, dec in pairs]
    axes.barh([r - 0.2 for r in rows], lower, 0.4, color=colours, label="audited lower bound")
    axes.plot(lower, [r - 0.2 for r in rows], "|", color="#24292f", markersize=9, mew=2)
    span = max([*declared, *lower, 1e-9])
    for r, value in zip(rows, lower, strict=True):
        axes.annotate(
            f"{value:.2f}" if value > 0 else "0: nothing proved",
            (value, r - 0.2),
            xytext=(3, 0),
            textcoords="offset points",
            va="center",
            fontsize=7,
        )
    axes.set_xlim(0, span * 1.75)  # room on the right for the legend
    shown = ["\n".join(textwrap.wrap(name, 28)[:2]) for name in names]
    axes.set_yticks(list(rows), shown, fontsize=7)
    axes.set_xlabel("ε", fontsize=8)
    _title(axes, f"{result.name}: privacy audit")
    axes.legend(fontsize=7, loc="center right", framealpha=0.85)
    caption = (
        "Per case, the declared ε and the largest ε the audit proves from real draws (a tick "
        "at 0 where nothing was proved); red where it exceeds the declared ε."
    )
    return _save(figure, path), caption


_Plot = Callable[[PluginResult, dict[str, Any], Path], tuple[str, str]]


def _plots(result: PluginResult, directory: Path) -> list[tuple[str, str]]:
    """Each plot (file name, caption); a plot whose data is malformed (a worker's data is
    untrusted) is left out with a note."""
    chosen: list[tuple[str, _Plot, dict[str, Any]]] = []
    for r in result.results:
        if not r.data:
            continue
        if r.contract == "sampling-law":
            chosen.append(("law", _law_plot, r.data))
        elif r.contract == "accuracy":
            kind = "keep" if "units" in r.data else "accuracy"
            chosen.append((kind, _keep_curve_plot if "units" in r.data else _accuracy_plot, r.data))
        elif r.contract == "audit" and r.data.get("cases"):
            chosen.append(("audit", _audit_plot, r.data))
    figures = []
    for kind, plot, data in chosen:
        path = directory / f"{_slug(result.name)}-{kind}.png"
        try:
            figures.append(plot(result, data, path))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            plt.close("all")
            figures.append(("", f"({kind} plot left out: its data is malformed: {exc})"))
    return figures


# --------------------------------------------------------------------------- the page


def _level(level: Level) -> str:
    colour, meaning = _LEVELS[level]
    return f'<span class="level" style="color:{colour}" title="{meaning}">{level.value}</span>'


def _cells_text(result: PluginResult) -> str:
    required = len(result.required)
    return f"{required - len(result.uncovered)}/{required}" if required else "–"


def _summary(results: list[PluginResult]) -> str:
    header = "".join(f'<th title="{name}">{i} {name}</th>' for i, name in enumerate(CONTRACTS, 1))
    rows = []
    for result in results:
        outcomes = {r.contract: r for r in result.results}
        cells = []
        for contract in CONTRACTS:
            r = outcomes.get(contract)
            if r is None:
                cells.append('<td class="mark failed" title="did not run">✗</td>')
                continue
            words, weak = power_words(r.power)
            state = "weak" if weak and r.passed else r.outcome.value
            mark = "⚠" if weak and r.passed else _MARKS[r.outcome]
            tip = html.escape(f"{contract}: {r.detail}" + (f" — power: {words}" if words else ""))
            power = f"<br>{_power_cell(r.power, signed=not r.passed)}" if r.power else ""
            cells.append(f'<td class="mark {state}" title="{tip}">{mark}{power}</td>')
        name = html.escape(result.name)
        rows.append(
            f'<tr><th><a href="#{_slug(result.name)}">{name}</a></th>'
            f"<td>{html.escape(result.kind or '?')}</td><td>{_level(result.level)}</td>"
            f'<td class="mark">{_cells_text(result)}</td>{"".join(cells)}</tr>'
        )
    powers = weakest_powers(results)
    weakest = "".join(
        f'<td class="mark">{_power_cell(powers.get(name, ""))}</td>' for name in CONTRACTS
    )
    words = "".join(
        f"<li>{i} {name}: {html.escape(power_words(powers[name])[0])}</li>"
        for i, name in enumerate(CONTRACTS, 1)
        if powers.get(name)
    )
    return (
        f"<table><tr><th>plugin</th><th>kind</th><th>level</th><th>cells</th>{header}</tr>"
        f"{''.join(rows)}"
        f'<tr><th colspan="4">power: the weakest of the run</th>{weakest}</tr></table>'
        "<p><small>✓ passed, ✗ failed, – skipped (not applicable), ⚠ passed but could see "
        "nothing (hover a mark for its detail). <b>cells</b>: the surface × dimension cells the "
        "kind requires that some check covered. Under each mark, the contract's <b>power</b>, "
        "the smallest flaw it detects with probability ≥ 1/2; the weakest of the run, in "
        f"words:</small></p><ul><small>{words}</small></ul>"
    )


def condensed(detail: str) -> str:
    """*detail* with each clause (split at "; ") said once, a repeated one counted: a long run
    of one sentence (one per generated case, say) reads as one line."""
    counts: dict[str, int] = {}
    for clause in detail.split("; "):
        counts[clause] = counts.get(clause, 0) + 1
    return "; ".join(f"{c} (×{n})" if n > 1 else c for c, n in counts.items())


def _contracts(result: PluginResult) -> str:
    rows = "".join(
        f'<tr><td>{html.escape(r.contract)}</td><td class="{r.outcome.value}">'
        f"{r.outcome.value}</td><td>{_power_cell(r.power)}<br><small>"
        f"{html.escape(power_words(r.power)[0])}</small></td>"
        f"<td>{html.escape(condensed(r.detail))}</td></tr>"
        for r in result.results
    )
    opened = " open" if result.failed else ""
    return (
        f"<details{opened}><summary>contracts</summary>"
        '<table class="detail"><tr><th>contract</th><th>outcome</th><th>power</th>'
        f"<th>detail</th></tr>{rows}</table></details>"
    )


def _matrix(result: PluginResult) -> str:
    """The coverage matrix: surfaces × dimensions, each cell's status, its how on hover, and
    below, each cell not covered with why."""
    coverage = result.coverage()
    if not coverage:
        return ""
    present = {d for cells in coverage.values() for d in cells}
    dimensions = [d.value for d in Dimension if d.value in present]
    header = "".join(f"<th>{d}</th>" for d in dimensions)
    rows, gaps = [], []
    for surface, cells in coverage.items():
        row = [f"<th>{html.escape(surface)}</th>"]
        for dimension in dimensions:
            cell = cells.get(dimension)
            if cell is None:
                row.append("<td></td>")
                continue
            mark, css = _CELLS.get(cell["status"], ("?", ""))
            how = f"{cell['status']}: {cell['how']}"
            row.append(f'<td class="{css}" title="{html.escape(how)}">{mark}</td>')
            if cell["status"] in ("infeasible", "not reached"):
                gaps.append(f"<li>{html.escape(surface)} × {dimension}: {html.escape(how)}</li>")
        rows.append(f"<tr>{''.join(row)}</tr>")
    legend = "E exact · C checked · S sampled · I infeasible · ✗ not reached (hover a cell)"
    return (
        f"<details open><summary>coverage: {_cells_text(result)} required cells</summary>"
        f'<table class="matrix"><tr><th>surface</th>{header}</tr>{"".join(rows)}</table>'
        f"<small>{legend}</small>"
        + (f"<ul><small>{''.join(gaps)}</small></ul>" if gaps else "")
        + "</details>"
    )


def _section(result: PluginResult, directory: Path) -> str:
    slug = _slug(result.name)
    parts = []
    if result.problem:
        parts.append(f'<p class="problem">{html.escape(result.problem)}</p>')
    if result.results:
        parts.append(_contracts(result))
    parts.append(_matrix(result))
    figures = "".join(
        f'<figure><img src="{name}" alt="{name}"><figcaption>{html.escape(caption)}'
        "</figcaption></figure>"
        if name
        else f"<figure><figcaption>{html.escape(caption)}</figcaption></figure>"
        for name, caption in _plots(result, directory)
    )
    if figures:
        parts.append(f'<div class="plots">{figures}</div>')
    opened = " open" if result.failed else ""
    head = (
        f"<h2>{html.escape(result.name)}</h2> — {_level(result.level)} "
        f"<small>{html.escape(result.kind or 'unknown kind')} from "
        f"{html.escape(result.source)}, {result.seconds:.1f} s</small>"
    )
    return (
        f'<section id="{slug}"><details{opened}><summary>{head}</summary>'
        f"{''.join(parts)}</details></section>"
    )


def write_report(results: list[PluginResult], settings: Settings, directory: Path) -> Path:
    """Write ``index.html``, ``report.json`` and the plots into *directory*."""
    directory.mkdir(parents=True, exist_ok=True)
    levels = " · ".join(f"{_level(level)}: {text}" for level, (_, text) in _LEVELS.items())
    sections = "\n".join(_section(result, directory) for result in results)
    page = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>dpplug conformance</title><style>{_STYLE}</style><script>{_SCRIPT}</script></head><body>
<h1>dpplug conformance report</h1>
<p>{html.escape(settings.describe())}. Statistical contracts split their false-alarm rate by
Bonferroni over their tests; exact contracts use rational arithmetic and have no false alarms.</p>
<p><small>{levels}</small></p>
{_summary(results)}
<p><small>One section per plugin below (failed ones open); a plugin's name in the grid opens
its section.</small></p>
{sections}
</body></html>"""
    (directory / "index.html").write_text(page, encoding="utf-8")
    (directory / "report.json").write_text(
        json.dumps(results_json(results, settings), indent=2), encoding="utf-8"
    )
    return directory / "index.html"
