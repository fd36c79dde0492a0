"""The parameters of a small sparse-projection release the core tests read and write back."""

from __future__ import annotations

PROJECTION = {
    "universe": "range:0:99",
    "n": 50,
    "epsilon": 2,
    "delta": 1e-6,
    "max_queries": 4,
    "sparsity": 3,
    "grid": 8,
    "dimension": 40,
}
