"""``dpplug conform``: the conformance suite on the command line, added to the ``dpplug`` command
through the entry-point group ``dpplug.commands`` (so core never imports the suite).

Only the argument parser is built at start-up; the suite (scipy, matplotlib, hypothesis) is
imported when the command runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from dpplug.errors import BadParameter


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


def run(args: argparse.Namespace, out: Console) -> int:
    """Run the contracts on the named plugins (all by default); 1 if any plugin failed."""
    from dpplug.conformance.report import write_report
    from dpplug.conformance.results import Outcome, results_json
    from dpplug.conformance.runner import CONTRACTS, run_plugin
    from dpplug.conformance.settings import Settings
    from dpplug.levels import record_levels
    from dpplug.plugin_registry import registry

    report = _report_directory(args.report) if args.report else None
    reg = registry()
    entries = [reg.get(name) for name in args.names] if args.names else reg.entries()
    settings = Settings(mode=args.mode, seed=args.seed)
    progress_console = Console(stderr=True)
    results = []
    with Progress(
        *Progress.get_default_columns(), console=progress_console, transient=True
    ) as progress:
        task = progress.add_task("conformance", total=len(entries) * len(CONTRACTS))
        for entry in entries:

            def step(contract: str, _result: object, name: str = entry.name) -> None:
                progress.update(task, advance=1, description=f"{name}: {contract}")

            results.append(run_plugin(entry, settings, on_contract=step))
    record_levels({(r.name, r.source): r.level.value for r in results}, settings.describe())
    if report is not None:
        progress_console.print(f"report: {write_report(results, settings, report)}")
    if args.json:
        print(json.dumps(results_json(results, settings), indent=2))
        return 1 if any(r.failed for r in results) else 0
    table = Table(title="dpplug conformance", caption=settings.describe())
    table.add_column("plugin", no_wrap=True)
    table.add_column("level", no_wrap=True)
    for number in range(1, len(CONTRACTS) + 1):
        table.add_column(str(number), justify="center")
    marks = {
        Outcome.PASSED: "[green]✓[/green]",
        Outcome.FAILED: "[red]✗[/red]",
        Outcome.SKIPPED: "[dim]–[/dim]",
    }
    for result in results:
        table.add_row(result.name, result.level.value, *(marks[r.outcome] for r in result.results))
    out.print(table)
    out.print(
        "  ".join(f"{i}={name}" for i, name in enumerate(CONTRACTS, start=1))
        + "   ✓ passed, ✗ failed, – skipped"
    )
    for result in results:
        for r in result.results:
            if r.outcome is not Outcome.PASSED:
                out.print(f"{result.name} / {r.contract}: {r.outcome.value}: {r.detail}")
    return 1 if any(r.failed for r in results) else 0


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
