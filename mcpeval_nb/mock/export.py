"""``mock --profile FILE``: the mock profile written out of the capture root, as an audited export.

A profile is content-free (distributions, template ids, sizes), but it is derived from the store and
leaves the root, so it follows every export's rules: the output's place is checked by the one export
rule (``root.outputs.Destination``: never a symlink, never inside the store; the root itself is allowed,
as for issues), and an ``export-mock-profile`` audit record is appended whether it is done or refused.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..journal.audit import audited
from ..root import Root, RootLike
from ..root.outputs import Destination
from .build import mock_profile
from .profile import MockProfile

__all__ = ["PROFILE_OUTPUT", "export_mock_profile"]


class _FileOutput(Destination):
    """The export rule for one file: the place checks of ``Destination``; an existing output must be a
    plain file (it is replaced), never a directory."""

    def check(self, out: Path, *, force: bool = False) -> None:
        if os.path.isdir(out):
            raise self.refusal(f"{self.what} {self.noun} is a directory: {out}")


#: Where a mock profile may be written.
PROFILE_OUTPUT = _FileOutput(what="mock --profile", kind="mock-profile", title="the mock profile",
                             failure=UsageError, refusal=UsageError, noun="file", inside_root=True,
                             replace=True)


def export_mock_profile(root: RootLike, output: str | os.PathLike[str], *, server: str,
                        since: Any = None, until: Any = None) -> tuple[MockProfile, Path]:
    """Build the mock profile of ``server`` and write it to ``output`` (replacing a file there).

    Args:
        root: the capture root (None: ``$MCPEVAL_HOME``, else ``~/.mcp-eval``).
        output: the profile file to write.
        server / since / until: as ``mock_profile``.

    Returns:
        The profile and the path written.

    Raises:
        UsageError: an invalid label or day, nothing recorded, or an output the export rule refuses or
            that cannot be written (each named); the refusal is audited too.
    """
    resolved = Root.of(root).path
    with audited(resolved, "export-mock-profile", server=server) as entry:
        target = PROFILE_OUTPUT.resolve(output, root=resolved)
        profile = mock_profile(resolved, server=server, since=since, until=until)
        path = profile.write(target)
        entry.counts.update(tools=len(profile.tools), calls=profile.calls)
        entry.paths.append(path)
        return profile, path
