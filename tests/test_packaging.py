"""The wheel ships every package of the source tree: `pyproject.toml` lists them by hand."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _declared() -> tuple[dict[str, str], set[str]]:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return setuptools["package-dir"], set(setuptools["packages"])


def _on_disk(package_dir: dict[str, str]) -> set[str]:
    found = set()
    for package, folder in package_dir.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            if "build" in init.relative_to(ROOT).parts:
                continue
            inner = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *inner)))
    return found


def test_every_package_folder_is_listed_for_the_wheel() -> None:
    package_dir, packages = _declared()
    assert _on_disk(package_dir) - packages == set()


def test_every_listed_package_exists() -> None:
    package_dir, packages = _declared()
    assert packages - _on_disk(package_dir) == set()
