"""The example third-party plugin doubles as the registry tests' plugin: its sampler class is
imported from examples/third_party_plugin without installing the package, so the tests can
register it at run time or through a hand-made entry point."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "examples" / "third_party_plugin"))

from dpplug_randomized_response.plugin import RandomizedResponse

__all__ = ["RandomizedResponse"]
