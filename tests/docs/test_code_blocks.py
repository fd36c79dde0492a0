"""Every code block of every page of docs/ runs as written: each fence names its language, each
page's Python blocks run in order as one session in a fresh interpreter (they may register
things OpenDP keeps for the life of a process), the plugins of writing-a-plugin.md pass the
conformance suite (so the examples are real mechanisms, not sketches), and the shell blocks run
against the plugin they name, installed."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dpplug import Registry
from dpplug.conformance.results import Level, Outcome
from dpplug.conformance.runner import run_plugin
from dpplug.conformance.settings import Settings

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(path.name for path in DOCS.glob("*.md"))
#: (indentation, language, body) of a fenced block, indented blocks (in list items) included.
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.S | re.M)
#: What each shell block's plugin is, by page: the example package, or a block of the page.
SHELL_PLUGINS = {"conformance.md": "example", "writing-a-plugin.md": 2}
#: Appended to shell commands so that the suite runs in its fast mode.
FAST = {"conform": ["--fast"], "pytest": ["--dpplug-mode", "fast"]}


def _fences(page: str) -> list[tuple[str, str]]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return [(language, textwrap.dedent(body)) for _, language, body in FENCE.findall(text)]


def _blocks(page: str, language: str) -> list[str]:
    return [body for lang, body in _fences(page) if lang == language]


@pytest.mark.parametrize("page", PAGES)
def test_every_fence_names_its_language(page: str) -> None:
    assert all(language for language, _ in _fences(page)), page


@pytest.mark.parametrize("page", [page for page in PAGES if _blocks(page, "python")])
def test_the_python_blocks_of_each_page_run_in_order_in_a_fresh_process(page: str) -> None:
    session = "\n".join(_blocks(page, "python"))
    result = subprocess.run(
        [sys.executable, "-c", session], capture_output=True, text=True, timeout=900, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]


def _run(block: str, name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": name}
    exec(compile(block, name, "exec"), namespace)  # the documentation's own code
    return namespace


@pytest.mark.parametrize("index", range(len(_blocks("writing-a-plugin.md", "python"))))
def test_writing_a_plugin_blocks_register_plugins_that_conform(index: int) -> None:
    """Every contract passes; the level is the highest the covered cells allow (a mechanism as
    small as randomized response cannot reach every size the suite asks for)."""
    namespace = _run(_blocks("writing-a-plugin.md", "python")[index], f"writing_a_plugin_{index}")
    registry: Registry = namespace["registry"]
    (runtime,) = [entry for entry in registry if entry.source.distribution == "(runtime)"]
    result = run_plugin(runtime, Settings(mode="fast"))
    assert all(r.outcome is not Outcome.FAILED for r in result.results), [
        (r.contract, r.outcome.value, r.detail) for r in result.results
    ]
    expected = Level.AUDITED if result.uncovered else Level.EXACTLY_VERIFIED
    assert result.level is expected, result.uncovered


def _site(page: str, root: Path) -> Path:
    """The plugin *page*'s shell block names, installed (a dist-info and its module) in
    *root*."""
    plugin = SHELL_PLUGINS[page]
    info = root / "docs_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: docs-plugin\nVersion: 1.0\n")
    if plugin == "example":
        module = "dpplug_randomized_response.plugin"
        package = ROOT / "examples" / "third_party_plugin" / "dpplug_randomized_response"
        (root / package.name).mkdir()
        for source in package.glob("*.py"):
            (root / package.name / source.name).write_text(source.read_text())
    else:
        module = "docs_plugin"
        (root / "docs_plugin.py").write_text(_blocks(page, "python")[int(plugin)])
    (info / "entry_points.txt").write_text(f"[dpplug]\ndocs = {module}\n")
    return root


@pytest.mark.parametrize("page", [page for page in PAGES if _blocks(page, "bash")])
def test_the_shell_blocks_run_with_their_plugin_installed(page: str, tmp_path: Path) -> None:
    """Each command of the page's shell blocks, in the fast mode; ``pip install`` of the
    plugin's folder is what the site stands for, and must install its ``test`` extra."""
    site = _site(page, tmp_path / "site")
    environment = {"PYTHONPATH": str(site), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for block in _blocks(page, "bash"):
        for line in block.splitlines():
            command = shlex.split(line, comments=True)
            if command[:4] == ["python", "-m", "pip", "install"]:
                assert command[4:] == [".[test]"], line
                continue
            tool = "pytest" if command[:3] == ["python", "-m", "pytest"] else command[0]
            command = [sys.executable, *command[1:]] if command[0] == "python" else command
            if tool == "dpplug":
                command = [sys.executable, "-m", "dpplug.cli", *command[1:]]
            done = subprocess.run(
                [*command, *FAST.get(tool, [])],
                capture_output=True,
                text=True,
                timeout=900,
                cwd=tmp_path,
                env={**os.environ, **environment},
                check=False,
            )
            assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
    if page == "conformance.md":  # the example package declares the extra it tells to install
        pyproject = (ROOT / "examples" / "third_party_plugin" / "pyproject.toml").read_text()
        assert 'test = ["dpplug[test]"]' in pyproject
