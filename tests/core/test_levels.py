"""The levels cache behind `dpplug list`: tied to the code that earned them, safe under
concurrent writers, and rebuilt (with a warning) when damaged."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

import dpplug
from dpplug import levels


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    levels._package_digest.cache_clear()
    return tmp_path / "cache" / "dpplug" / "levels.json"


def _package(root: Path, source: str) -> None:
    package = root / "levels_test_plugin"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "mechanism.py").write_text(source)


def test_an_edited_plugin_reads_stale_not_its_old_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, "VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = "levels_test_plugin.mechanism"
    levels.record_levels({("mech", "pkg 1.0", module): "exactly verified"}, "mode default")
    assert levels.recorded_level("mech", "pkg 1.0", module) == "exactly verified"
    _package(tmp_path, "VALUE = 2  # edited, same version\n")
    levels._package_digest.cache_clear()
    assert levels.recorded_level("mech", "pkg 1.0", module) == levels.STALE
    assert levels.recorded_level("never-checked", "pkg 1.0", module) is None


def _write(args: tuple[str, int]) -> None:
    cache_home, index = args
    import os

    os.environ["XDG_CACHE_HOME"] = cache_home
    levels.record_levels({(f"m{index}", "src", "dpplug.levels"): "audited"}, "settings")


def test_concurrent_writers_lose_no_entry(cache: Path) -> None:
    levels.record_levels({("first", "src", "dpplug.levels"): "declared"}, "settings")
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
        assert levels.recorded_level("x", "y", "dpplug.levels") is None
    with pytest.warns(UserWarning, match="rebuilt"):
        levels.record_levels({("x", "y", "dpplug.levels"): "audited"}, "settings")
    assert levels.recorded_level("x", "y", "dpplug.levels") == "audited"


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
