"""Options of this test suite: ``--slow-grid`` for the grid cases marked ``slow_grid``."""

from __future__ import annotations

import pytest

from support.rotation import rotation


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow-grid",
        choices=("skip", "rotate", "all"),
        default="skip",
        help="grid cases marked slow_grid (minutes of exact big-integer work each): skip them "
        "(default), run one chosen by the commit (CI: every case over successive commits; "
        "DPPLUG_ROTATION picks it), or run all",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mode = config.getoption("--slow-grid")
    slow = [item for item in items if item.get_closest_marker("slow_grid")]
    if mode == "all" or not slow:
        return
    chosen = {slow[rotation(len(slow))]} if mode == "rotate" else set()
    skip = pytest.mark.skip(reason="slow grid case: --slow-grid=all runs it, CI one per commit")
    for item in slow:
        if item not in chosen:
            item.add_marker(skip)
