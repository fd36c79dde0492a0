"""A share of something chosen by the checked-out commit, so that CI covers all of it over
successive commits while each run pays for one share."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path


def rotation(shares: int) -> int:
    """An index in ``range(shares)``: ``DPPLUG_ROTATION`` (mod *shares*) if set, else one chosen
    by the hash of the checked-out commit, else 0 (no git checkout)."""
    given = os.environ.get("DPPLUG_ROTATION")
    if given is not None:
        return int(given) % shares
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return 0
    return int.from_bytes(hashlib.sha256(commit.encode()).digest()[:8], "big") % shares
