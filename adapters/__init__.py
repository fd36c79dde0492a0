"""Framework adapters: registered plugins as OpenDP measurements (:mod:`dpplug.adapters.opendp`,
needs the ``opendp`` extra). The PipelineDP adapter will live beside it."""
