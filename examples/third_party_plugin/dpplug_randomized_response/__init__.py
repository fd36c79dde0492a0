"""An example third-party dpplug plugin (see ``plugin.py``)."""
