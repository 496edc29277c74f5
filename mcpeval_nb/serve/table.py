"""The one table of serve's tools: per tool its name, description, handler, input and output schemas,
and whether it spawns server processes or writes to the capture root (like ``probe.kinds.table``).

The order is SPEC 13.1's (``tools/list`` answers in it; the spawn tools only with ``--allow-spawn``).
Everything else that depends on a tool is derived from ``TOOLS``: the listing (``Tool.listing``), the
argument check (``Tool.checker``), the spawn gate and the audit rule (``call.py``), and the tools
``--print-config`` names (``config.py``).
"""

from __future__ import annotations

from .base import Tool
from .catalog_tools import get_catalog_status
from .schemas import (
    ANNOTATION,
    CATALOG_STATUS,
    FINDING,
    FINDING_ID,
    IDENTIFIER,
    LABEL,
    MANIFEST,
    POINT,
    REPORT,
    STATE,
    TARGET,
    nullable,
    obj,
)
from .spawn_tools import run_probe, scaffold, score, verify_finding
from .store_tools import get_finding, get_readiness_trends, list_findings, record_annotation

__all__ = ["SPAWN_TOOLS", "TOOLS"]

TOOLS: tuple[Tool, ...] = (
    Tool("list_findings", "Promoted findings (recurring tool failures), best first; optionally only one "
         "lifecycle state. Built from index rows: labels, counts, scores, shaped arguments.",
         list_findings,
         input=obj({"state": {**STATE, "description": "Only findings in this lifecycle state."}}),
         output=obj({"findings": {"type": "array", "items": FINDING}}, ("findings",))),
    Tool("get_finding", "One promoted finding by id, with the remediation hint of its class.",
         get_finding,
         input=obj({"finding_id": FINDING_ID}, ("finding_id",)),
         output=obj({"finding": FINDING}, ("finding",))),
    Tool("get_readiness_trends", "Readiness trend points, at most 10 per server, oldest first, with the "
         "score delta against the previous point (or why scores do not compare).",
         get_readiness_trends,
         input=obj({}),
         output=obj({"servers": {"type": "array", "items": obj(
             {"server": {"type": "string"}, "points": {"type": "array", "items": POINT}},
             ("server", "points"))}}, ("servers",))),
    Tool("run_probe", "Run a probe manifest (held in memory only) and the readiness battery against a "
         "stdio command or a loopback URL. Never runs mutating cases, never contacts a remote endpoint.",
         run_probe,
         input=obj({"manifest": MANIFEST, **TARGET, "server_label": LABEL}, ("manifest",)),
         output=REPORT, spawns=True, writes=True),
    Tool("scaffold", "Scaffold a read-only probe manifest from a live server and return it; writes "
         "nothing.", scaffold,
         input=obj({**TARGET, "server_label": LABEL, "confirm_read_only": {
             "type": "boolean", "description": "Attest that unannotated tools are read-only."}}),
         output=obj({"manifest": {"type": "object"}, "decisions": {"type": "array", "items": obj(
             {"tool": {"type": "string"}, "decision": {"type": "string"}}, ("tool", "decision"))}},
             ("manifest", "decisions")),
         spawns=True),
    Tool("score", "Run the standard readiness battery alone against a stdio command or a loopback URL "
         "and record its trend point.", score,
         input=obj({**TARGET, "server_label": LABEL}),
         output=REPORT, spawns=True, writes=True),
    Tool("verify_finding", "Run one manifest case against the fixed server and move the finding's "
         "lifecycle (three consecutive passes close it).", verify_finding,
         input=obj({"finding_id": FINDING_ID, "case": IDENTIFIER, "manifest": MANIFEST, **TARGET},
                   ("finding_id", "case", "manifest")),
         output=obj({
             "finding_id": FINDING_ID, "case": IDENTIFIER, "state": STATE,
             "consecutive_passes": {"type": "integer"}, "passed": {"type": "boolean"},
             "errored": {"type": "boolean"}, "reason": nullable("string"),
         }, ("finding_id", "case", "state", "consecutive_passes", "passed", "errored", "reason")),
         spawns=True, writes=True),
    Tool("record_annotation", "Annotate a captured call (session and seq) with a typed remark, as "
         "mcpeval-nb annotate does.", record_annotation,
         input=obj(ANNOTATION, ("session", "seq", "kind", "note")),
         output=obj({"kind": {"type": "string"}, "session": {"type": "string"}, "seq": {"type": "integer"}},
                    ("kind", "session", "seq")),
         writes=True),
    Tool("get_catalog_status", "Did a server's tool catalog change since it was approved (pinned)? Per "
         "server: the changes recorded since its pin, signal flags the pin does not hold, and dead tools. "
         "Labels, digests and counts only; read-only.", get_catalog_status,
         input=obj({"server": {**LABEL, "description": "Only this server label."}}),
         output=obj({"servers": {"type": "array", "items": CATALOG_STATUS}}, ("servers",))),
)
#: The tools that launch server processes, in table order.
SPAWN_TOOLS = tuple(t.name for t in TOOLS if t.spawns)
