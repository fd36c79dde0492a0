"""Results of the conformance suite: one :class:`ContractResult` per plugin × contract, and the
level a plugin reaches (declared → audited → exactly verified)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any


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
    """Every contract's result for one plugin."""

    name: str
    kind: str
    source: str
    results: tuple[ContractResult, ...]

    @property
    def failed(self) -> bool:
        return any(r.outcome is Outcome.FAILED for r in self.results)

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
        return {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "level": self.level.value,
            "contracts": {
                r.contract: {"passed": r.passed, "outcome": r.outcome.value, "detail": r.detail}
                for r in self.results
            },
        }


def levels_file() -> Path:
    """Where ``dpplug conform`` records levels for ``dpplug list`` (the user cache directory)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dpplug" / "levels.json"


def record_levels(results: list[PluginResult], settings_text: str) -> None:
    """Remember each plugin's level, keyed by name and source (distribution and version)."""
    path = levels_file()
    try:
        known = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, json.JSONDecodeError):
        known = {}
    for result in results:
        known[f"{result.name}@{result.source}"] = {
            "level": result.level.value,
            "settings": settings_text,
        }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(known, indent=1, sort_keys=True))


def recorded_level(name: str, source: str) -> str | None:
    """The level the last ``dpplug conform`` gave this plugin at this source, if any."""
    try:
        known = json.loads(levels_file().read_text())
    except (OSError, json.JSONDecodeError):
        return None
    entry = known.get(f"{name}@{source}")
    return None if entry is None else str(entry["level"])
