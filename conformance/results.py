"""Results of the conformance suite: one :class:`ContractResult` per plugin × contract, and the
level a plugin reaches (declared → audited → exactly verified)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

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
    EXACTLY_VERIFIED = "exactly verified"  # … and the exact privacy check and the sampling law


#: The contracts each level needs, cumulatively.
_LEVEL_NEEDS = (
    (Level.DECLARED, ("declaration", "bad-input")),
    (Level.AUDITED, ("audit", "accuracy", "hygiene")),
    (Level.EXACTLY_VERIFIED, ("exact-privacy", "sampling-law")),
)


@dataclass(frozen=True)
class ContractResult:
    """One contract on one plugin. ``data`` holds what the report plots (floats, lists)."""

    contract: str
    outcome: Outcome
    detail: str
    data: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED


@dataclass(frozen=True)
class PluginResult:
    """Every contract's result for one plugin, how long they took, and what (if anything) kept
    them from running or finishing: a plugin that failed to load, timed out, crashed, or changed
    dpplug or the built-in mechanisms when it loaded (``problem``)."""

    name: str
    kind: str | None
    source: str
    results: tuple[ContractResult, ...]
    module: str = ""
    seconds: float = 0.0
    problem: str | None = None

    @property
    def failed(self) -> bool:
        return self.problem is not None or any(r.outcome is Outcome.FAILED for r in self.results)

    @property
    def level(self) -> Level:
        if self.failed:
            return Level.FAILED
        passed = {r.contract for r in self.results if r.passed}
        level = Level.NONE
        for candidate, needs in _LEVEL_NEEDS:
            if not set(needs) <= passed:
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
                r.contract: {"outcome": r.outcome.value, "detail": r.detail} for r in self.results
            },
        }


#: The version of the JSON document :func:`results_json` writes (``docs/conformance.md``).
JSON_FORMAT = "dpplug-conform/3"


def results_json(results: list[PluginResult], settings: Settings) -> dict[str, Any]:
    """The run as the JSON document of ``dpplug conform --json`` and the report's
    ``report.json``: its format, settings, and each plugin's level and contract outcomes
    (``"passed"``, ``"failed"`` or ``"skipped"``, with the detail line)."""
    return {
        "format": JSON_FORMAT,
        "settings": settings.describe(),
        "plugins": [result.as_dict() for result in results],
    }
