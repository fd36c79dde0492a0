"""The levels cache behind `dpplug list`: tied to the code that earned them, safe under
concurrent writers, and rebuilt (with a warning) when damaged."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dpplug
from dpplug import levels


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    levels.distribution_digest.cache_clear()
    levels.own_digest.cache_clear()
    return tmp_path / "cache" / "dpplug" / "levels.json"


def _distribution(root: Path, source: str, data: str = "table") -> None:
    """An installed distribution ``levels-test`` 1.0: its package (entry point ``dpplug``) and a
    data file its record lists outside the package."""
    package = root / "levels_test_plugin"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "mechanism.py").write_text(source)
    (root / "levels_test_data.txt").write_text(data)
    info = root / "levels_test-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: levels-test\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dpplug]\nplugin = levels_test_plugin.mechanism\n")
    (info / "RECORD").write_text("levels_test_data.txt,,\nlevels_test-1.0.dist-info/RECORD,,\n")
    levels.distribution_digest.cache_clear()


@pytest.mark.parametrize("edit", ["code", "data"])
def test_an_edited_plugin_reads_stale_not_its_old_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str
) -> None:
    _distribution(tmp_path, "VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    key = ("mech", "levels-test 1.0 (plugin)", "levels-test")
    levels.record_levels({key: "exactly verified"}, "mode default")
    assert levels.recorded_level(*key) == "exactly verified"
    if edit == "code":
        _distribution(tmp_path, "VALUE = 2  # edited, same version\n")
    else:
        _distribution(tmp_path, "VALUE = 1\n", data="another table")
    assert levels.recorded_level(*key) == levels.STALE
    assert levels.recorded_level("never-checked", key[1], key[2]) is None


def test_editing_a_built_in_or_the_suite_makes_every_level_stale(tmp_path: Path) -> None:
    """In an installed layout (a copy of the package): an edit under plugins/ or conformance/
    changes dpplug's fingerprint, one under adapters/ (which no contract runs) does not."""
    root = Path(__file__).parents[2]
    package = tmp_path / "dpplug"
    shutil.copytree(root / "core", package, ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("plugins", "conformance", "adapters"):
        shutil.copytree(
            root / folder, package / folder, ignore=shutil.ignore_patterns("__pycache__")
        )

    def fingerprint() -> str:
        program = (
            "from dpplug import levels; print(levels.code_fingerprint('dpplug'), levels.__file__)"
        )
        done = subprocess.run(
            [sys.executable, "-c", program],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
            check=True,
        )
        printed, where = done.stdout.split()
        assert Path(where).is_relative_to(tmp_path)  # the copy, not the checkout
        return printed

    first = fingerprint()
    with open(package / "adapters" / "opendp.py", "a") as adapter:
        adapter.write("# an adapter edit\n")
    assert fingerprint() == first
    with open(package / "plugins" / "samplers" / "geosample.py", "a") as builtin:
        builtin.write("# a built-in edit\n")
    second = fingerprint()
    assert second != first
    with open(package / "conformance" / "hygiene.py", "a") as contract:
        contract.write("# a contract edit\n")
    assert fingerprint() not in (first, second)


def _write(args: tuple[str, int]) -> None:
    cache_home, index = args
    import os

    os.environ["XDG_CACHE_HOME"] = cache_home
    levels.record_levels({(f"m{index}", "src", "dpplug"): "audited"}, "settings")


def test_concurrent_writers_lose_no_entry(cache: Path) -> None:
    levels.record_levels({("first", "src", "dpplug"): "declared"}, "settings")
    home = str(cache.parents[1])
    with multiprocessing.get_context("spawn").Pool(8) as pool:
        pool.map(_write, [(home, i) for i in range(16)])
    known = json.loads(cache.read_text())
    assert set(known) == {"first@src"} | {f"m{i}@src" for i in range(16)}


@pytest.mark.parametrize("damage", ["{not json", "[1, 2]", '{"x@y": 3}', '{"x@y": {"lvl": 1}}'])
def test_a_damaged_cache_warns_and_is_rebuilt(cache: Path, damage: str) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_text(damage)
    with pytest.warns(UserWarning, match="levels cache"):
        assert levels.recorded_level("x", "y", "dpplug") is None
    with pytest.warns(UserWarning, match="rebuilt"):
        levels.record_levels({("x", "y", "dpplug"): "audited"}, "settings")
    assert levels.recorded_level("x", "y", "dpplug") == "audited"


def test_dpplug_list_shows_stale_levels(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpplug.cli import main

    cache.parent.mkdir(parents=True)
    entry = {"level": "exactly verified", "settings": "s", "code": "another code"}
    source = dpplug.registry().get("geosample").source.describe()
    cache.write_text(json.dumps({f"geosample@{source}": entry}))
    assert main(["list", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["geosample"]["level"] == levels.STALE
    assert rows["fastsample"]["level"] == "unchecked"
