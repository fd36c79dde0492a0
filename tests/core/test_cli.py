"""The dpplug command line, called in-process and once as the installed console script."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import dpplug
from dpplug.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_list_json_has_every_builtin_with_source_and_status(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "list", "--json")
    assert status == 0
    rows = {row["name"]: row for row in json.loads(out)}
    assert {"geosample", "fastsample", "truncated-geometric", "discrete-laplace"} <= set(rows)
    geo = rows["geosample"]
    assert geo["kind"] == "sampler" and geo["status"] == "ok" and geo["form"] == "pure"
    assert geo["relation"] == "count" and geo["source"]["distribution"] == "dpplug"
    assert rows["truncated-geometric"]["form"] == "approximate"


def test_list_table_groups_by_kind_and_fits_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    status, out, _ = run(capsys, "list")
    assert status == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    for kind in ("sampler", "partition-selector", "histogram-releaser"):
        assert any(line.strip() == kind for line in lines)
    (row,) = [line for line in lines if line.strip().startswith("truncated-geometric-thresholding")]
    assert "ε, δ; add-remove" in row


@pytest.mark.filterwarnings("default::dpplug.errors.AccuracyWarning")  # as outside the tests
def test_listing_shows_no_warning_about_the_suites_own_tiny_cases(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``list`` and ``describe`` show built-ins by their first conformance case, whose tiny n
    makes pure-sparse warn; that warning is about the suite's input, not the user's, so it is
    not shown; the user's own parameters still warn."""
    for argv in (("list",), ("describe", "pure-sparse-histogram")):
        status, _, err = run(capsys, *argv)
        assert status == 0 and err == ""
    user = ("--param", "n=2", "--param", "epsilon=1", "--param", "universe=range:0:7")
    status, _, err = run(capsys, "describe", "pure-sparse-histogram", *user)
    assert status == 0
    (line,) = err.splitlines()  # one line, like errors, with no source location
    assert line.startswith("dpplug: warning: pure-sparse-histogram with n = 2")
    assert "no bin is reliably released" in line


def test_describe_shows_parameters_guarantee_and_reference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "describe", "geosample", "--json")
    info = json.loads(out)
    assert status == 0
    assert [p["name"] for p in info["parameters"]] == ["n", "epsilon"]
    assert "Alg. 4.8" in info["reference"]
    assert info["example"]["guarantee"]["exp_epsilon"] == "18/11"  # e^ε̃ for ε = 1/2
    status, out, _ = run(
        capsys,
        "describe",
        "fastsample",
        "--param",
        "n=10",
        "--param",
        "epsilon=1/4",
        "--param",
        "gamma=0.01",
    )
    assert status == 0 and "ln(32/25)" in out and "t=" in out


def test_sample_is_reproducible_with_a_seed(capsys: pytest.CaptureFixture[str]) -> None:
    argv = (
        "sample",
        "geosample",
        "--count",
        "5",
        "--size",
        "20",
        "--param",
        "n=12",
        "--param",
        "epsilon=0.5",
        "--seed",
        "11",
        "--json",
    )
    _, first, _ = run(capsys, *argv)
    _, second, _ = run(capsys, *argv)
    assert first == second
    result = json.loads(first)
    assert len(result["samples"]) == 20 and all(0 <= v <= 12 for v in result["samples"])
    status, out, _ = run(
        capsys,
        "sample",
        "fixedpoint-geometric",
        "--count",
        "3",
        "--size",
        "4",
        "--param",
        "n=10",
        "--param",
        "epsilon=1",
    )
    assert status == 0 and len(out.split()) == 4


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("sample", "nope", "--count", "1"), "no mechanism named 'nope'"),
        (
            ("sample", "geosample", "--count", "1", "--param", "n=5", "--param", "epsilon=0"),
            "epsilon=0 is invalid",
        ),
        (
            ("sample", "geosample", "--count", "1", "--param", "n=5", "--param", "epsilon=nan"),
            "not finite",
        ),
        (
            (
                "sample",
                "truncated-geometric",
                "--count",
                "1",
                "--param",
                "epsilon=1",
                "--param",
                "delta=1.5",
            ),
            "delta",
        ),
        (
            ("sample", "geosample", "--count", "9", "--param", "n=5", "--param", "epsilon=1"),
            "must be in [0, 5], got 9",
        ),
        (
            ("sample", "geosample", "--count", "1", "--param", "n=5", "--param", "epsilon"),
            "KEY=VALUE",
        ),
        (
            (
                "sample",
                "geosample",
                "--count",
                "1",
                "--size",
                "0",
                "--param",
                "n=5",
                "--param",
                "epsilon=1",
            ),
            "--size",
        ),
        (("describe", "geosampel"), "did you mean 'geosample'"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("dpplug: error:") and message in err


def test_usage_errors_are_one_line_too(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["sample", "geosample", "--count", "x"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and "invalid int" in err


def test_console_script_has_no_traceback() -> None:
    executable = shutil.which("dpplug")
    assert executable is not None, "the dpplug console script is not installed"
    done = subprocess.run(
        [
            executable,
            "sample",
            "geosample",
            "--count",
            "1",
            "--param",
            "n=0",
            "--param",
            "epsilon=1",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().startswith("dpplug: error: n=0 is invalid")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ("sample", "geosample", "--count", "9" * 30, "--param", "n=10", "--param", "epsilon=1"),
            "--count for geosample must be in [0, 10]",
        ),
        (
            (
                "sample",
                "geosample",
                "--count",
                "3",
                "--size",
                "9" * 12,
                "--param",
                "n=10",
                "--param",
                "epsilon=1",
            ),
            "--size must be in [1, 1000000]",
        ),
        (
            (
                "sample",
                "geosample",
                "--count",
                "3",
                "--param",
                "n=" + "9" * 5000,
                "--param",
                "epsilon=1",
            ),
            "too long to read",
        ),
        (
            (
                "sample",
                "geosample",
                "--count",
                "3",
                "--param",
                "n=10",
                "--param",
                "epsilon=1",
                "--seed",
                "-1",
            ),
            "non-negative integer seed",
        ),
        (
            ("conform", "geosample", "--fast", "--report", "/proc/no/such/dir"),
            "cannot write the report",
        ),
        (("conform", "geosample", "--seed", "-1"), "--seed must be a non-negative integer"),
        (
            (
                "sample",
                "geosample",
                "--count",
                "3",
                "--size",
                "1000",
                "--param",
                "n=1000000",
                "--param",
                "epsilon=64",
            ),
            "more than the 4294967296 one command may draw: ask for at most 46 counts",
        ),
    ],
)
def test_hostile_arguments_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    status, _, err = run(capsys, *argv)
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("dpplug: error:") and message in err


@pytest.mark.parametrize("command", [(), ("list",), ("describe",), ("sample",), ("conform",)])
def test_help_is_plain_text(capsys: pytest.CaptureFixture[str], command: tuple[str, ...]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and out.startswith("usage: dpplug")
    assert not any(markup in out for markup in ("``", ":class:", ":mod:", ":data:", ":func:"))


def test_a_param_given_as_two_words_gets_the_one_word_form(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["sample", "geosample", "--count", "1", "--param", "n=5", "--param", "epsilon", "1"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert "--param takes KEY=VALUE as one word: --param epsilon=1" in err


def test_version_names_the_installed_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and out.startswith("dpplug ") and out.split()[1][0].isdigit()


def test_describe_shows_every_parameter_name_whole_at_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    status, out, _ = run(capsys, "describe", "optimal-partition-selection")
    assert status == 0
    schema = dpplug.Registry.load(entry_points=False).get("optimal-partition-selection").cls.schema
    names = [p.name for p in schema]
    assert "max_partitions_contributed" in names
    for name in names:
        assert any(line.startswith(f"  {name}: ") for line in out.splitlines()), name
