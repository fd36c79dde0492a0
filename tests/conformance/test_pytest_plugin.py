"""``pytest --dpplug`` as a plugin author meets it: a mistyped name is one line with the names it
may have meant, and the items are counted as collected (``--collect-only`` included)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dpplug.conformance.runner import CONTRACTS


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "--dpplug", "-p", "no:cacheprovider", *args]
    return subprocess.run(
        [*command, str(tmp_path)], capture_output=True, text=True, timeout=300, check=False
    )


def test_a_mistyped_plugin_name_is_a_one_line_usage_error(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--dpplug-plugin", "geosampel")
    assert done.returncode == 4  # pytest's usage error
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and "INTERNALERROR" not in done.stdout + done.stderr
    assert "no mechanism named 'geosampel'; did you mean 'geosample'?" in errors[0]


def test_collect_only_counts_the_contract_items(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--dpplug-plugin", "geosample", "--collect-only", "-q")
    assert done.returncode == 0, done.stdout
    assert f"{len(CONTRACTS)} tests collected" in done.stdout
    assert done.stdout.count("dpplug[geosample]") == len(CONTRACTS)


def test_require_fails_a_plugin_below_the_level_and_passes_it_at_its_own(tmp_path: Path) -> None:
    """With its sampling-law contract deselected, geosample's contracts of the session pass but
    earn "audited" only: requiring "exactly verified" fails its level item, saying what did not
    run, and requiring "audited" passes it."""
    common = ("--dpplug-plugin", "geosample", "--dpplug-mode", "fast", "-q")
    common += ("-k", "not sampling-law")
    short = _pytest(tmp_path, *common, "--dpplug-require", "exactly verified")
    assert short.returncode == 1, short.stdout
    assert f"1 failed, {len(CONTRACTS) - 1} passed" in short.stdout
    assert (
        "geosample: level audited, below the required exactly verified (contracts not run in "
        "this session: sampling-law; cells no contract covered: sample × batch)"
    ) in short.stdout
    enough = _pytest(tmp_path, *common, "--dpplug-require", "audited")
    assert enough.returncode == 0, enough.stdout
    assert f"{len(CONTRACTS)} passed" in enough.stdout
