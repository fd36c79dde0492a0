"""The plugin's own test; `pytest --dpplug` adds dpplug's conformance contracts beside it."""

import dpplug


def test_registered_from_this_distribution() -> None:
    entry = dpplug.registry().get("randomized-response")
    assert entry.source.distribution == "dpplug-randomized-response"
    assert dpplug.create("randomized-response").pmf(0)[0] == dpplug.Pmf({0: 1})[0] * 3 / 4
