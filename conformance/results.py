"""Results of the conformance suite: one :class:`ContractResult` per plugin × contract, the
surface × dimension matrix they cover (:mod:`.coverage`), and the level a plugin reaches
(declared → audited → exactly verified)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from dpplug.conformance.coverage import Cell, Key, matrix, uncovered

if TYPE_CHECKING:
    from dpplug.conformance.settings import Settings


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class Level(StrEnum):
    """What a plugin's passed contracts establish."""

    FAILED = "failed"  # some contract failed
    NONE = "none"  # not even the declaration could be checked
    DECLARED = "declared"  # declaration and bad input pass
    AUDITED = "audited"  # … and the black-box audit, accuracy and hygiene pass
    #: … and the exact privacy check and the sampling law, with every cell of the surface ×
    #: dimension matrix the kind requires covered (:mod:`.coverage`)
    EXACTLY_VERIFIED = "exactly verified"


#: The contracts each level needs, cumulatively.
_LEVEL_NEEDS = (
    (Level.DECLARED, ("declaration", "bad-input")),
    (Level.AUDITED, ("audit", "accuracy", "hygiene")),
    (Level.EXACTLY_VERIFIED, ("exact-privacy", "sampling-law")),
)


@dataclass(frozen=True)
class ContractResult:
    """One contract on one plugin. ``data`` holds what the report plots (floats, lists).

    ``power`` states, for a passed contract, the smallest flaw it detects with probability at
    least 1/2 ("any" for an exact or deterministic check; a total-variation distance, an ε
    excess or an overclaim factor for a statistical one), and ``weakness`` orders the powers of
    one contract (larger: only larger flaws are seen), so that a run can state its weakest.
    ``cells`` are the surface × dimension cells its checks covered (or could not reach).
    """

    contract: str
    outcome: Outcome
    detail: str
    data: dict[str, Any] = field(default_factory=dict, compare=False)
    power: str = field(default="", compare=False)
    weakness: float = field(default=0.0, compare=False)
    cells: tuple[Cell, ...] = field(default=(), compare=False)

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED


@dataclass(frozen=True)
class PluginResult:
    """Every contract's result for one plugin, how long they took, and what (if anything) kept
    them from running or finishing: a plugin that failed to load, timed out, crashed, or changed
    dpplug or the built-in mechanisms when it loaded (``problem``); and the cells of the surface
    × dimension matrix its kind requires of it (``required``)."""

    name: str
    kind: str | None
    source: str
    results: tuple[ContractResult, ...]
    module: str = ""
    seconds: float = 0.0
    problem: str | None = None
    required: tuple[Key, ...] = ()

    @property
    def failed(self) -> bool:
        return self.problem is not None or any(r.outcome is Outcome.FAILED for r in self.results)

    @property
    def cells(self) -> dict[Key, Cell]:
        """The strongest report of each cell over every contract (:func:`.coverage.matrix`)."""
        return matrix(c for r in self.results for c in r.cells)

    @property
    def uncovered(self) -> list[Key]:
        """The required cells no contract covered."""
        return uncovered(self.required, self.cells)

    @property
    def level(self) -> Level:
        if self.failed:
            return Level.FAILED
        passed = {r.contract for r in self.results if r.passed}
        level = Level.NONE
        for candidate, needs in _LEVEL_NEEDS:
            if not set(needs) <= passed:
                break
            if candidate is Level.EXACTLY_VERIFIED and self.uncovered:
                break
            level = candidate
        return level

    def as_dict(self) -> dict[str, Any]:
        """This plugin's part of :func:`results_json`."""
        return {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "level": self.level.value,
            "seconds": round(self.seconds, 2),
            "problem": self.problem,
            "contracts": {
                r.contract: {"outcome": r.outcome.value, "detail": r.detail, "power": r.power}
                for r in self.results
            },
            "coverage": self.coverage(),
        }

    def coverage(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The matrix as {surface: {dimension: {"status", "how"}}}, required cells first (an
        uncovered one as ``"status": "not reached"``), then any other cell a check reported."""
        cells = self.cells
        shown: dict[str, dict[str, dict[str, Any]]] = {}
        for surface, dimension in (*self.required, *self.cells):
            found = cells.get((surface, dimension))
            entry = (
                found.as_dict()
                if found is not None
                else {"status": "not reached", "how": "no check covers it"}
            )
            shown.setdefault(surface, {})[dimension.value] = entry
        return shown


def weakest_powers(results: list[PluginResult]) -> dict[str, str]:
    """Per contract, the weakest power its passed results state over *results*."""
    weakest: dict[str, ContractResult] = {}
    for result in results:
        for r in result.results:
            if r.power and (r.contract not in weakest or r.weakness > weakest[r.contract].weakness):
                weakest[r.contract] = r
    return {contract: r.power for contract, r in weakest.items()}


#: The version of the JSON document :func:`results_json` writes (``docs/conformance.md``).
JSON_FORMAT = "dpplug-conform/4"


def results_json(results: list[PluginResult], settings: Settings) -> dict[str, Any]:
    """The run as the JSON document of ``dpplug conform --json`` and the report's
    ``report.json``: its format, settings, and each plugin's level and contract outcomes
    (``"passed"``, ``"failed"`` or ``"skipped"``, with the detail line)."""
    return {
        "format": JSON_FORMAT,
        "settings": settings.describe(),
        "plugins": [result.as_dict() for result in results],
    }
