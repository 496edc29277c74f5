"""A small tmpfs for full-disk tests (root and mount(8) needed; CI runs as root, so there it must work)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_tmpfs(where: Path, size: str) -> Iterator[Path]:
    """Mount a tmpfs of ``size`` (``16k``, ``64k``) at ``where`` for the block, then unmount it.

    Fails in CI as root when it cannot be mounted; elsewhere skips, saying why.
    """
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        if os.environ.get("CI") and os.geteuid() == 0:
            pytest.fail("CI runs as root: a tmpfs must be mountable for the full-disk tests")
        pytest.skip("cannot mount a tmpfs here (needs root); the RLIMIT_FSIZE test covers the writer")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)
