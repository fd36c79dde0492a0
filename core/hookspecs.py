"""The pluggy markers of dpplug (project name ``"dpplug"``).

Each kind of mechanism declares one hook in its own module (:mod:`dpplug.kinds`), e.g.
``register_samplers(register)``; a plugin is a module (or any object) with functions marked
``@dpplug.hookimpl`` that call ``register(cls)`` once per mechanism class. Third-party packages
expose their plugin module through the entry-point group ``dpplug``::

    [project.entry-points.dpplug]
    my_mechanisms = "my_package.plugin"

The built-in mechanisms are registered through exactly these hooks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("dpplug")
hookimpl = pluggy.HookimplMarker("dpplug")

#: What a hook receives: call it with each mechanism class to register.
Register = Callable[[type[Any]], None]
