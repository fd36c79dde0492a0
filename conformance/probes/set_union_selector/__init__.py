"""The probe of the set-union-selector kind (:mod:`.probe`)."""

from dpplug.conformance.probes.set_union_selector.probe import SetUnionProbe

__all__ = ["SetUnionProbe"]
