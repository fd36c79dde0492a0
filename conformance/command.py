"""``dpplug conform``: the conformance suite on the command line, added to the ``dpplug`` command
through the entry-point group ``dpplug.commands`` (so core never imports the suite).

Each plugin is checked in its own process (:mod:`.isolation`), several at once (``--jobs``,
default: one per core), each stopped after ``--timeout`` seconds. A row is printed as each plugin
finishes, so a run that is killed still shows what finished; the table fits 80 columns, and
under it a legend states each contract's power (:func:`power_legend`). A
quarantined (broken) plugin is a failed row and fails the run unless ``--allow-broken``.

Only the argument parser is built at start-up; the suite (scipy, matplotlib, hypothesis) is
imported when the command runs.
"""

from __future__ import annotations

import argparse
import json
import os
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from dpplug.conformance.requirement import REQUIRABLE, falls_short
from dpplug.errors import BadParameter

if TYPE_CHECKING:
    from dpplug.catalog import Listed
    from dpplug.conformance.results import PluginResult
    from dpplug.plugin_registry import Entry

#: The default time limit of one plugin's contracts, in seconds.
DEFAULT_TIMEOUT = 900


def add_command(commands: Any) -> None:
    """Add ``conform`` to the sub-command parsers *commands*."""
    conform = commands.add_parser("conform", help="check plugins against their contracts")
    conform.add_argument("names", nargs="*", metavar="NAME", help="plugins (default: all)")
    mode = conform.add_mutually_exclusive_group()
    mode.add_argument(
        "--fast",
        dest="mode",
        action="store_const",
        const="fast",
        help="smaller samples (a quick smoke run)",
    )
    mode.add_argument(
        "--full",
        dest="mode",
        action="store_const",
        const="full",
        help="larger samples (more power)",
    )
    conform.set_defaults(mode="default", run=run)
    conform.add_argument("--seed", type=int, default=0, help="seed of every statistical test")
    conform.add_argument("--json", action="store_true", help="print machine-readable results")
    conform.add_argument("--report", metavar="DIR", help="write an HTML report with plots")
    conform.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="plugins checked at once, each in its own process (default: one per core)",
    )
    conform.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"time limit of one plugin's contracts (default {DEFAULT_TIMEOUT})",
    )
    conform.add_argument(
        "--allow-broken",
        action="store_true",
        help="list plugins that failed to load without failing the run",
    )
    conform.add_argument(
        "--require",
        choices=REQUIRABLE,
        metavar="LEVEL",
        help="fail the run unless every plugin reaches LEVEL (declared, audited or "
        '"exactly verified")',
    )


def run(args: argparse.Namespace, out: Console) -> int:
    """Run the contracts on the named plugins (all by default); 1 if any plugin failed. Bad
    arguments are refused before the suite is even imported."""
    if args.jobs < 1 or args.timeout <= 0:
        raise BadParameter("--jobs must be at least 1 and --timeout positive")
    if args.seed < 0:
        raise BadParameter(f"--seed must be a non-negative integer, got {args.seed}")
    report = _report_directory(args.report) if args.report else None

    from dpplug.catalog import load_catalog
    from dpplug.conformance.isolation import Target, broken_result, run_isolated
    from dpplug.conformance.report import write_report
    from dpplug.conformance.results import results_json
    from dpplug.conformance.settings import Settings
    from dpplug.levels import BUILT_IN, record_levels

    settings = Settings(mode=args.mode, seed=args.seed)
    catalog = load_catalog(args.timeout)
    found: list[Entry | Listed] = (
        [catalog.find(name) for name in args.names]
        if args.names
        else [*catalog.builtins.entries(), *catalog.listed]
    )
    targets = {target.name: target for target in (Target.of(item) for item in found)}
    broken = [broken_result(b) for b in catalog.quarantined]
    start = time.monotonic()
    if not args.json:
        out.print(f"dpplug conform, {settings.describe()}", markup=False, highlight=False)
        out.print(_HEADER, highlight=False)
        for result in broken:
            out.print(_row(result), highlight=False)
    with _Activity(out, enabled=not args.json and out.is_terminal) as activity:

        def printer(result: PluginResult) -> None:
            if not args.json:
                activity.print(_row(result))

        results = run_isolated(
            targets.values(), settings, args.jobs, args.timeout, printer, activity.update
        )
    results.sort(key=lambda result: result.name)
    record_levels(  # every plugin this run checked, failed ones included; never a broken row
        {
            (r.name, r.source, targets[r.name].distribution or BUILT_IN): r.level.value
            for r in results
        },
        settings.describe(),
    )
    everything = results + broken
    if report is not None:
        Console(stderr=True).print(
            f"report: {write_report(everything, settings, report)}", markup=False
        )
    if args.json:
        print(json.dumps(results_json(everything, settings), indent=2))
    else:
        _summary(out, everything, time.monotonic() - start)
    failed = any(r.failed for r in results) or (broken and not args.allow_broken)
    short = _below(results, args.require)
    if short and not args.json:
        out.print(f"below the required level {args.require}: " + ", ".join(short), markup=False)
    return 1 if failed or short else 0


class _Activity:
    """On a terminal, one line under the rows saying which plugins run and which contract each
    is at, with a spinner; nothing on a pipe or with ``--json``. Rows print above it."""

    def __init__(self, out: Console, enabled: bool) -> None:
        self.out, self.enabled = out, enabled
        self.status: Any = None

    def __enter__(self) -> _Activity:
        if self.enabled:
            self.status = self.out.status("starting", spinner="dots")
            self.status.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self.status is not None:
            self.status.stop()

    def print(self, line: str) -> None:
        self.out.print(line, highlight=False)

    def update(self, running: dict[str, str]) -> None:
        if self.status is not None:
            text = ", ".join(f"{name}: {what}" for name, what in sorted(running.items()))
            self.status.update(escape(textwrap.shorten(text or "finishing", self.out.width - 4)))


def _below(results: list[PluginResult], required: str | None) -> list[str]:
    """The plugins of *results* below the *required* level (none when nothing is required)."""
    return [r.name for r in results if falls_short(r.level.value, required)]


_MARKS = {"passed": "[green]✓[/green]", "failed": "[red]✗[/red]", "skipped": "[dim]–[/dim]"}
_HEADER = f"1 2 3 4 5 6 7  {'level':<16} {'cells':>5} {'time':>6}  plugin"


def _row(result: PluginResult) -> str:
    """One line per plugin: a mark per contract, its level, how many of the surface × dimension
    cells its kind requires were covered, its time and its name."""
    marks = " ".join(_MARKS[r.outcome.value] for r in result.results) or "[red]✗[/red]" + " " * 12
    seconds = f"{result.seconds:5.0f}s"  # 6 characters, as the header's "time"
    required = len(result.required)
    cells = f"{required - len(result.uncovered)}/{required}" if required else "–"
    return f"{marks}  {result.level.value:<16} {cells:>5} {seconds}  {escape(result.name)}"


def power_legend(results: list[PluginResult]) -> str:
    """One line (wrapped at 80 columns) stating each contract's power: the smallest flaw it
    detects with probability ≥ 1/2, the weakest over *results* (docs/conformance.md)."""
    from dpplug.conformance.results import weakest_powers
    from dpplug.conformance.runner import CONTRACTS

    powers = weakest_powers(results)
    shown = "  ".join(
        f"{i}={powers[name]}" for i, name in enumerate(CONTRACTS, start=1) if name in powers
    )
    text = f"power (smallest flaw seen w.p. ≥ 1/2, weakest of the run): {shown or 'none'}"
    return "\n".join(textwrap.wrap(text, 80))


def _summary(out: Console, results: list[PluginResult], seconds: float) -> None:
    from dpplug.conformance.runner import CONTRACTS

    out.print(
        "  ".join(f"{i}={name}" for i, name in enumerate(CONTRACTS, start=1))
        + "   ✓ passed  ✗ failed  – skipped",
        highlight=False,
    )
    out.print(power_legend(results), markup=False, highlight=False)
    for result in results:
        if result.problem is not None:
            out.print(f"{result.name}: {result.problem}", markup=False, highlight=False)
        for r in result.results:
            if r.outcome.value != "passed":
                out.print(
                    f"{result.name} / {r.contract}: {r.outcome.value}: {r.detail}",
                    markup=False,
                    highlight=False,
                )
        if result.uncovered and not result.failed:
            cells = ", ".join(f"{s} × {d.value}" for s, d in result.uncovered)
            out.print(f"{result.name}: not reached: {cells}", markup=False, highlight=False)
    levels: dict[str, int] = {}
    for result in results:
        levels[result.level.value] = levels.get(result.level.value, 0) + 1
    counts = ", ".join(f"{count} {level}" for level, count in sorted(levels.items()))
    out.print(f"{len(results)} plugins in {seconds:.0f} s: {counts}", markup=False, highlight=False)


def _report_directory(text: str) -> Path:
    """The report's directory, created and checked writable before any contract runs."""
    directory = Path(text)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / ".dpplug-write-check"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise BadParameter(f"cannot write the report to {text}: {exc}") from None
    return directory
