"""Installed third-party plugins for tests of the command line: each a real distribution (a
dist-info folder with its metadata and entry points) and its module, in a folder put on the
PYTHONPATH of a ``dpplug`` subprocess, with the example plugin's package beside them to
subclass."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from dpplug import Registry
from dpplug.conformance.runner import run_plugin
from dpplug.conformance.settings import Settings

EXAMPLE = Path(__file__).parents[2] / "examples" / "third_party_plugin"


def build_site(root: Path, plugins: dict[str, str]) -> Path:
    """One distribution ``dpplug_test_KEY`` 1.0 per plugin (entry point ``KEY`` importing the
    module ``dpplug_test_KEY_plugin``, whose source is the value), installed in *root*."""
    for key, source in plugins.items():
        dist = f"dpplug_test_{key}"
        info = root / f"{dist}-1.0.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[dpplug]\n{key} = {dist}_plugin\n")
        (root / f"{dist}_plugin.py").write_text(textwrap.dedent(source))
    # the example's package alone (not its folder, where a local build leaves metadata)
    package = root / "dpplug_randomized_response"
    if not package.exists():
        shutil.copytree(EXAMPLE / "dpplug_randomized_response", package)
    return root


def environment(site: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(site),
        "COLUMNS": "80",
        "XDG_CACHE_HOME": str(site / "cache"),
    }


def dpplug(site: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """The ``dpplug`` command with the plugins of *site* installed."""
    return subprocess.run(
        [sys.executable, "-m", "dpplug.cli", *args],
        capture_output=True,
        text=True,
        env=environment(site),
        timeout=timeout,
        check=False,
    )


def conform(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``dpplug conform --fast`` with the plugins of *site* installed."""
    return dpplug(site, "conform", "--fast", *args)


def levels(site: Path) -> dict[str, Any]:
    """The levels cache of *site*'s runs, by mechanism name."""
    path = site / "cache" / "dpplug" / "levels.json"
    known: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    return {key.split("@")[0]: value["level"] for key, value in known.items()}


def checked_alone(site: Path, key: str, name: str) -> dict[str, str]:
    """The level and contract outcomes of the mechanism *name* of the plugin *key* of *site*,
    checked in this process (fast mode) with no other plugin loaded: what its row must say."""
    sys.path.insert(0, str(site))
    try:
        module = importlib.import_module(f"dpplug_test_{key}_plugin")
        entry = Registry.load([module], entry_points=False).get(name)
        result = run_plugin(entry, Settings(mode="fast"))
    finally:
        sys.path.remove(str(site))
    return {"level": result.level.value} | {r.contract: r.outcome.value for r in result.results}


def outcomes(plugin: dict[str, Any]) -> dict[str, str]:
    """A plugin's level and contract outcomes from ``--json`` (as :func:`checked_alone`)."""
    contracts = plugin["contracts"]
    return {"level": plugin["level"]} | {c: v["outcome"] for c, v in contracts.items()}
