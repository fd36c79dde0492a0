"""Every Python block of the documentation runs as written, and the plugins it shows pass the
conformance suite (so the examples are real mechanisms, not sketches)."""

from __future__ import annotations

import re
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


@pytest.mark.parametrize("index", range(len(_blocks("writing-a-plugin.md"))))
def test_writing_a_plugin_blocks_run_and_their_plugins_conform(index: int) -> None:
    namespace = _run(_blocks("writing-a-plugin.md")[index], f"writing_a_plugin_{index}")
    registry: Registry = namespace["registry"]
    (runtime,) = [entry for entry in registry if entry.source.distribution == "(runtime)"]
    result = run_plugin(runtime, Settings(mode="fast"))
    assert result.level is Level.EXACTLY_VERIFIED, [
        (r.contract, r.outcome.value, r.detail) for r in result.results
    ]
