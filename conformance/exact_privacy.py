"""Contract 3, exact privacy: the declared guarantee holds exactly, in rationals, on every pair of
neighbouring small inputs of every conformance case (no statistics, so no false alarms).

First, where the code can be replayed with scripted randomness (:mod:`.replay`), the law of what
the implementation does is compared exactly with the law it declares, so a plugin cannot pass on
a correct declaration and a different implementation. Then each kind's probe enumerates its
neighbouring inputs and their exact output laws (a sampler's
pmfs over every count, a selector's per-partition laws up to saturation, a releaser's release
laws over tiny datasets) and compares them with :mod:`.divergence`: the largest likelihood ratio
against e^ε for a pure guarantee, the hockey-stick divergence at e^ε against δ for an approximate
one. A case whose laws cannot be computed skips the contract with the reason.

A sampler whose probabilities are irrational (the discrete Gaussian) declares an enclosed law
instead (docs/conformance.md#enclosed-laws): its guarantee is proved or refuted from rigorous
bounds on the divergences, and its code, whose rejection loops have no end, is replayed down to
a budget of path probability; the power then states the largest deviation of the code from its
declared law that the replay can miss (the unexplored mass). Likewise where a draw is too large
to compare value by value (a bounded sampler's u with large d, a large last draw of a replay),
values are compared at every step of the declared law and at random points, and the power
states the smallest deviation those random points see with probability at least 1/2.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain

from dpplug.conformance.checks import run_checks
from dpplug.conformance.coverage import Cell, Status, cell
from dpplug.conformance.probes import generated_probes, probes, text_probes
from dpplug.conformance.probes.base import Probe
from dpplug.conformance.results import ContractResult, Outcome
from dpplug.conformance.settings import Settings
from dpplug.errors import NotSupported
from dpplug.plugin_registry import Entry
from dpplug.surfaces import Dimension

NAME = "exact-privacy"


def _generated(entry: Entry, settings: Settings) -> Iterator[Probe]:
    """The generated probes, built only once every declared case has passed, then the first
    declared case with each other value of each text parameter (every trusted sampler)."""
    yield from generated_probes(entry, settings)
    yield from text_probes(entry, settings)


def check(entry: Entry, settings: Settings) -> ContractResult:
    declared = list(probes(entry))
    shown: list[str] = []
    checked, code_tv, code_seen = 0, 0.0, False
    cells: list[Cell] = []
    for probe in chain(declared, _generated(entry, settings)):
        try:
            implementation = probe.implementation_check(settings)
            if implementation.failures:  # a finding even where the laws cannot be enumerated
                failure = implementation.failures[0]
                detail = f"{probe.where}: it does not do what it declares: {failure}"
                return ContractResult(NAME, Outcome.FAILED, detail)
            result = probe.exact_privacy(settings)
        except NotSupported as exc:
            if probe not in declared:
                continue  # a generated case too large to enumerate is simply not checked
            raise NotSupported(f"{probe.where}: {exc}") from None
        if result.failures:
            return ContractResult(NAME, Outcome.FAILED, f"{probe.where}: {result.failures[0]}")
        checked += 1
        code_tv = max(code_tv, implementation.code_tv)
        code_seen = code_seen or (bool(implementation.summary) and implementation.code_tv < 1)
        cells += [*implementation.cells, *result.cells]
        shown += [text for text in (implementation.summary, result.summary) if text]
    cases = f"{len(declared)} declared and {checked - len(declared)} generated cases"
    found, more = run_checks(declared, NAME, settings)
    if found is not None:
        return ContractResult(NAME, Outcome.FAILED, found)
    cells += more
    probe = declared[0]
    cells.append(
        cell(
            probe.law_surface,
            Dimension.RELATIONS,
            Status.EXACT,
            f"every neighbouring pair of small inputs on {cases}",
        )
    )
    for surface in probe.call_surfaces:
        cells.append(
            cell(surface, Dimension.LAW, Status.EXACT, "the code replayed against the law")
            if code_seen
            else cell(surface, Dimension.LAW, Status.INFEASIBLE, "the code is not replayed")
        )
    return ContractResult(
        NAME,
        Outcome.PASSED,
        f"{cases}: " + "; ".join(dict.fromkeys(shown)) + " (every pair)",
        power=f"any (code: TV {code_tv:.2g})" if code_tv else "any",
        weakness=code_tv,
        cells=tuple(cells),
    )
