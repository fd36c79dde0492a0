"""The partition-selector probe (:mod:`.probe`)."""

from dpplug.conformance.probes.partition_selector.probe import SelectorProbe

__all__ = ["SelectorProbe"]
