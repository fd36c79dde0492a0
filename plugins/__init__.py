"""The built-in mechanisms of dpplug, one family per package, each registered as its own default
plugin through the same hooks a third party uses (so a family that cannot load is quarantined
alone and the others keep working).

Importing this package loads no family; the registry imports each of :data:`DEFAULT_PLUGINS`.
"""

#: The built-in families, in the order the registry loads them.
DEFAULT_PLUGINS = (
    "dpplug.plugins.samplers",
    "dpplug.plugins.partition",
    "dpplug.plugins.histograms",
    "dpplug.plugins.anonymized",
    "dpplug.plugins.queries",
    "dpplug.plugins.set_union",
)
