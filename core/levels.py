"""The levels the last conformance run gave each plugin, for ``dpplug list``.

``dpplug conform`` (the conformance package) records them; the core command line reads them. They
live in the user's cache directory (``$XDG_CACHE_HOME/dpplug/levels.json``), keyed by mechanism
name and source (distribution and version).
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def levels_file() -> Path:
    """Where levels are recorded (the user cache directory)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dpplug" / "levels.json"


def record_levels(levels: dict[tuple[str, str], str], settings_text: str) -> None:
    """Remember each (name, source) → level, with the settings of the run that gave it."""
    path = levels_file()
    try:
        known = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, json.JSONDecodeError):
        known = {}
    for (name, source), level in levels.items():
        known[f"{name}@{source}"] = {"level": level, "settings": settings_text}
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
