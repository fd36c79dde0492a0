"""What every adapter does with the budget a framework grants a plugin.

- :func:`place` puts a granted ε or δ into the range the plugin's schema accepts: a budget above
  the range is lowered to its top (the plugin then spends less than it was given, never more);
  one below it is reported, for the adapter to refuse or to treat as "too private to build".
- :func:`check_granted` refuses a built plugin whose declared guarantee is larger than its
  budget, exactly (:func:`dpplug.guarantee.within_budget`), before it touches any data: a plugin
  whose ``epsilon=ε`` builds a 2ε mechanism, or rounds e^ε up by a float, is a
  :class:`~dpplug.errors.PluginFault` in every framework, not a mechanism that spends more than
  its accountant granted.

Both are shared by the OpenDP and PipelineDP adapters, which import neither framework here.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from gmpy2 import mpq

from dpplug.errors import PluginFault
from dpplug.exact import as_rational
from dpplug.guarantee import within_budget
from dpplug.mechanism import Mechanism
from dpplug.param_types import RationalType


class Placed(Enum):
    """Where a granted budget lies against the plugin's range for it."""

    WITHIN = "within"
    #: Above the range: lowered to its top.
    ABOVE = "above"
    #: Below the range: the plugin cannot be built that private.
    BELOW = "below"


def place(cls: type[Mechanism], parameter: str, value: object) -> tuple[Any, Placed]:
    """The value to build plugin class *cls* with for a granted *value* of its budget
    *parameter* (``"epsilon"`` or ``"delta"``), and where *value* lies against the range its
    schema declares. A value that is not a number is passed on unchanged (the schema then says
    what is wrong), and so is one for a parameter the schema does not declare."""
    declared = next((p for p in cls.schema if p.name == parameter), None)
    if declared is None or not isinstance(declared.type, RationalType):
        return value, Placed.WITHIN
    try:
        exact = as_rational(value)
    except (TypeError, ValueError):
        return value, Placed.WITHIN
    high, low = declared.high, declared.low
    if high is not None and not declared.high_open and exact > high:
        return mpq(high), Placed.ABOVE
    if low is not None and (exact < low or (declared.low_open and exact == low)):
        return value, Placed.BELOW
    return value, Placed.WITHIN


def check_granted(mechanism: Mechanism, epsilon: object, delta: object, granted_by: str) -> None:
    """:class:`~dpplug.errors.PluginFault` unless the guarantee *mechanism* declares is within
    the budget (*epsilon*, *delta*) that *granted_by* gave it (``math.inf``: no bound on that
    coordinate), compared exactly."""
    guarantee = mechanism.guarantee
    if within_budget(guarantee, epsilon, delta):
        return
    raise PluginFault(
        f"{mechanism.name} declares {guarantee.describe()}, more than the budget "
        f"(ε = {_shown(epsilon)}, δ = {_shown(delta)}) {granted_by} granted it; dpplug runs a "
        f"plugin only within its budget, so nothing was run. Fix the plugin (`dpplug conform "
        f"{mechanism.name}` checks that it spends at most what it is given) or use another one"
    )


def _shown(value: object) -> str:
    try:
        return f"{float(value):.6g}"  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return repr(value)
