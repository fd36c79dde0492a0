"""The README's "Which mechanism?" section is `dpplug compare`'s current output, not typed: it
equals what ``dpplug compare --readme`` prints now (regenerate it with
``dpplug compare --readme --write README.md`` after changing a mechanism's bounds)."""

from __future__ import annotations

from pathlib import Path

from dpplug.comparison_views import (
    README_TASKS,
    current_section,
    figure,
    readme_section,
    report_sweeps,
)
from dpplug.plugin_registry import Registry

ROOT = Path(__file__).parents[2]


def test_the_readme_section_is_the_tools_current_output() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert current_section(readme) == readme_section()


def test_the_report_sweeps_are_the_readme_tasks_and_draw() -> None:
    """The sweeps a report plots are the README tasks' (here over the built-ins alone), and
    every crossover they find is in the README."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sweeps = report_sweeps(Registry.load(entry_points=False))
    assert len(sweeps) == sum(1 for task in README_TASKS if task.sweep)
    for sweep in sweeps:
        assert all(c.describe() in readme for c in sweep.crossovers)
        axes = figure(sweep).axes[0]
        assert axes.get_title() == sweep.task.describe(sweep.parameter)
        assert {line.get_label() for line in axes.get_lines()} <= set(sweep.series())
