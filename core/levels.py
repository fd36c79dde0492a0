"""The levels the last conformance run gave each plugin, for ``dpplug list``.

``dpplug conform`` (the conformance package) records them; the core command line reads them. They
live in the user's cache directory (``$XDG_CACHE_HOME/dpplug/levels.json``), keyed by mechanism
name and source, and each records a fingerprint of the code it was earned by: the sources of the
plugin's top-level package and of dpplug itself (the contracts are part of what a level means).
A plugin edited without a new version, or checked by another dpplug, reads "stale", never its old
level.

Writers hold an exclusive lock on ``levels.json.lock`` while they read, update and atomically
replace the file, so concurrent runs never lose each other's entries. A damaged or wrong-shaped
file gives a warning and is rebuilt.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

STALE = "stale"


def levels_file() -> Path:
    """Where levels are recorded (the user cache directory)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dpplug" / "levels.json"


@functools.cache
def _package_digest(package: str) -> str:
    """sha256 of every Python source of the top-level *package* (relative path and content)."""
    digest = hashlib.sha256()
    spec = importlib.util.find_spec(package)
    if spec is None:
        return "unknown"
    roots = list(spec.submodule_search_locations or []) or [str(Path(spec.origin or "").parent)]
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def code_fingerprint(module: str) -> str:
    """The fingerprint of the code behind a mechanism defined in *module*: its top-level
    package's sources and dpplug's own."""
    top = module.split(".")[0]
    both = f"{_package_digest(top)}:{_package_digest('dpplug')}"
    return hashlib.sha256(both.encode()).hexdigest()


@contextmanager
def _locked() -> Iterator[Path]:
    path = levels_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield path
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _read(path: Path) -> dict[str, Any]:
    """The recorded levels; a damaged or wrong-shaped file warns and reads as empty."""
    if not path.exists():
        return {}
    try:
        known = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        warnings.warn(f"the levels cache {path} is unreadable ({exc}); it is rebuilt", stacklevel=3)
        return {}
    if not isinstance(known, dict) or not all(
        isinstance(value, dict) and isinstance(value.get("level"), str) for value in known.values()
    ):
        warnings.warn(f"the levels cache {path} has the wrong shape; it is rebuilt", stacklevel=3)
        return {}
    return known


def record_levels(levels: dict[tuple[str, str, str], str], settings_text: str) -> None:
    """Remember each (name, source, module) → level, with the settings of the run and the
    fingerprint of the code that earned it."""
    with _locked() as path:
        known = _read(path)
        for (name, source, module), level in levels.items():
            known[f"{name}@{source}"] = {
                "level": level,
                "settings": settings_text,
                "code": code_fingerprint(module),
            }
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as temporary:
            temporary.write(json.dumps(known, indent=1, sort_keys=True))
        os.replace(temporary.name, path)


def recorded_level(name: str, source: str, module: str) -> str | None:
    """The level the last ``dpplug conform`` gave this plugin at this source, :data:`STALE` if
    its code (or dpplug's) changed since, ``None`` if it was never checked."""
    entry = _read(levels_file()).get(f"{name}@{source}")
    if entry is None:
        return None
    if entry.get("code") != code_fingerprint(module):
        return STALE
    return str(entry["level"])
