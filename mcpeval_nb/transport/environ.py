"""The environment a server under evaluation is started with: this process's, less its secrets.

``MCPEVAL_HTTP_AUTHORIZATION`` (an upstream credential) and the raw ``MCPEVAL_SESSION`` (only its hash
is ever stored) are meant for mcpeval-nb itself; a server started by ``shim``, ``probe``, ``score``,
``init`` or ``compare`` (or any of its descendants) must not be able to log or send them.  They are
removed from the inherited environment; variables the caller lays over it explicitly are kept.  A hostile
process of the same user can still read the parent's environment (``/proc/<pid>/environ``): this keeps
the secrets from the server, not from the machine.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["WITHHELD_VARIABLES", "server_environment"]

#: Variables never passed on to a server process.
WITHHELD_VARIABLES = ("MCPEVAL_HTTP_AUTHORIZATION", "MCPEVAL_SESSION")


def server_environment(overlay: Mapping[str, str] | None = None,
                       base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a server child process.

    Args:
        overlay: variables laid over the inherited ones (kept as given).
        base: the inherited environment (default ``os.environ``).

    Returns:
        ``base`` without ``WITHHELD_VARIABLES``, then ``overlay``.
    """
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in WITHHELD_VARIABLES}
    env.update(overlay or {})
    return env
