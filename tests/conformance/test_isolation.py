"""`dpplug conform` as CI sees it: each plugin in its own process, results as they finish, and a
run that fails loudly for plugins that are broken, hang, crash their process, or patch dpplug.

The plugins are real installed distributions (:mod:`plugin_site`), checked by the real command in
a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from plugin_site import build_site, checked_alone, conform, outcomes

PLUGINS = {
    "good": """
        import dpplug
        from dpplug_randomized_response.plugin import RandomizedResponse

        @dpplug.hookimpl
        def register_samplers(register):
            register(RandomizedResponse)
    """,
    "hangs": """
        import dpplug
        from dpplug_randomized_response.plugin import RandomizedResponse

        class Hangs(RandomizedResponse):
            name = "hanging-response"

            def _sample(self, counts, source):
                while True:
                    pass

        @dpplug.hookimpl
        def register_samplers(register):
            register(Hangs)
    """,
    "crashes": """
        import os
        import dpplug
        from dpplug_randomized_response.plugin import RandomizedResponse

        class Crashes(RandomizedResponse):
            name = "crashing-response"

            def _sample(self, counts, source):
                os._exit(3)

        @dpplug.hookimpl
        def register_samplers(register):
            register(Crashes)
    """,
    "tampers": """
        import dpplug
        import dpplug.plugins.samplers.geosample as geosample
        from dpplug_randomized_response.plugin import RandomizedResponse

        geosample.GeoSample._output = lambda self, count, u: count  # no noise at all

        class Tampers(RandomizedResponse):
            name = "tampering-response"

        @dpplug.hookimpl
        def register_samplers(register):
            register(Tampers)
    """,
    "broken": """
        raise ImportError("this plugin cannot load")
    """,
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(tmp_path_factory.mktemp("site"), PLUGINS)


@pytest.fixture(scope="module")
def good_alone(site: Path) -> dict[str, str]:
    return checked_alone(site, "good", "randomized-response")


def test_hanging_crashing_and_tampering_plugins_fail_the_run_and_the_rest_finish(
    site: Path, good_alone: dict[str, str]
) -> None:
    names = ["randomized-response", "hanging-response", "crashing-response", "tampering-response"]
    done = conform(site, *names, "--timeout", "45", "--json")
    assert done.returncode == 1, done.stderr
    plugins = {p["name"]: p for p in json.loads(done.stdout)["plugins"]}
    assert outcomes(plugins["randomized-response"]) == good_alone
    assert plugins["randomized-response"]["problem"] is None
    assert plugins["hanging-response"]["problem"] == "timed out after 45 s"
    crashing = plugins["crashing-response"]
    assert crashing["level"] == "failed" and crashing["problem"] is None
    ended = [v["detail"] for v in crashing["contracts"].values() if v["outcome"] == "failed"]
    assert ended and all(d.startswith("its process exited with code 3 while") for d in ended)
    assert len(crashing["contracts"]) == 7  # a new worker went on after each crash
    tampered = plugins["tampering-response"]["problem"]
    assert tampered.startswith("tampering: loading dpplug_test_tampers changed")
    assert "dpplug.plugins.samplers.geosample.GeoSample._output" in tampered
    (broken,) = [p for p in plugins.values() if (p["problem"] or "").startswith("broken")]
    assert broken["name"] == "dpplug_test_broken:broken"
    assert "this plugin cannot load" in broken["problem"]
    for plugin in plugins.values():
        if plugin["problem"] is not None:
            assert plugin["level"] == "failed"


def test_a_broken_plugin_fails_the_run_even_when_others_are_named_unless_allowed(
    site: Path, good_alone: dict[str, str]
) -> None:
    failing = conform(site, "randomized-response")
    assert failing.returncode == 1
    lines = failing.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any("broken: ImportError: this plugin cannot load" in line for line in lines)
    (row,) = [line for line in lines if line.endswith("  randomized-response")]
    marks = " ".join("✓" if good_alone[c] == "passed" else "✗" for c in list(good_alone)[1:])
    assert row.startswith(f"{marks}  {good_alone['level']}")
    allowed = conform(site, "randomized-response", "--allow-broken")
    assert allowed.returncode == 0, allowed.stdout


def test_pytest_dpplug_fails_on_a_broken_plugin_even_when_others_are_named(
    site: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(site)}
    command = [sys.executable, "-m", "pytest", "--dpplug", "--dpplug-mode", "fast"]
    command += ["--dpplug-plugin", "randomized-response", "-p", "no:cacheprovider", str(tmp_path)]

    def pytest_run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *extra], capture_output=True, text=True, env=env, timeout=600, check=False
        )

    failing = pytest_run()
    assert failing.returncode == 1
    assert "dpplug[broken:broken]" in failing.stdout and "this plugin cannot load" in failing.stdout
    assert "7 passed" in failing.stdout
    allowed = pytest_run("--dpplug-allow-broken")
    assert allowed.returncode == 0, allowed.stdout
