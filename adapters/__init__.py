"""Framework adapters: registered plugins as OpenDP measurements (:mod:`dpplug.adapters.opendp`,
the ``opendp`` extra) and inside PipelineDP pipelines on its local backend, Beam and Spark
(:mod:`dpplug.adapters.pipelinedp`, the ``pipelinedp`` extra)."""
