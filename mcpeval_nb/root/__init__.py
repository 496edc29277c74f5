"""The capture root, owned in one place: where it is (``Root.of``), what lives in it (``layout``), its
salt and settings, and where an export may go (``outputs``).

Below ``journal`` and above only ``errors``, ``limits`` and ``clock``: everything that reads or writes
under a root asks this package for the path, and every public function that takes a root accepts
``RootLike`` (text, a path, a ``Root`` or None) and resolves it with ``Root.of``.
"""

from __future__ import annotations

from . import layout
from .config import Config, check_days
from .files import drop_engine_dataset, entry_exists, list_dir, read_json_file
from .resolve import ROOT_SOURCES, Root, RootLike, load_salt, resolve_root
from .salt import SALT_BYTES

__all__ = [
    "ROOT_SOURCES",
    "SALT_BYTES",
    "Config",
    "Root",
    "RootLike",
    "check_days",
    "drop_engine_dataset",
    "entry_exists",
    "layout",
    "list_dir",
    "load_salt",
    "read_json_file",
    "resolve_root",
]
