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
