"""The query-releaser probe (:mod:`.probe`)."""

from dpplug.conformance.probes.query_releaser.probe import QueryReleaserProbe

__all__ = ["QueryReleaserProbe"]
