"""The recorded-behaviour mock and shape replay (docs/mock.md): a server that behaves like a recorded one,
and the recorded traffic's shape mix replayed against a new build, from content-minimised captures.

Modules: ``profile`` (the mock profile document and its read rules), ``build`` (``mock_profile`` from a
capture root), ``schemas`` (input schemas from skeletons or argument shapes), ``engine`` (the
deterministic draws: the protocol layer's backend), ``server`` (HTTP and stdio serving through serve's
protocol layer), and the replay modules.
"""

from __future__ import annotations

from .build import mock_profile
from .engine import MockEngine
from .export import export_mock_profile
from .profile import MockProfile, OutcomeCount, ToolProfile, load_profile, parse_profile, profile_schema_text
from .replay_report import ReplayReport
from .replay_run import replay
from .server import MockOptions, MockServer, run_mock, serve_mock

__all__ = ["MockEngine", "MockOptions", "MockProfile", "MockServer", "OutcomeCount", "ReplayReport",
           "export_mock_profile",
           "ToolProfile", "load_profile", "mock_profile", "parse_profile", "profile_schema_text", "replay",
           "run_mock", "serve_mock"]
