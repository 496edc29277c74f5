"""Protocol eras and the one negotiation rule (docs/protocol.md).

MCP has two eras.  *Legacy* revisions (2025-11-25 and earlier) open a session with the ``initialize``
handshake; the *modern* revision 2026-07-28 is stateless: no handshake, no session id, every request
carries its protocol version, client info and client capabilities in ``params._meta``, and
``server/discover`` says what a server serves.

The client chooses with ``--protocol``:

- ``auto`` (the default): send ``server/discover`` at 2026-07-28 first; a discover result naming
  2026-07-28 (or a modern error naming it) makes the connection modern; anything else (any other
  error, an HTTP 4xx without a modern error body, no answer in time) falls back to the ``initialize``
  handshake at 2025-06-18, as the official SDK does.
- ``legacy``: the ``initialize`` handshake only (what this package did before the modern revision).
- ``2026-07-28``: the modern revision only.

A run negotiates once, on its first connection, and every later connection of the run uses the era
found (the era is a property of the server, SPEC's versioning page).  An era mismatch is a usage error
that names the fix (``ProtocolMismatch``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ProtocolMismatch, UsageError

__all__ = [
    "AUTO",
    "HEADER_MISMATCH",
    "LEGACY",
    "LEGACY_VERSION",
    "META_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION",
    "META_VERSION",
    "MISSING_CAPABILITY",
    "MODERN_ERRORS",
    "MODERN_VERSION",
    "PROTOCOL_CHOICES",
    "TASKS_EXTENSION",
    "UNSUPPORTED_VERSION",
    "Era",
    "Negotiated",
    "check_protocol",
    "modern_only",
    "modern_unserved",
    "supported_versions",
]

MODERN_VERSION = "2026-07-28"
LEGACY_VERSION = "2025-06-18"
AUTO = "auto"
LEGACY = "legacy"
#: The values of ``--protocol``, in the order the docs list them.
PROTOCOL_CHOICES: tuple[str, ...] = (AUTO, LEGACY, MODERN_VERSION)

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

#: The modern revision's reserved error codes (-32020 to -32099): header mismatch, a missing client
#: capability, an unsupported protocol version.
HEADER_MISMATCH = -32020
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022
MODERN_ERRORS = frozenset({HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION})

Era = Literal["legacy", "modern"]


@dataclass(frozen=True)
class Negotiated:
    """The era and protocol version a connection (and so a run) used.

    Attributes:
        era: ``legacy`` (the initialize handshake) or ``modern`` (2026-07-28, stateless).
        version: the version in use: the one the server answered to ``initialize`` (legacy), or
            2026-07-28 (modern).  Only a date-shaped value is kept.
    """

    era: Era
    version: str

    @property
    def modern(self) -> bool:
        """True for the 2026-07-28 era."""
        return self.era == "modern"

    def to_json(self) -> dict[str, str]:
        """``{"era": ..., "version": ...}`` (sorted keys)."""
        return {"era": self.era, "version": self.version}


def check_protocol(choice: str) -> str:
    """Validate a ``--protocol`` value.

    Args:
        choice: ``auto``, ``legacy`` or ``2026-07-28``.

    Returns:
        The value.

    Raises:
        UsageError: any other value (the message lists the allowed ones, never echoes the value).
    """
    if choice not in PROTOCOL_CHOICES:
        raise UsageError("--protocol must be auto, legacy or 2026-07-28")
    return choice


def supported_versions(data: Any) -> tuple[str, ...] | None:
    """The ``supported`` list of an UnsupportedProtocolVersionError's ``data`` (date-shaped strings only)."""
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list):
        return None
    return tuple(v for v in supported if _date_shaped(v))


def _date_shaped(value: Any) -> bool:
    return (isinstance(value, str) and len(value) == 10 and value[4] == "-" and value[7] == "-"
            and value.replace("-", "").isdigit())


def modern_only() -> ProtocolMismatch:
    """The error for a legacy client against a server that serves only the modern revision."""
    return ProtocolMismatch(f"the server requires protocol {MODERN_VERSION}; run with --protocol auto",
                            required=MODERN_VERSION)


def modern_unserved() -> ProtocolMismatch:
    """The error for ``--protocol 2026-07-28`` against a server that does not serve it."""
    return ProtocolMismatch(f"the server does not serve protocol {MODERN_VERSION} (it answers only the "
                            "initialize handshake); run with --protocol auto", required=LEGACY)
