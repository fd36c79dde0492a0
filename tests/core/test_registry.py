"""The pluggy registry: built-ins, runtime plugins, entry points, quarantine and name clashes."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import dpplug
from dpplug import Registry
from dpplug.plugin_registry import BUILT_IN_FAMILIES

from support.example_plugin import RandomizedResponse

BUILTIN_SAMPLERS = {
    "discrete-gaussian",
    "discrete-laplace",
    "fastsample",
    "fixedpoint-geometric",
    "geosample",
    "oblivious-laplace",
    "truncated-geometric",
}
BUILTIN_SELECTORS = {
    "gaussian-thresholding",
    "laplace-thresholding",
    "optimal-partition-selection",
    "truncated-geometric-thresholding",
}
BUILTIN_RELEASERS = {
    "basic-histogram",
    "blanket-sparse-histogram",
    "compact-histogram",
    "pure-sparse-histogram",
    "stability-histogram",
}
BUILTIN_ANONYMIZED = {"privhist", "sorted-histogram"}
BUILTIN_QUERY_RELEASERS = {
    "independent-laplace",
    "sparse-multiplicative-weights",
    "sparse-projection",
}
BUILTIN_SET_UNIONS = {"dp-sips", "policy-laplace", "weighted-gaussian"}


def _plugin(name: str, **hooks: object) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook, function in hooks.items():
        setattr(module, hook, dpplug.hookimpl(function))
    return module


def _registers(*classes: type) -> types.ModuleType:
    def register_samplers(register):  # type: ignore[no-untyped-def]
        for cls in classes:
            register(cls)

    return _plugin("test_plugin", register_samplers=register_samplers)


def test_builtins_are_registered_through_the_hooks_with_their_source() -> None:
    registry = Registry.load(entry_points=False)
    assert {e.name for e in registry.entries(dpplug.kinds.SAMPLER)} == BUILTIN_SAMPLERS
    selectors = registry.entries(dpplug.kinds.PARTITION_SELECTOR)
    assert {e.name for e in selectors} == BUILTIN_SELECTORS
    releasers = registry.entries(dpplug.kinds.HISTOGRAM_RELEASER)
    assert {e.name for e in releasers} == BUILTIN_RELEASERS
    anonymized = registry.entries(dpplug.kinds.ANONYMIZED_HISTOGRAM_RELEASER)
    assert {e.name for e in anonymized} == BUILTIN_ANONYMIZED
    queries = registry.entries(dpplug.kinds.QUERY_RELEASER)
    assert {e.name for e in queries} == BUILTIN_QUERY_RELEASERS
    unions = registry.entries(dpplug.kinds.SET_UNION_SELECTOR)
    assert {e.name for e in unions} == BUILTIN_SET_UNIONS
    everything = (
        BUILTIN_SAMPLERS
        | BUILTIN_SELECTORS
        | BUILTIN_RELEASERS
        | BUILTIN_ANONYMIZED
        | BUILTIN_QUERY_RELEASERS
        | BUILTIN_SET_UNIONS
    )
    assert len(registry) == len(everything)
    assert registry.broken == []
    for entry in registry:
        assert entry.source.distribution == "dpplug"
        assert entry.source.version != ""


def test_default_registry_and_create() -> None:
    assert BUILTIN_SAMPLERS <= {entry.name for entry in dpplug.registry()}
    sampler = dpplug.create("geosample", n=12, epsilon=0.5)
    assert isinstance(sampler, dpplug.CountingQuerySampler)
    assert sampler.n == 12


def test_runtime_plugin_registers_a_sampler() -> None:
    registry = Registry.load([_registers(RandomizedResponse)], entry_points=False)
    entry = registry.get("randomized-response")
    assert entry.source.distribution == "(runtime)"
    assert registry.create("randomized-response").pmf(0)[0] == dpplug.Pmf({0: 1})[0] * 3 / 4


def test_plugin_whose_hook_raises_is_quarantined_and_the_rest_keep_working() -> None:
    def register_samplers(register):  # type: ignore[no-untyped-def]
        register(RandomizedResponse)
        raise RuntimeError("boom")

    registry = Registry.load(
        [_plugin("bad", register_samplers=register_samplers)], entry_points=False
    )
    assert "randomized-response" not in registry
    assert BUILTIN_SAMPLERS <= {e.name for e in registry}
    (broken,) = registry.broken
    assert "boom" in broken.error
    assert broken.names == ("randomized-response",)
    with pytest.raises(dpplug.PluginFault, match="broken plugin"):
        registry.get("randomized-response")


@pytest.mark.parametrize(
    ("bad_class", "message"),
    [
        (int, "not a CountingQuerySampler"),
        (type("Abstract", (dpplug.CountingQuerySampler,), {}), "does not implement"),
        (type("BadName", (RandomizedResponse,), {"name": "Bad Name"}), "lower-case words"),
        (type("NoSchema", (RandomizedResponse,), {"schema": None}), "Schema"),
        (type("NoReference", (RandomizedResponse,), {"reference": ""}), "reference"),
    ],
)
def test_invalid_registrations_quarantine_the_plugin(bad_class: type, message: str) -> None:
    registry = Registry.load([_registers(bad_class)], entry_points=False)
    (broken,) = registry.broken
    assert message in broken.error


def test_hookimpl_with_wrong_arguments_is_quarantined() -> None:
    def register_samplers(reg):  # type: ignore[no-untyped-def]
        reg(RandomizedResponse)

    registry = Registry.load(
        [_plugin("typo", register_samplers=register_samplers)], entry_points=False
    )
    (broken,) = registry.broken
    assert "reg" in broken.error
    assert "randomized-response" not in registry


def test_unknown_hook_is_quarantined() -> None:
    registry = Registry.load(
        [_plugin("typo", register_sampler=lambda register: None)], entry_points=False
    )
    (broken,) = registry.broken
    assert "register_sampler" in broken.error


def test_a_built_in_keeps_its_name_and_the_later_plugin_is_quarantined() -> None:
    clash = type("Clash", (RandomizedResponse,), {"name": "geosample"})
    registry = Registry.load([_registers(clash)], entry_points=False)
    (broken,) = registry.broken
    assert "geosample" in broken.error
    assert "dpplug 0.1.0" in broken.error and "(runtime)" in broken.error
    assert broken.error.startswith("DuplicateMechanismName")
    assert registry.get("geosample").source.distribution == "dpplug"


def test_two_third_parties_claiming_one_name_are_both_quarantined() -> None:
    """Which one installed first is an accident, so neither keeps the name; each error names
    both packages, and the first one's other mechanisms leave with it."""
    other = type("Other", (RandomizedResponse,), {"name": "other-mechanism"})
    first = _plugin(
        "first", register_samplers=lambda register: [register(RandomizedResponse), register(other)]
    )
    second = _plugin("second", register_samplers=lambda register: register(RandomizedResponse))
    registry = Registry.load([first, second], entry_points=False)
    assert "randomized-response" not in registry and "other-mechanism" not in registry
    assert {b.source.plugin for b in registry.broken} == {"first", "second"}
    for broken in registry.broken:
        assert "first" in broken.error and "second" in broken.error
    with pytest.raises(dpplug.PluginFault, match="broken plugin"):
        registry.get("randomized-response")


def test_same_name_twice_in_one_plugin_is_quarantined() -> None:
    registry = Registry.load(
        [_registers(RandomizedResponse, RandomizedResponse)], entry_points=False
    )
    (broken,) = registry.broken
    assert "twice" in broken.error


def test_unknown_name_suggests_close_names() -> None:
    with pytest.raises(dpplug.UnknownMechanism, match="did you mean 'geosample'"):
        dpplug.create("geosampel", n=3, epsilon=1)


def test_a_plugin_bug_in_the_constructor_is_a_plugin_fault() -> None:
    class Crashes(RandomizedResponse):
        name = "crashes"

        def __init__(self, **params: object) -> None:
            super().__init__(**params)
            raise ZeroDivisionError("oops")

    registry = Registry.load([_registers(Crashes)], entry_points=False)
    with pytest.raises(dpplug.PluginFault, match="ZeroDivisionError: oops"):
        registry.create("crashes")


def _install_distribution(
    root: Path, dist: str, entry_points: str, modules: dict[str, str]
) -> None:
    info = root / f"{dist}-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    for module, source in modules.items():
        (root / f"{module}.py").write_text(textwrap.dedent(source))


def test_entry_points_load_third_party_plugins_and_quarantine_broken_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = """
        import dpplug
        from support.example_plugin import RandomizedResponse

        @dpplug.hookimpl
        def register_samplers(register):
            register(RandomizedResponse)
    """
    _install_distribution(
        tmp_path,
        "dpplug_rr",
        "[dpplug]\nrr = dpplug_rr_plugin\nbroken = dpplug_missing_module\n",
        {"dpplug_rr_plugin": good},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry.load()
    entry = registry.get("randomized-response")
    assert (entry.source.distribution, entry.source.version, entry.source.plugin) == (
        "dpplug_rr",
        "1.2.3",
        "rr",
    )
    broken = [b for b in registry.broken if b.source.plugin == "broken"]
    assert len(broken) == 1 and "ModuleNotFoundError" in broken[0].error
    assert BUILTIN_SAMPLERS <= {e.name for e in registry}
    sys.modules.pop("dpplug_rr_plugin", None)


def test_a_built_in_family_that_cannot_import_is_quarantined_alone() -> None:
    """With scipy.stats unimportable (the Gaussian selector needs it), the partition-selector
    family is listed as broken with its error; samplers and releasers keep working, and
    `dpplug list` names the family."""
    code = """
        import json, sys
        sys.modules["scipy.stats"] = None  # what a broken scipy install looks like
        import dpplug
        from dpplug.catalog import Catalog
        registry = dpplug.Registry.load(entry_points=False)
        rows = Catalog(registry, (), ()).rows()
        print(json.dumps({
            "names": sorted(e.name for e in registry),
            "broken": [[b.source.plugin, b.error] for b in registry.broken],
            "listed": [r["name"] for r in rows if r["status"] == "broken"],
            "sample": int(registry.create("geosample", n=10, epsilon=1).sample([3])[0]),
            "release": registry.create(
                "basic-histogram", universe="range:0:2", n=2, epsilon=1
            ).release([0, 1]).to_dict(),
        }))
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert set(out["names"]) == (
        BUILTIN_SAMPLERS
        | BUILTIN_RELEASERS
        | BUILTIN_ANONYMIZED
        | BUILTIN_QUERY_RELEASERS
        | BUILTIN_SET_UNIONS
    )
    ((family, error),) = out["broken"]
    assert family == "dpplug.plugins.partition"
    assert "scipy.stats" in error
    assert out["listed"] == ["dpplug.plugins.partition"]
    assert 0 <= out["sample"] <= 10
    assert set(out["release"]) == {"0", "1", "2"}  # JSON keys


def test_built_in_entries_name_their_family_and_module() -> None:
    entry = Registry.load(entry_points=False).get("geosample")
    assert entry.source.plugin == "dpplug.plugins.samplers"
    assert entry.module == "dpplug.plugins.samplers.geosample"


def test_an_empty_registry_passed_explicitly_is_the_one_used() -> None:
    """A releaser resolves its sampler in the registry it was given, even an empty one: it
    never falls back to the default registry, which has the sampler."""
    empty = Registry()
    assert not empty and "fixedpoint-geometric" in dpplug.registry()
    releaser = dpplug.registry().get("basic-histogram").cls
    with pytest.raises(dpplug.UnknownMechanism, match="fixedpoint-geometric"):
        releaser(registry=empty, universe="range:0:3", n=3, epsilon=1)
    built = releaser(registry=None, universe="range:0:3", n=3, epsilon=1)
    assert built.registry_in_use() is dpplug.registry()


def test_mechanisms_resolve_others_in_the_registry_that_created_them() -> None:
    """A runtime sampler is visible to a releaser created from the registry holding it."""
    registry = Registry.load([_registers(RandomizedResponse)], entry_points=False)
    releaser = registry.create(
        "basic-histogram", universe="range:0:1", n=1, sampler="randomized-response"
    )
    assert releaser.registry is registry
    assert releaser.sampler.name == "randomized-response"
    with pytest.raises(dpplug.UnknownMechanism):
        dpplug.create("basic-histogram", universe="range:0:1", n=1, sampler="randomized-response")


def test_a_plugin_raising_system_exit_in_its_hook_is_quarantined() -> None:
    """Any BaseException but KeyboardInterrupt from a plugin is its fault, not the process's."""

    def exits(register):  # type: ignore[no-untyped-def]
        raise SystemExit(3)

    registry = Registry.load([_plugin("exits_in_hook", register_samplers=exits)], False)
    assert any("SystemExit" in b.error for b in registry.broken)
    assert BUILTIN_SAMPLERS <= {e.name for e in registry}


def test_a_plugin_raising_system_exit_at_import_is_quarantined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_distribution(
        tmp_path,
        "dpplug_exits",
        "[dpplug]\nexits = dpplug_exits_plugin\n",
        {"dpplug_exits_plugin": "raise SystemExit('bye')\n"},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry.load()
    (broken,) = [b for b in registry.broken if b.source.plugin == "exits"]
    assert broken.error == "SystemExit: bye"
    assert BUILTIN_SAMPLERS <= {e.name for e in registry}


def test_a_plugin_whose_guarantee_raises_does_not_crash_the_listing() -> None:
    class BadGuarantee(RandomizedResponse):
        name = "bad-guarantee"

        @property
        def guarantee(self) -> dpplug.Guarantee:
            raise RuntimeError("no guarantee today")

    from dpplug.catalog import listing_row

    registry = Registry.load([_registers(BadGuarantee)], entry_points=False)
    row = listing_row(registry.get("bad-guarantee"))
    assert row["status"] == "broken" and "RuntimeError: no guarantee today" in row["error"]


_OTHERS = {"plugins", "adapters", "conformance"}


def test_core_imports_nothing_of_the_other_folders() -> None:
    """Imports flow one way (docs/architecture.md): core names the built-in families as strings
    (BUILT_IN_FAMILIES) and imports them only when the registry loads them."""
    core = Path(dpplug.__file__).parent
    outward = ("dpplug.plugins", "dpplug.adapters", "dpplug.conformance")
    found = []
    # (an installed wheel nests the other folders inside dpplug/: they are not core)
    for path in (p for p in core.rglob("*.py") if p.relative_to(core).parts[0] not in _OTHERS):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            found += [f"{path.name}: {n}" for n in names if n.startswith(outward)]
    assert found == []
    assert all(family.startswith("dpplug.plugins.") for family in BUILT_IN_FAMILIES)
