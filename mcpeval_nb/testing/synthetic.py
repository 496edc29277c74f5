"""Deterministic synthetic capture roots, written through the real journal writer.

``synthetic_store`` makes a valid store of any size with realistic latencies (log-normal per tool, a
slow tail), error templates (a few message families per tool, reduced to salted template ids exactly as
the shim does), annotations and readiness trend points.  The same arguments always give the same bytes.
``canary_store`` writes hand-edited journal lines carrying unique marker strings in every place a
foreign journal could smuggle content, so any surface can be checked for leaks.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..clock import format_ms
from ..journal.append import append_records
from ..privacy.errorinfo import error_info, tool_error_info
from ..privacy.records import AnnotationRecord, CallRecord, Identity, MeasurementProfile, TrendPoint
from ..privacy.shape import shape
from ..root import Root, RootLike

__all__ = ["SyntheticStore", "synthetic_store"]

_START_MS = 1_785_542_400_000  # 2026-08-01T00:00:00Z
_MESSAGES = (
    "connection to {host} refused after {n} ms",
    "rate limit exceeded: retry in {n} seconds",
    "element '{name}' not found on page {n}",
    "permission denied for path /home/user{n}/{name}",
    "timeout waiting for selector #{name}-{n}",
)
_BURST = "upstream {host} returned 503 after {n} ms"
_NOTES = ("reported success but nothing changed", "needed a second call", "took a detour",
          "result differs from the docs", "ignored the instruction")
_STANDARDS = ("mcpeval-standard/1", "mcpeval-standard/2")
_BATCH = 50_000


@dataclass(frozen=True)
class SyntheticStore:
    """What ``synthetic_store`` wrote.

    Attributes:
        root: the capture root.
        calls: call records written.
        annotations: annotations written.
        trends: trend points written.
        salt: the salt used for template ids (derived from the seed, not the root's ``.salt``).
    """

    root: Path
    calls: int
    annotations: int
    trends: int
    salt: bytes


def _ts(day: int, ms_of_day: int) -> str:
    return format_ms(_START_MS + day * 86_400_000 + ms_of_day)


def _calls(rng: random.Random, n: int, servers: int, tools: int, days: int, error_rate: float,
           salt: bytes, sessions: int | None = None, identities: str = "some") -> Iterator[CallRecord]:
    medians = [math.log(20 + 780 * rng.random()) for _ in range(tools)]
    shapes = [shape({"query": "x" * rng.randrange(1, 200), "limit": rng.randrange(1, 50),
                     "tags": ["a"] * rng.randrange(3)}) for _ in range(64)]
    sessions = sessions or max(servers * 4, n // 200)
    seqs = [0] * sessions
    for i in range(n):
        day = i * days // max(n, 1)
        ms = int((i * days % max(n, 1)) / max(n, 1) * 86_400_000)
        sess = rng.randrange(sessions)
        seqs[sess] += 1
        server = f"server-{sess % servers}"
        r = rng.random()
        tool_no = rng.randrange(tools)
        if r < 0.03:
            yield CallRecord(ts=_ts(day, ms), session=f"synthetic-session-{sess}", seq=seqs[sess],
                             server=server, method="notifications/message", outcome="notification",
                             shim_self_us=0, kind="real")
            continue
        method = "tools/list" if r < 0.06 else "tools/call"
        latency = int(math.exp(rng.gauss(medians[tool_no], 0.6)) * (8 if rng.random() < 0.01 else 1))
        error = None
        outcome = "ok"
        burst = days > 1 and day == days - 1 and tool_no == 0  # a new template bursts on the last day
        if method == "tools/call" and rng.random() < error_rate * (4 if burst else 1):
            outcome = "error"
            family = _BURST if burst and rng.random() < 0.75 else _MESSAGES[(tool_no + rng.randrange(2)) % 5]
            msg = family.format(host=f"10.0.0.{rng.randrange(255)}", n=rng.randrange(10_000),
                                name=f"item{rng.randrange(99)}")
            if rng.random() < 0.5:
                error = error_info({"code": -32000 - tool_no % 3, "message": msg,
                                    "retryable": rng.random() < 0.5}, salt)
            else:
                error = tool_error_info({"content": [{"type": "text", "text": msg}], "isError": True}, salt)
        tool = f"tool_{tool_no}" if method == "tools/call" else None
        args = rng.choice(shapes) if tool else None
        yield CallRecord(ts=_ts(day, ms), session=f"synthetic-session-{sess}", seq=seqs[sess], server=server,
                         method=method, tool=tool, args=args, latency_ms=latency, outcome=outcome,
                         error=error,
                         shim_self_us=rng.randrange(10, 200), kind="real",
                         identity=Identity(_capture(sess), _uuid(rng)) if identities == "all" else
                         Identity(_uuid(rng), _uuid(rng)) if i % 7 == 0 else None)


def _capture(session: int) -> str:
    """The capture id of a synthetic session (one capture per session, as a shim writes it)."""
    h = hashlib.sha256(f"mcpeval-nb synthetic capture {session}".encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def _annotations(rng: random.Random, calls: int, servers: int, days: int,
                 sessions: int | None = None) -> list[AnnotationRecord]:
    out = []
    sessions = sessions or max(1, calls // 200)
    for i in range(calls // 100):
        out.append(AnnotationRecord(ts=_ts(i * days // max(1, calls // 100), 43_200_000 + i),
                                    session=f"synthetic-session-{rng.randrange(sessions)}",
                                    seq=rng.randrange(1, 100), kind=rng.choice(
                                        ("false-success", "workaround", "blocked-optimal-path",
                                         "undocumented-behavior", "instruction-divergence")),
                                    note=rng.choice(_NOTES)))
    return out


def _trends(rng: random.Random, servers: int, days: int) -> list[TrendPoint]:
    out = []
    for s in range(servers):
        score = 60 + rng.randrange(20)
        for day in range(days):
            score = max(0, min(100, score + rng.randrange(-5, 6)))
            standard = _STANDARDS[0] if day < days // 2 else _STANDARDS[1]
            profile = MeasurementProfile(evaluator_version="0.4.0", platform="linux", architecture="x86_64",
                                         repeats=3 if day < 2 * days // 3 else 5)
            manifest = hashlib.sha256(f"manifest-{s}-{day // 3}".encode()).hexdigest()
            out.append(TrendPoint(ts=_ts(day, 3_600_000 * (s + 1)), server=f"server-{s}", passed=score >= 70,
                                  cases_total=10, cases_passed=min(10, score // 10), score=score,
                                  manifest_sha256=manifest, standard=standard, measurement_profile=profile))
    return out


def synthetic_store(root: RootLike, *, calls: int = 1000, servers: int = 2, tools: int = 5, days: int = 3,
                    error_rate: float = 0.05, seed: int = 0, annotations: bool = True,
                    trends: bool = True, sessions: int | None = None,
                    identities: str = "some") -> SyntheticStore:
    """Write a deterministic synthetic capture root through the real writer.

    Args:
        root: the capture root to write (journals are appended to).
        calls: number of call records.
        servers: distinct server labels (``server-0`` ...).
        tools: distinct tools (``tool_0`` ...), each with its own latency median.
        days: days the calls are spread over, from 2026-08-01.
        error_rate: share of ``tools/call`` records that fail.
        seed: random seed; the same arguments always give the same bytes.
        annotations: also write about one annotation per 100 calls.
        trends: also write one readiness trend point per server and day.
        sessions: distinct sessions (default: one per 200 calls, at least 4 per server).
        identities: ``some`` (every seventh call carries an identity of its own, the older stores' mix)
            or ``all`` (every call but notifications, one capture id per session, as new captures are).

    Returns:
        A ``SyntheticStore`` summary.

    Raises:
        UsageError: a count is out of range.
    """
    from ..errors import UsageError
    if calls < 0 or servers < 1 or tools < 1 or days < 1 or not 0.0 <= error_rate <= 1.0 or \
            (sessions is not None and sessions < 1):
        raise UsageError("synthetic_store: calls >= 0, servers/tools/days >= 1, 0 <= error_rate <= 1")
    if identities not in ("some", "all"):
        raise UsageError(f"synthetic_store: identities must be 'some' or 'all', not {identities!r}")
    root = Root.of(root, check=False).path
    rng = random.Random(seed)
    salt = hashlib.sha256(f"mcpeval-nb synthetic salt {seed}".encode()).digest()
    batch: list[CallRecord] = []
    for record in _calls(rng, calls, servers, tools, days, error_rate, salt, sessions, identities):
        batch.append(record)
        if len(batch) >= _BATCH:
            append_records(root, batch)
            batch = []
    append_records(root, batch)
    notes = _annotations(rng, calls, servers, days, sessions) if annotations else []
    append_records(root, notes)
    points = _trends(rng, servers, days) if trends else []
    append_records(root, points)
    return SyntheticStore(root=root, calls=calls, annotations=len(notes), trends=len(points), salt=salt)
