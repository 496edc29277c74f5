"""Where a share envelope goes: output validation (SPEC 11).

The output is resolved without following a symlink at its own path (the nearest existing ancestor is
canonicalised and the missing components re-appended) and must not overlap the capture root.  Staging
(``.mcpeval-share-<uuid4>``, mode 0700, locked) and the atomic publish are ``mcpeval_nb.staging``'s, shared
with every other export.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import ShareOutputError
from ..staging import stage_prefix

__all__ = ["STAGE_PREFIX", "check_output", "resolve_output"]

#: The share export's staging prefix (``staging.stage_prefix("share")``).
STAGE_PREFIX = stage_prefix("share")


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def resolve_output(dest: str | os.PathLike[str], *, root: Path, force: bool, what: str = "share") -> Path:
    """Resolve and validate the output directory (SPEC 11 steps 2-3); nothing is created.

    The output may not be inside the capture root at all (an envelope beside ``.salt`` invites sharing
    the whole root), and the capture root may not be inside the output.  The nearest existing ancestor
    must be a directory.  ``what`` names the command in messages (``share``, ``export-issues``).

    Returns:
        The absolute output path with its existing part canonicalised.

    Raises:
        ShareOutputError: a symlinked output, an overlap with the capture root, an output (or the
            nearest existing part of its path) that is not a directory, or a non-empty one without
            ``force``.
    """
    out = Path(os.path.abspath(os.fspath(dest)))
    if out.is_symlink():
        raise ShareOutputError(f"{what} refuses a symlinked output: {out}")
    missing: list[str] = []
    anchor = out
    while not os.path.lexists(anchor) and anchor != anchor.parent:
        missing.append(anchor.name)
        anchor = anchor.parent
    if missing and not os.path.isdir(anchor):
        raise ShareOutputError(f"{what} output's parent {anchor} is not a directory: {out}")
    resolved = Path(os.path.realpath(anchor)).joinpath(*reversed(missing))
    canon_root = Path(os.path.realpath(root))
    canon_store = Path(os.path.realpath(root / "store"))
    if _inside(resolved, canon_store) or _inside(canon_root, resolved):
        raise ShareOutputError(f"{what} output overlaps the capture store: {out}")
    if _inside(resolved, canon_root):
        raise ShareOutputError(f"{what} output must be outside the capture root (beside the salt it "
                               f"invites sharing the whole root): {out}")
    check_output(resolved, force=force, what=what)
    return resolved


def check_output(out: Path, *, force: bool, what: str = "share") -> None:
    """Re-validate the output right before publishing (SPEC 11 step 3 and 8).

    Args:
        out: the resolved output path.
        force: a non-empty existing output may be replaced.
        what: the command named in messages.

    Raises:
        ShareOutputError: the output is not a directory (a symlink included) or, without ``force``,
            not empty.
    """
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        raise ShareOutputError(f"{what} output must be a directory, not a symlink: {out}")
    if not force and os.listdir(out):
        raise ShareOutputError(f"{what} output is not empty; pass --force to replace it: {out}")
