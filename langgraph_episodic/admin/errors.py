"""The error a user can fix, raised by the command line and the admin operations it shares
with the inspector."""

from __future__ import annotations

from ..errors import Error


class CliError(Error):
    """A problem the user can fix; the command line prints the message and exits with code 2
    (the inspector shows it as a refused request)."""
