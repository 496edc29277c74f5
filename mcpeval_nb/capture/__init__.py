"""Capture: the correlator and the recording shims (stdio and Streamable HTTP).

Raw content: ``Correlator`` and ``classify_frame`` take raw protocol content (JSON-RPC frames with
their arguments, results and error prose) and turn it into journal records through ``privacy``.  They
are not part of the payload-free public surface (``mcpeval_nb.__all__``); import them from
``mcpeval_nb.capture``.  The shims (``run_shim``, ``run_shim_http``) and ``annotate`` are public:
they write only sanitised records.
"""

from __future__ import annotations

from .._lazy import exports as _exports

TYPE_CHECKING = False  # typing's, without importing typing: the shim starts its server first
if TYPE_CHECKING:
    from .correlate import Correlator as Correlator
    from .correlate import classify_frame as classify_frame

_EXPORTS: dict[str, tuple[str, ...]] = {
    ".correlate": ("Correlator", "classify_frame"),
}

del TYPE_CHECKING  # not a public name
__all__, __getattr__, __dir__ = _exports(globals(), _EXPORTS)

