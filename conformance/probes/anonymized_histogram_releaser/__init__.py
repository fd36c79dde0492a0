"""The anonymized-histogram-releaser probe (:mod:`.probe`)."""

from dpplug.conformance.probes.anonymized_histogram_releaser.probe import AnonymizedProbe

__all__ = ["AnonymizedProbe"]
