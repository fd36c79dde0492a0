"""Running the checks probes add along the surface × dimension matrix
(:meth:`~dpplug.conformance.probes.base.Probe.checks`), inside the contract each names."""

from __future__ import annotations

from dpplug.conformance.coverage import Cell, Status, cell
from dpplug.conformance.probes.base import Probe
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported


def run_checks(
    declared: list[Probe], contract: str, settings: Settings
) -> tuple[str | None, list[Cell]]:
    """The checks of *contract* on the first declared case's probe (their cost: large calls,
    sizes up to the schema's limits), and those marked ``every_case`` on every declared case's:
    the first failure, in words, if any, and the cells they covered (or could not reach, with
    the reason)."""
    cells: list[Cell] = []
    for index, probe in enumerate(declared):
        for check in probe.checks(settings):
            if check.contract != contract or (index and not check.every_case):
                continue
            try:
                problems = check.run(settings)
            except NotSupported as exc:
                why = f"{check.what}: {exc}"
                cells += [cell(s, d, Status.INFEASIBLE, why) for s, d in check.covers]
                continue
            if problems:
                return f"{probe.where}: {check.what}: {problems[0]}", cells
            cells += [cell(s, d, check.status, check.what) for s, d in check.covers]
    return None, cells
