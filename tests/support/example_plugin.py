"""The example third-party plugin doubles as the registry tests' plugin: its sampler class is
imported from examples/third_party_plugin without installing the package, so the tests can
register it at run time or through a hand-made entry point."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

# The package alone, copied: the example's folder may hold a local build's metadata, which would
# make the example an installed distribution for every entry-point scan of these tests.
_EXAMPLE = (
    Path(__file__).parents[2] / "examples" / "third_party_plugin" / "dpplug_randomized_response"
)
_COPY = Path(tempfile.mkdtemp(prefix="dpplug-example-"))
shutil.copytree(_EXAMPLE, _COPY / _EXAMPLE.name)
sys.path.insert(0, str(_COPY))

from dpplug_randomized_response.plugin import RandomizedResponse  # noqa: E402 (after the copy)

__all__ = ["RandomizedResponse"]
