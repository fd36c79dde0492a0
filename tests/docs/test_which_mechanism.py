"""The README's "Which mechanism?" section is `dpplug compare`'s current output, not typed: it
equals what ``dpplug compare --readme`` prints now (regenerate it with
``dpplug compare --readme --write README.md`` after changing a mechanism's bounds)."""

from __future__ import annotations

from pathlib import Path

from dpplug.comparison_views import current_section, readme_section

ROOT = Path(__file__).parents[2]


def test_the_readme_section_is_the_tools_current_output() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert current_section(readme) == readme_section()
