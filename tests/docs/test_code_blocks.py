"""Every Python block of the documentation runs as written, and the plugins it shows pass the
conformance suite (so the examples are real mechanisms, not sketches)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dpplug import Registry
from dpplug.conformance.results import Level
from dpplug.conformance.runner import run_plugin
from dpplug.conformance.settings import Settings

DOCS = Path(__file__).parents[2] / "docs"
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _blocks(page: str) -> list[str]:
    return BLOCK.findall((DOCS / page).read_text(encoding="utf-8"))


def _run(block: str, name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": name}
    exec(compile(block, name, "exec"), namespace)  # the documentation's own code
    return namespace


def test_opendp_blocks_run_in_order_in_a_fresh_process() -> None:
    """docs/opendp.md's blocks as one session, in their own interpreter (they register Context
    constructors, which OpenDP keeps for the life of the process)."""
    pytest.importorskip("opendp")
    session = "\n".join(_blocks("opendp.md"))
    result = subprocess.run(
        [sys.executable, "-c", session], capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.parametrize("index", range(len(_blocks("writing-a-plugin.md"))))
def test_writing_a_plugin_blocks_run_and_their_plugins_conform(index: int) -> None:
    namespace = _run(_blocks("writing-a-plugin.md")[index], f"writing_a_plugin_{index}")
    registry: Registry = namespace["registry"]
    (runtime,) = [entry for entry in registry if entry.source.distribution == "(runtime)"]
    result = run_plugin(runtime, Settings(mode="fast"))
    assert result.level is Level.EXACTLY_VERIFIED, [
        (r.contract, r.outcome.value, r.detail) for r in result.results
    ]


def _section(page: str, heading: str) -> str:
    text = (DOCS / page).read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else len(text)]


@pytest.mark.parametrize(
    ("page", "heading"),
    [
        ("mechanisms.md", "## Set-union selectors"),
        ("pipelinedp.md", "## Set union: partitions when units hold many"),
    ],
)
def test_set_union_blocks_run_in_order(page: str, heading: str) -> None:
    """The set-union sections' blocks, as one session in their own interpreter (Beam's and
    Spark's workers import what the session defines)."""
    pytest.importorskip("pipeline_dp")
    session = "\n".join(BLOCK.findall(_section(page, heading)))
    assert session
    result = subprocess.run(
        [sys.executable, "-c", session], capture_output=True, text=True, timeout=900, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
