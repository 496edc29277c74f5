"""The capture root, owned in one place: where it is (``Root.of``), what lives in it (``layout``), its
salt and settings, and where an export may go (``outputs``).

Below ``journal`` and above only ``errors``, ``limits`` and ``clock``: everything that reads or writes
under a root asks this package for the path, and every public function that takes a root accepts
``RootLike`` (text, a path, a ``Root`` or None) and resolves it with ``Root.of``.
"""

from __future__ import annotations

from .._lazy import exports as _exports
from . import layout as layout

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from .config import Config as Config
    from .config import check_days as check_days
    from .files import drop_engine_dataset as drop_engine_dataset
    from .files import entry_exists as entry_exists
    from .files import list_dir as list_dir
    from .files import read_json_file as read_json_file
    from .resolve import ROOT_SOURCES as ROOT_SOURCES
    from .resolve import SALT_BYTES as SALT_BYTES
    from .resolve import Root as Root
    from .resolve import RootLike as RootLike
    from .resolve import load_salt as load_salt
    from .resolve import resolve_root as resolve_root

# Loaded on first use (``mcpeval_nb._lazy``): the stdio shim reads its root's place and salt through
# ``where`` and ``salt`` before its server starts, without the dataclasses and JSON the rest loads.
_EXPORTS: dict[str, tuple[str, ...]] = {
    ".config": ("Config", "check_days"),
    ".files": ("drop_engine_dataset", "entry_exists", "list_dir", "read_json_file"),
    ".resolve": ("ROOT_SOURCES", "SALT_BYTES", "Root", "RootLike", "load_salt", "resolve_root"),
}

del TYPE_CHECKING  # not a public name
_names, __getattr__, __dir__ = _exports(globals(), _EXPORTS)
__all__ = sorted([*_names, "layout"])
