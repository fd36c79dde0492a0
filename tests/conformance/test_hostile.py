"""Hostile plugins (:mod:`hostile_plugins`) against the real command, installed beside an honest
one: none makes ``dpplug conform`` report or cache a level it did not earn, none takes a command
down, corrupts ``--json`` or changes another plugin's row, and killing the command stops its
workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_plugins import FORGERS, SABOTEURS
from plugin_site import build_site, checked_alone, conform, dpplug, environment, levels, outcomes

HONEST = """
    import dpplug
    from dpplug_randomized_response.plugin import RandomizedResponse

    @dpplug.hookimpl
    def register_samplers(register):
        register(RandomizedResponse)
"""
HANGS = """
    import os
    import sys
    import time

    import dpplug
    from dpplug_randomized_response.plugin import RandomizedResponse

    class Hangs(RandomizedResponse):
        name = "hanging-response"

        def _sample(self, counts, source):
            print(f"worker {os.getpid()} hangs", file=sys.stderr, flush=True)
            while True:
                time.sleep(1)

    @dpplug.hookimpl
    def register_samplers(register):
        register(Hangs)
"""
FORGED = [
    "parent-patching-response",
    "table-swapping-response",
    "numpy-patching-response",
    "data-zeroing-response",
    "cache-writing-response",
]
#: Seconds every plugin may take to load, and its contracts to run (room for a busy machine).
TIMEOUT = "60"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(
        tmp_path_factory.mktemp("hostile"), {"honest": HONEST, **FORGERS, **SABOTEURS}
    )


@pytest.fixture(scope="module")
def honest_alone(site: Path) -> dict[str, str]:
    return checked_alone(site, "honest", "randomized-response")


@pytest.fixture(scope="module")
def run(site: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, dict[str, object]]]:
    names = ["randomized-response", *FORGED, "printing-response", "aborting-laplace"]
    done = conform(site, *names, "--json", "--timeout", TIMEOUT)
    return done, {p["name"]: p for p in json.loads(done.stdout)["plugins"]}


def test_forged_levels_read_failed_and_the_honest_row_is_its_own(
    run: tuple[subprocess.CompletedProcess[str], dict[str, dict[str, object]]],
    honest_alone: dict[str, str],
    site: Path,
) -> None:
    done, plugins = run
    assert done.returncode == 1
    assert outcomes(plugins["randomized-response"]) == honest_alone
    for name in FORGED:
        assert plugins[name]["level"] == "failed", name
    for name in ["parent-patching-response", "table-swapping-response", "numpy-patching-response"]:
        assert str(plugins[name]["problem"]).startswith("tampering: loading"), name
    assert "numpy.array_equal" in str(plugins["data-zeroing-response"]["problem"])
    assert "runner.CONTRACTS[" in str(plugins["table-swapping-response"]["problem"])
    writer = plugins["cache-writing-response"]["contracts"]
    assert isinstance(writer, dict) and writer["exact-privacy"]["outcome"] == "failed"
    cached = levels(site)
    assert cached["randomized-response"] == honest_alone["level"]
    assert all(cached[name] == "failed" for name in FORGED)


def test_saboteurs_are_broken_rows_named_by_their_plugin(
    run: tuple[subprocess.CompletedProcess[str], dict[str, dict[str, object]]],
) -> None:
    _, plugins = run
    problems = {name: str(p["problem"]) for name, p in plugins.items()}
    assert problems["dpplug_test_exits:exits"] == (
        "broken: its loading process exited with code 7 while importing it"
    )
    assert problems["dpplug_test_kills:kills"].startswith(
        "broken: its loading process was killed by SIGKILL"
    )
    assert problems["dpplug_test_sleeps:sleeps"] == f"broken: did not load within {TIMEOUT} s"
    claims = problems["dpplug_test_claims:claims"]
    assert "built-in names cannot be taken" in claims and claims.endswith("(it claimed geosample)")
    assert "geosample" not in plugins  # a consumer keyed by name sees no failed geosample


def test_printing_plugins_leave_standard_output_to_the_json(
    run: tuple[subprocess.CompletedProcess[str], dict[str, dict[str, object]]],
    honest_alone: dict[str, str],
) -> None:
    done, plugins = run
    assert outcomes(plugins["printing-response"]) == honest_alone
    assert "printed at import" in done.stderr and "written to fd 1 by sample" in done.stderr


def test_an_abort_in_the_suites_arithmetic_fails_one_contract_and_the_rest_run(
    run: tuple[subprocess.CompletedProcess[str], dict[str, dict[str, object]]],
) -> None:
    _, plugins = run
    aborting = plugins["aborting-laplace"]
    contracts = aborting["contracts"]
    assert isinstance(contracts, dict) and len(contracts) == 7 and aborting["problem"] is None
    crashed = [c for c, v in contracts.items() if "killed by SIGABRT" in v["detail"]]
    assert crashed, contracts
    # The tail of its output is shown (GMP's "overflow in mpz type" when it is the last line;
    # a longer path printed after it, as under pytest-xdist's temporary folders, can push it out).
    assert "its last output:" in str(contracts[crashed[0]]["detail"])
    assert contracts["hygiene"]["outcome"] == "failed"  # the contracts after it ran


def test_list_and_sample_survive_every_plugin(site: Path) -> None:
    listed = dpplug(site, "list", "--json", "--timeout", "10")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["randomized-response"]["status"] == "ok"
    assert rows["exits"]["status"] == rows["sleeps"]["status"] == "broken"
    assert rows["claims"]["claimed"] == ["geosample"]
    assert rows["geosample"]["source"]["distribution"] == "dpplug"
    started = time.monotonic()
    sampled = dpplug(
        site,
        "sample",
        "geosample",
        "--count",
        "3",
        "--param",
        "n=5",
        "--param",
        "epsilon=1",
        "--json",
    )
    assert sampled.returncode == 0, sampled.stderr
    assert time.monotonic() - started < 10  # the built-in needs no third-party plugin loaded
    assert len(json.loads(sampled.stdout)["samples"]) == 1


def test_a_broken_plugin_named_says_it_is_broken_and_why(site: Path) -> None:
    done = dpplug(site, "describe", "geosample-clone", timeout=120)
    assert done.returncode == 2
    assert "no mechanism named 'geosample-clone'" in done.stderr
    assert "exited with code 7" in done.stderr


def test_killing_conform_stops_its_workers(tmp_path: Path) -> None:
    site = build_site(tmp_path, {"hangs": HANGS})
    command = [sys.executable, "-m", "dpplug.cli", "conform", "hanging-response", "--fast"]
    process = subprocess.Popen(
        command,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=environment(site),
    )
    assert process.stderr is not None
    try:
        line = ""
        while "hangs" not in line:
            line = process.stderr.readline()
            assert line, "the worker never started"
        worker = int(line.split()[1])
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        deadline = time.monotonic() + 15
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(worker)
    finally:
        process.kill()
        process.wait()


def _alive(pid: int) -> bool:
    """Whether *pid* runs (a zombie waiting to be reaped does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


FAKES_MODULE = """
    import dpplug
    from dpplug_randomized_response.plugin import RandomizedResponse

    class FakesModule(RandomizedResponse):
        name = "module-faking-response"

    FakesModule.__module__ = "json"  # claims to live in the standard library

    @dpplug.hookimpl
    def register_samplers(register):
        register(FakesModule)
"""


def test_a_plugin_faking_its_module_reads_stale_once_edited(tmp_path: Path) -> None:
    site = build_site(tmp_path, {"fakes": FAKES_MODULE})
    checked = conform(site, "module-faking-response")
    assert checked.returncode in (0, 1), checked.stderr

    def level() -> str:
        listed = dpplug(site, "list", "--json")
        (row,) = [r for r in json.loads(listed.stdout) if r["name"] == "module-faking-response"]
        assert row["module"] == "json"
        return str(row["level"])

    assert level() == levels(site)["module-faking-response"]
    with open(site / "dpplug_test_fakes_plugin.py", "a") as plugin:
        plugin.write("# edited, same version\n")
    assert level() == "stale"


def test_two_distributions_claiming_one_name_are_both_quarantined(tmp_path: Path) -> None:
    twin = """
        import dpplug
        from dpplug_randomized_response.plugin import RandomizedResponse

        @dpplug.hookimpl
        def register_samplers(register):
            register(RandomizedResponse)
    """
    site = build_site(tmp_path, {"first": twin, "second": twin})
    listed = dpplug(site, "list", "--json")
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert "randomized-response" not in rows
    for plugin in ("first", "second"):
        assert rows[plugin]["claimed"] == ["randomized-response"]
        assert "dpplug_test_first 1.0 (first) and dpplug_test_second" in rows[plugin]["error"]
