"""The levels the last conformance run gave each plugin, for ``dpplug list``.

``dpplug conform`` (the conformance package) records them, from its parent process only, which
never runs plugin code; the core command line reads them. They live in the user's cache
directory (``$XDG_CACHE_HOME/dpplug/levels.json``), keyed by mechanism name and source, and each
records a fingerprint of the code it was earned by (:func:`code_fingerprint`): every file of the
plugin's distribution and dpplug's own sources — the core, the built-in mechanisms and the
conformance suite, since the contracts are part of what a level means. A plugin or a contract
edited without a new version, or checked by another dpplug, reads "stale", never its old level.
The fingerprint is read from the files on disk, never from the plugin's classes (which may say
they were defined anywhere).

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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

STALE = "stale"
#: The distribution of dpplug's own built-in mechanisms.
BUILT_IN = "dpplug"
#: dpplug's packages that a level depends on: the core, the built-ins and the suite (not the
#: framework adapters, which no contract runs).
_OWN_PACKAGES = ("dpplug", "dpplug.plugins", "dpplug.conformance")
_NOT_OWN = "dpplug.adapters"


def levels_file() -> Path:
    """Where levels are recorded (the user cache directory)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dpplug" / "levels.json"


def _roots(package: str) -> list[Path]:
    """The folders (or the one file) of the importable *package*, found without running it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return [Path(root) for root in spec.submodule_search_locations]
    return [Path(spec.origin)] if spec.origin and Path(spec.origin).is_file() else []


def _files(roots: Iterable[Path], skip: Iterable[Path] = ()) -> list[Path]:
    """Every file under *roots* (caches of compiled code aside), outside *skip*, once each."""
    skipped = [root.resolve() for root in skip]
    found: set[Path] = set()
    for root in roots:
        paths = root.rglob("*") if root.is_dir() else [root]
        for path in paths:
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            resolved = path.resolve()
            if not any(resolved.is_relative_to(s) for s in skipped):
                found.add(resolved)
    return sorted(found)


def _digest(files: Iterable[Path]) -> str:
    """sha256 of each file's path and content, in order."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path).encode() + b"\0")
        try:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            digest.update(b"unreadable")
    return digest.hexdigest()


@functools.cache
def own_digest() -> str:
    """The digest of dpplug's own sources a level depends on (:data:`_OWN_PACKAGES`), in an
    editable install as in a built one."""
    roots = [root for package in _OWN_PACKAGES for root in _roots(package)]
    return _digest(_files(roots, _roots(_NOT_OWN)))


@functools.cache
def distribution_digest(distribution: str) -> str:
    """The digest of a third-party *distribution*: every file its metadata lists (its record),
    and the sources of the top-level packages its ``dpplug`` entry points import (which is where
    an editable install's code is); ``""`` for the built-ins, whose files :func:`own_digest`
    covers."""
    if distribution == BUILT_IN:
        return ""
    try:
        dist = metadata.distribution(distribution)
    except (metadata.PackageNotFoundError, ValueError):
        return "unknown"
    listed = [Path(str(file.locate())) for file in dist.files or ()]
    recorded = [path for path in listed if path.name != "RECORD"]
    tops = {ep.module.split(".")[0] for ep in dist.entry_points if ep.group == "dpplug"}
    roots = [root for top in sorted(tops) for root in _roots(top)]
    return _digest(_files([*recorded, *roots]))


def code_fingerprint(distribution: str) -> str:
    """The fingerprint of the code behind a mechanism of *distribution*: its files and
    dpplug's own."""
    both = f"{distribution_digest(distribution)}:{own_digest()}"
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
    """Remember each (name, source, distribution) → level, with the settings of the run and the
    fingerprint of the code that earned it."""
    with _locked() as path:
        known = _read(path)
        for (name, source, distribution), level in levels.items():
            known[f"{name}@{source}"] = {
                "level": level,
                "settings": settings_text,
                "code": code_fingerprint(distribution),
            }
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as temporary:
            temporary.write(json.dumps(known, indent=1, sort_keys=True))
        os.replace(temporary.name, path)


def recorded_level(name: str, source: str, distribution: str) -> str | None:
    """The level the last ``dpplug conform`` gave this plugin at this source, :data:`STALE` if
    its distribution's files (or dpplug's) changed since, ``None`` if it was never checked."""
    entry = _read(levels_file()).get(f"{name}@{source}")
    if entry is None:
        return None
    if entry.get("code") != code_fingerprint(distribution):
        return STALE
    return str(entry["level"])
