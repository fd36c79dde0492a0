"""Every code block of the README runs as written (or, for the set-up commands and the excerpts of
the example plugin, is exactly what CI runs and what the example package contains)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from support.main_job import MAIN_JOB

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: (indentation, language, body) of every fenced block.
BLOCKS = [
    (indent, language, textwrap.dedent(body))
    for indent, language, body in re.findall(
        r"^( *)```(\w*)\n(.*?)^\1```", README, flags=re.S | re.M
    )
]
EXAMPLE = ROOT / "examples" / "third_party_plugin"
#: The two set-up commands: install and run the main job, then every test.
SET_UP = BLOCKS[:2]


def _blocks(language: str, indented: bool) -> list[str]:
    return [body for indent, lang, body in BLOCKS if lang == language and bool(indent) == indented]


def test_every_block_names_its_language() -> None:
    assert all(language for _, language, _ in BLOCKS), [
        body for _, lang, body in BLOCKS if not lang
    ]


def test_the_python_blocks_run_in_order_as_one_session() -> None:
    namespace: dict[str, Any] = {"__name__": "readme"}
    for index, block in enumerate(_blocks("python", indented=False)):
        exec(compile(block, f"README python block {index}", "exec"), namespace)


def test_the_set_up_commands_are_what_ci_and_tox_run() -> None:
    (_, _, install_and_conform), (_, _, tests) = SET_UP
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci.endswith(tests.strip()), (ci, tests)
    install, conform = (part.strip() for part in install_and_conform.split("&&"))
    assert install == "python -m pip install ."
    command = shlex.split(conform)
    assert tuple(command[:3]) == MAIN_JOB and len(command) == 4


@pytest.mark.parametrize(
    "line",
    [
        line
        for _, language, body in BLOCKS[2:]
        if language == "bash"
        for line in body.splitlines()
        if line.strip()
    ],
)
def test_the_command_line_examples_run(line: str) -> None:
    command = shlex.split(line)
    executable = shutil.which(command[0])
    assert executable is not None, f"{command[0]} is not installed"
    done = subprocess.run(
        [executable, *command[1:]], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr


def test_the_plugin_excerpts_are_the_example_package_verbatim() -> None:
    plugin = (EXAMPLE / "dpplug_randomized_response" / "plugin.py").read_text(encoding="utf-8")
    pyproject = (EXAMPLE / "pyproject.toml").read_text(encoding="utf-8")
    excerpts = _blocks("python", indented=True)
    assert excerpts and all(excerpt in plugin for excerpt in excerpts), excerpts
    (toml,) = _blocks("toml", indented=True)
    assert toml in pyproject
