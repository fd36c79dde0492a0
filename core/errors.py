"""The one exception hierarchy of dpplug.

Every error is raised before any randomness is drawn, so a call that fails releases nothing and
changes nothing. Messages say what was wrong *and* what to change.

- :class:`BadParameter`: a mechanism parameter (ε, δ, n, γ, β, …) is invalid.
- :class:`BadData`: the data handed to a mechanism (counts, labels, shapes) is invalid.
- :class:`UnknownMechanism`: no registered plugin has the requested name.
- :class:`NotSupported`: the mechanism exists but cannot do what was asked.
- :class:`PluginFault`: a plugin failed to import, to register, or broke the core contract.
  :class:`DuplicateMechanismName` is the plugin fault for a name registered twice.

:class:`AccuracyWarning` is a warning, not an error: a mechanism that was built as asked but
whose declared accuracy covers none of the data it can receive says so when it is created.
"""

from __future__ import annotations


class DpplugError(Exception):
    """Base class of every error dpplug raises on purpose."""


class BadParameter(DpplugError, ValueError):
    """A mechanism parameter is missing, of the wrong type, or outside its range."""


class BadData(DpplugError, ValueError):
    """Input data (counts, labels, arrays) is of the wrong type, shape or range."""


class UnknownMechanism(DpplugError, LookupError):
    """No registered plugin has the requested name."""


class NotSupported(DpplugError):
    """The mechanism does not offer the requested operation."""


class PluginFault(DpplugError):
    """A plugin could not be imported or registered, or violated the core contract."""


class DuplicateMechanismName(PluginFault):
    """Two plugins registered a mechanism under the same name."""


class AccuracyWarning(UserWarning):
    """The mechanism works as declared, but its accuracy promise covers none of its inputs (a
    sparse release whose per-query bound starts above n, say); the message names the parameters
    that would change that."""
