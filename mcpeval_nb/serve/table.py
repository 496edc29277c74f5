"""The tool table: SPEC 13.1's order, each tool's description and handler (schemas in ``schemas.py``)."""

from __future__ import annotations

from . import spawn_tools, store_tools
from .tools import Tool

__all__ = ["TOOLS"]

TOOLS: tuple[Tool, ...] = (
    Tool("list_findings", "Promoted findings (recurring tool failures), best first; optionally only one "
         "lifecycle state. Built from index rows: labels, counts, scores, shaped arguments.",
         store_tools.list_findings),
    Tool("get_finding", "One promoted finding by id, with the remediation hint of its class.",
         store_tools.get_finding),
    Tool("get_readiness_trends", "Readiness trend points, at most 10 per server, oldest first, with the "
         "score delta against the previous point (or why scores do not compare).",
         store_tools.get_readiness_trends),
    Tool("run_probe", "Run a probe manifest (held in memory only) and the readiness battery against a "
         "stdio command or a loopback URL. Never runs mutating cases, never contacts a remote endpoint.",
         spawn_tools.run_probe),
    Tool("scaffold", "Scaffold a read-only probe manifest from a live server and return it; writes "
         "nothing.", spawn_tools.scaffold),
    Tool("score", "Run the standard readiness battery alone against a stdio command or a loopback URL "
         "and record its trend point.", spawn_tools.score),
    Tool("verify_finding", "Run one manifest case against the fixed server and move the finding's "
         "lifecycle (three consecutive passes close it).", spawn_tools.verify_finding),
    Tool("record_annotation", "Annotate a captured call (session and seq) with a typed remark, as "
         "mcpeval-nb annotate does.", store_tools.record_annotation),
)
