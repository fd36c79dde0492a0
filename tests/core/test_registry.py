"""The pluggy registry: built-ins, runtime plugins, entry points, quarantine and name clashes."""

from __future__ import annotations

import sys
import textwrap
import types
from pathlib import Path

import pytest
from conftest import RandomizedResponse

import dpplug
from dpplug import Registry

BUILTIN_SAMPLERS = {
    "discrete-laplace",
    "fastsample",
    "fixedpoint-geometric",
    "geosample",
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
    "compact-histogram",
    "pure-sparse-histogram",
    "stability-histogram",
}


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
    assert {e.name for e in registry.entries(dpplug.Kind.SAMPLER)} == BUILTIN_SAMPLERS
    selectors = registry.entries(dpplug.Kind.PARTITION_SELECTOR)
    assert {e.name for e in selectors} == BUILTIN_SELECTORS
    releasers = registry.entries(dpplug.Kind.HISTOGRAM_RELEASER)
    assert {e.name for e in releasers} == BUILTIN_RELEASERS
    assert len(registry) == len(BUILTIN_SAMPLERS | BUILTIN_SELECTORS | BUILTIN_RELEASERS)
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


def test_duplicate_name_names_both_sources_and_the_first_keeps_it() -> None:
    clash = type("Clash", (RandomizedResponse,), {"name": "geosample"})
    registry = Registry.load([_registers(clash)], entry_points=False)
    (broken,) = registry.broken
    assert "geosample" in broken.error
    assert "dpplug 0.1.0" in broken.error and "(runtime)" in broken.error
    assert broken.error.startswith("DuplicateMechanismName")
    assert registry.get("geosample").source.distribution == "dpplug"


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
        from conftest import RandomizedResponse

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
