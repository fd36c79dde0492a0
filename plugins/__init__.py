"""The built-in mechanisms of dpplug, one family per package, each registered as its own default
plugin through the same hooks a third party uses (so a family that cannot load is quarantined
alone and the others keep working).

Importing this package loads no family; the registry imports each of
:data:`dpplug.plugin_registry.BUILT_IN_FAMILIES`.
"""
