"""Erase one session or one server from every call, annotation and catalog journal (docs/governance.md).

``erase`` plans first (annotation targets, with ``--server``), then rewrites journal by journal,
annotations first (so an erase finished by the next command can still match annotations to the calls
they name), each with ``rewrite.rewrite``: in place, under the journal's exclusive lock, crash-safe.
The intent file carries the selection (a token or a label, never a raw session value) so that
``recover`` (the first step of the next writer: erase, retention, index, promote, share) finishes the
journal in flight and then the ones not yet done.  Reads never run it: a read-only command changes
nothing.  Trend points are never touched: they hold no session.  ``index.db`` and the Parquet checkpoint
notice the rewritten prefix by its proof and rebuild.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import EraseIncomplete, JournalError, MCPEvalError
from ..htmltext import lines_html
from ..limits import LOCK_TIMEOUT_S
from ..root import Root, RootLike, drop_engine_dataset
from ..root.layout import erase_intent_path, erase_work_path, store_dir
from . import audit
from .intent import Intent, clean_work, governance_lock
from .rewrite import Checkpoint, Filter, finish, no_checkpoint, rewrite
from .select import (
    AnnotationPlan,
    Selection,
    Tally,
    annotation_filter,
    call_filter,
    catalog_filter,
    check_store,
    is_annotations,
    journal_day,
    plan_annotations,
    record_kind,
    store_journals,
)

__all__ = ["EraseResult", "erase", "recover"]


@dataclass(frozen=True)
class EraseResult:
    """What an erase removed (or, with ``dry_run``, would remove).

    Attributes:
        selection: the session token or server label (and day) erased.
        removed: records removed per journal kind (``calls``, ``annotations``).
        files: store-relative paths of the journals changed (or that would change).
        unmatched_annotations: annotations whose target call could not be found (``--server``): kept.
        unreadable_lines: complete lines that are not records: kept as they are.
        dry_run: nothing was written.
        audit_written: the audit record was written (False: a warning was printed).
    """

    selection: Selection
    removed: dict[str, int]
    files: tuple[str, ...]
    unmatched_annotations: int
    unreadable_lines: int
    dry_run: bool
    audit_written: bool = True

    def lines(self) -> list[str]:
        """The command's output: what was (or would be) removed, counts only."""
        who = f"session {self.selection.session}" if self.selection.session else \
            f"server {self.selection.server}"
        when = f" before {self.selection.before}" if self.selection.before else ""
        verb = "would remove" if self.dry_run else "removed"
        catalogs = self.removed.get("catalogs", 0)
        listings = f", {catalogs} catalog record(s)" if catalogs else ""
        lines = [f"{verb} {self.removed.get('calls', 0)} call(s){listings} and "
                 f"{self.removed.get('annotations', 0)} annotation(s) of {who}{when} from {len(self.files)} "
                 "journal(s)"]
        lines += [f"  {rel}" for rel in self.files]
        if self.unmatched_annotations:
            lines.append(f"{self.unmatched_annotations} annotation(s) could not be matched to a call and "
                         "were kept")
        if self.unreadable_lines:
            lines.append(f"{self.unreadable_lines} unreadable line(s) kept as they are")
        if not self.audit_written:
            lines.append("audit: 1 record could not be written")
        return lines

    def _repr_html_(self) -> str:
        """How a notebook cell shows it (the same lines as the CLI prints)."""
        return lines_html("erase", self.lines())


def _filter(rel: str, selection: Selection, plan: AnnotationPlan, tally: Tally) -> Filter:
    if is_annotations(rel):
        return annotation_filter(selection, plan, tally)
    if record_kind(rel) == "catalogs":
        return catalog_filter(selection, journal_day(rel), tally)
    return call_filter(selection, journal_day(rel), tally)


def _wanted(rel: str, selection: Selection) -> bool:
    # With --before, only call and catalog journals of earlier days can hold selected records; annotation
    # journals are all read (an annotation of a selected call may be written on a later day).
    return is_annotations(rel) or selection.day_ok(journal_day(rel))


def _run(root: Path, selection: Selection, journals: list[str], *, dry_run: bool,
         timeout: float, checkpoint: Checkpoint = no_checkpoint) -> EraseResult:
    plan = plan_annotations(root, selection, journals)
    tally = Tally()
    intent = Intent(op="erase", selection=selection.to_json(), files=tuple(journals))
    removed = {"calls": 0, "annotations": 0, "catalogs": 0}
    changed: list[str] = []
    done: list[str] = []
    for rel in journals:
        try:
            dropped, intent = rewrite(root, rel, _filter(rel, selection, plan, tally), intent,
                                      dry_run=dry_run, timeout=timeout, checkpoint=checkpoint)
        except (JournalError, OSError) as exc:
            reason = str(exc) if isinstance(exc, JournalError) else exc.strerror or type(exc).__name__
            raise EraseIncomplete(rel, reason, tuple(done)) from None
        if dropped:
            removed[record_kind(rel)] += dropped
            changed.append(rel)
        if not dry_run:
            intent = intent.finished(rel, dropped, record_kind(rel))
            intent.save(root)
            clean_work(root)
            checkpoint("between-files")
        done.append(rel)
    return EraseResult(selection, removed, tuple(changed), plan.unmatched, tally.unreadable, dry_run)


def erase(root: RootLike = None, *, session: str | None = None,
          server: str | None = None, before: str | dt.date | None = None, dry_run: bool = False,
          timeout: float = LOCK_TIMEOUT_S, _checkpoint: Checkpoint = no_checkpoint) -> EraseResult:
    """Remove every call and annotation record of one session or one server from every journal.

    Args:
        root: the capture root (default ``$MCPEVAL_HOME``, else ``~/.mcp-eval``).
        session: the raw session value (hashed with the shim's rule) or a ``session:<hex>`` token.
        server: a server label (instead of ``session``).
        before: only records of days before this one (``YYYY-MM-DD``).
        dry_run: count what would be removed; nothing is written.
        timeout: seconds to wait for each journal's exclusive lock.
        _checkpoint: private, for tests only: told each step reached (``rewrite.Checkpoint``).

    Returns:
        Counts per journal kind, the journals changed, unmatched annotations.  An audit record is
        appended (``audit.jsonl``) unless ``dry_run``.

    Raises:
        UsageError: neither or both of ``session`` and ``server``, a bad label or day.
        JournalError: there is no store, or it holds a symlink.
        EraseIncomplete: a journal could not be rewritten; names the journals already done.
        GovernanceError: another erase or retention is running, or an interrupted one cannot finish.
    """
    base = Root.of(root).path
    try:
        selection = Selection.of(session=session, server=server, before=before)
        check_store(base)
        return _erase(base, selection, dry_run=dry_run, timeout=timeout, checkpoint=_checkpoint)
    except EraseIncomplete:
        raise  # recorded as failed, naming the journals done
    except MCPEvalError as exc:
        audit.record(base, action="erase", outcome=audit.outcome_of(exc), reason=audit.reason_of(exc))
        raise


def _erase(base: Path, selection: Selection, *, dry_run: bool, timeout: float,
           checkpoint: Checkpoint) -> EraseResult:
    with governance_lock(base, timeout=timeout):
        recover_locked(base, timeout)
        journals = [rel for rel in store_journals(base, "erase") if _wanted(rel, selection)]
        try:
            result = _run(base, selection, journals, dry_run=dry_run, timeout=timeout, checkpoint=checkpoint)
        except EraseIncomplete as exc:
            audit.record(base, action="erase", outcome="failed", reason="io-error",
                         labels=_labels(selection), counts={"journals_done": len(exc.done)},
                         paths=[f"store/{rel}" for rel in exc.done])
            raise
        if not dry_run:
            Intent.clear(base)
    if dry_run:
        return result
    written = audit.record(base, action="erase", labels=_labels(selection),
                           counts={**result.removed, "journals": len(result.files),
                                   "unmatched_annotations": result.unmatched_annotations},
                           paths=[f"store/{rel}" for rel in result.files])
    if result.files:  # after the audit record: a dataset that cannot be removed fails loudly, on record
        drop_engine_dataset(base)  # derived data holding what was erased (re-exported on use)
    return EraseResult(**{**result.__dict__, "audit_written": written})


def _labels(selection: Selection) -> dict[str, str]:
    labels = {"session": selection.session, "server": selection.server, "before": selection.before}
    return {k: v for k, v in labels.items() if v is not None}


def recover_locked(root: Path, timeout: float) -> bool:
    intent = Intent.load(root)
    if intent is None:
        Intent.clear(root)  # a copy left by an erase killed before its intent: nothing was changed
        return False
    if intent.current is not None:
        padded = finish(root, intent.current, timeout=timeout)
        current = intent.current
        intent = intent.finished(current.path, current.dropped, record_kind(current.path))
        intent.save(root)
        if padded:
            _compact(root, intent.done[-1], intent, timeout)
    if intent.op == "erase":
        selection = Selection.from_json(intent.selection)
        rest = [rel for rel in intent.files
                if rel not in intent.done and os.path.lexists(store_dir(root) / rel)]
        _run(root, selection, rest, dry_run=False, timeout=timeout)
    Intent.clear(root)
    audit.record(root, action=intent.op, labels={"phase": "recovered"},
                 counts={"journals_done": len(intent.done)})
    return True


def _compact(root: Path, rel: str, intent: Intent, timeout: float) -> None:
    """Drop the whitespace-only lines a finished rewrite had to leave (records were appended after the
    kill, so the journal could not be truncated)."""
    blank = Filter(candidate=lambda chunk: b"\n\n" in chunk or chunk.startswith(b"\n"),
                   keep=lambda line: bool(line.strip()))
    _, intent = rewrite(root, rel, blank, intent.with_current(None), timeout=timeout)
    intent.with_current(None).save(root)


def recover(root: RootLike = None, *, timeout: float = LOCK_TIMEOUT_S) -> bool:
    """Finish an erase (or a retention rewrite) that was interrupted, if there is one.

    The first step of every writer that reads the journals back (``erase``, ``apply_retention``,
    ``build_index``, ``promote``, ``export_share``; the CLI's ``erase``, ``retention``, ``index``,
    ``promote``, ``share`` and ``export-parquet``), never of a read.  The journal that was being
    rewritten is rolled forward from its filtered copy, keeping records appended after the interruption;
    an erase then goes on with the journals it had not reached.  With nothing to finish it looks at two
    names and writes nothing.

    Returns:
        True when there was something to finish.

    Raises:
        GovernanceError: the journal is in a state the erase cannot explain (left as it is).
    """
    base = Root.of(root).path
    if not os.path.lexists(erase_intent_path(base)) and not os.path.lexists(erase_work_path(base)):
        return False
    with governance_lock(base, timeout=timeout):
        return recover_locked(base, timeout)
