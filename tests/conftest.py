"""Test configuration shared by every folder: ``--slow-grid`` for the grid cases marked
``slow_grid``; Apache Beam's message that its optional BigQuery client (apitools) is missing,
logged once when PipelineDP imports Beam, is expected here and dropped, so it does not show in
the output of the tests that print their logs."""

from __future__ import annotations

import logging

import pytest

from support.rotation import rotation


class _ExpectedBeamMessages(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("apitools not found")


logging.getLogger().addFilter(_ExpectedBeamMessages())


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
