"""The README's main job as the tests run it: ``dpplug conform --report DIR``."""

from __future__ import annotations

#: The main job's command, less its report folder.
MAIN_JOB = ("dpplug", "conform", "--report")
