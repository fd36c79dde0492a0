"""Running test code in a fresh interpreter, for what a test process cannot undo (OpenDP's
``dp.register`` is global and refuses a second registration; the features the adapter enables)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def run_fresh(code: str) -> dict[str, Any]:
    """Run *code* in a fresh interpreter from the repository's root; it prints one JSON object
    on its last line, which is returned."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))
