"""Framework adapters: registered plugins as OpenDP measurements (``dpplug.adapters.opendp``) and
PipelineDP strategies (``dpplug.adapters.pipelinedp``). Neither adapter exists yet; this package
reserves their place in the layout."""
