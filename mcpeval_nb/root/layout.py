"""Every file under a capture root, named once, with its kind (SPEC 1, 6; docs/formats.md).

No other module spells a name under the root: it asks this one.  A capture root holds the store (the
share-safe journals), the salt beside it, the user's settings, the derived databases and their locks, the
audit log, and the work files of governance operations::

    <root>/
      .salt                         secret: the fingerprint salt (32 bytes; never shared)
      config.json                   settings: retention_days, promotion_threshold
      corpus.json                   private: a readiness corpus for placement lines (read, never written)
      store/                        the share-safe capture tree
        calls-<day>.jsonl           journal "calls": call records by UTC day
        annotations-<day>.jsonl     journal "annotations": annotations by UTC day
        catalogs-<day>.jsonl        journal "catalogs": catalog records (tools/list listings) by UTC day
        probes/history.jsonl        journal "trends": readiness trend points
        probes/sizes.jsonl          journal "sizes": result-size points
      audit.jsonl                   log: one record per share, erase, retention, verify, serve write, pin
      catalog-pins.json             settings: the approved catalogs' digests (catalog pin; owner-only)
      index.db, index.db.lock       derived: the findings index and its one-writer lock
      .index.db.tmp-<uuid>          work: a full index build before its rename
      lifecycle.db, lifecycle.db.lock   state: finding lifecycle (never rebuilt) and its lock
      .erase-intent.json            work: an interrupted erase or retention rewrite (crash recovery)
      .erase-work/                  work: the filtered copies of an erase (owner-only)
      .governance.lock              lock: one erase, retention or recovery at a time
      calls.parquet/                derived: the scale engines' Parquet dataset

A Parquet dataset (the engines' own, or any ``export-parquet --dest``) holds its checkpoint and trend
points beside the partitions (``DATASET_CHECKPOINT``, ``DATASET_TRENDS``).  The names are functions of a
root directory (a ``Path``); resolving which directory is the root is ``root.resolve``'s job.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

from .._frozen import Frozen

__all__ = [
    "ANNOTATIONS",
    "AUDIT",
    "CALLS",
    "CATALOGS",
    "CATALOG_PINS",
    "CONFIG",
    "CORPUS",
    "DATASET_CHECKPOINT",
    "DATASET_TRENDS",
    "ENGINE_DATASET",
    "ERASE_INTENT",
    "ERASE_WORK",
    "FILES",
    "GOVERNANCE_LOCK",
    "INDEX",
    "INDEX_TMP_PREFIX",
    "JOURNAL_KINDS",
    "LIFECYCLE",
    "PROBES",
    "SALT",
    "SIZES",
    "STORE",
    "TRENDS",
    "JournalKind",
    "annotations_path",
    "audit_path",
    "calls_path",
    "catalog_pins_path",
    "catalogs_path",
    "config_path",
    "corpus_path",
    "engine_dataset_path",
    "erase_intent_path",
    "erase_work_path",
    "governance_lock_path",
    "history_path",
    "index_lock_path",
    "index_path",
    "journal_kind",
    "kind_of_name",
    "lifecycle_lock_path",
    "lifecycle_path",
    "lock_path",
    "salt_path",
    "sizes_path",
    "store_dir",
]

STORE = "store"
SALT = ".salt"
CONFIG = "config.json"
CORPUS = "corpus.json"
AUDIT = "audit.jsonl"
CATALOG_PINS = "catalog-pins.json"
INDEX = "index.db"
INDEX_TMP_PREFIX = ".index.db.tmp-"
LIFECYCLE = "lifecycle.db"
ERASE_INTENT = ".erase-intent.json"
ERASE_WORK = ".erase-work"
GOVERNANCE_LOCK = ".governance.lock"
ENGINE_DATASET = "calls.parquet"
#: The store's subdirectory of probe histories.
PROBES = "probes"
#: Inside a Parquet dataset: the incremental export's checkpoint and the trend points beside the calls
#: (a leading ``_`` hides both from pyarrow, Dask, Spark, DuckDB and Polars dataset discovery).
DATASET_CHECKPOINT = "_mcpeval_checkpoint.json"
DATASET_TRENDS = "_mcpeval_trends.arrow"
_LOCK_SUFFIX = ".lock"


class JournalKind(Frozen):
    """One kind of journal in the store (immutable: ``Frozen``, not a dataclass, as the stdio shim names
    its salt through this module before its server starts).

    Attributes:
        name: the kind (``calls``, ``annotations``, ``trends``, ``sizes``).
        pattern: its store-relative path, ``{day}`` standing for the UTC day of daily journals.
    """

    __slots__ = ("name", "pattern")
    name: str
    pattern: str

    def __init__(self, name: str, pattern: str) -> None:
        self._init(name=name, pattern=pattern)

    @property
    def daily(self) -> bool:
        """One journal per UTC day (``calls-<day>.jsonl``) rather than one file."""
        return "{day}" in self.pattern

    def rel(self, day: str = "") -> str:
        """The store-relative path of the journal (of ``day`` for a daily kind)."""
        return self.pattern.format(day=day)

    def matches(self, rel: str) -> bool:
        """Whether the store-relative path ``rel`` is a journal of this kind."""
        return fnmatchcase(rel, self.pattern.format(day="*")) and "/" not in rel if self.daily else \
            rel == self.pattern

    def matches_name(self, name: str) -> bool:
        """Whether a file name (without its directory) names a journal of this kind."""
        return fnmatchcase(name, self.pattern.format(day="*")) if self.daily else \
            name == self.pattern.rsplit("/", 1)[-1]

    def day(self, rel: str) -> str | None:
        """The day in a daily journal's name (``unknown`` included); None for other kinds."""
        if not self.daily:
            return None
        head, tail = self.pattern.split("{day}")
        name = rel.rsplit("/", 1)[-1]
        return name[len(head):len(name) - len(tail)]


CALLS = JournalKind("calls", "calls-{day}.jsonl")
ANNOTATIONS = JournalKind("annotations", "annotations-{day}.jsonl")
TRENDS = JournalKind("trends", f"{PROBES}/history.jsonl")
SIZES = JournalKind("sizes", f"{PROBES}/sizes.jsonl")
#: Our extension (docs/catalog.md): the Rust tool reads only calls and annotations, so it is unaffected.
CATALOGS = JournalKind("catalogs", "catalogs-{day}.jsonl")
#: Every journal kind, in the order tables and listings present them.
JOURNAL_KINDS = (CALLS, ANNOTATIONS, TRENDS, SIZES, CATALOGS)

#: Every name directly under a root (or a Parquet dataset), what it is and who writes it.
FILES: dict[str, str] = {
    STORE: "the share-safe capture tree: the journals (JOURNAL_KINDS)",
    SALT: "secret: the fingerprint salt, created once, never shared",
    CONFIG: "settings: retention_days, promotion_threshold (read, never written)",
    CORPUS: "private: a readiness corpus (SPEC 15) for the report's placement lines (read, never written)",
    AUDIT: "log: one record per share, erase, retention, verify, serve write and catalog pin",
    CATALOG_PINS: "settings: the approved catalogs' digests and flags (catalog pin; owner-only, not shared)",
    INDEX: "derived: the findings index (rebuilt from the store)",
    INDEX + _LOCK_SUFFIX: "lock: one index writer at a time",
    INDEX_TMP_PREFIX + "<uuid>": "work: a full index build before its rename",
    LIFECYCLE: "state: finding lifecycle (never rebuilt)",
    LIFECYCLE + _LOCK_SUFFIX: "lock: one lifecycle writer at a time",
    ERASE_INTENT: "work: an interrupted erase or retention rewrite, finished by the next writer",
    ERASE_WORK: "work: the filtered copies of an erase (owner-only)",
    GOVERNANCE_LOCK: "lock: one erase, retention or recovery at a time",
    ENGINE_DATASET: "derived: the scale engines' Parquet dataset",
    DATASET_CHECKPOINT: "inside a Parquet dataset: the incremental export's checkpoint",
    DATASET_TRENDS: "inside a Parquet dataset: the trend points beside the calls",
}


def journal_kind(rel: str) -> JournalKind | None:
    """The kind of the journal at store-relative path ``rel``, or None when it is no known journal."""
    return next((kind for kind in JOURNAL_KINDS if kind.matches(rel)), None)


def kind_of_name(name: str) -> JournalKind | None:
    """The kind of a journal by its file name alone (``read_records`` on any path), or None."""
    return next((kind for kind in JOURNAL_KINDS if kind.matches_name(name)), None)


def store_dir(root: Path) -> Path:
    """``<root>/store``: the share-safe capture tree."""
    return root / STORE


def calls_path(root: Path, day: str) -> Path:
    """``<root>/store/calls-<day>.jsonl``."""
    return store_dir(root) / CALLS.rel(day)


def annotations_path(root: Path, day: str) -> Path:
    """``<root>/store/annotations-<day>.jsonl``."""
    return store_dir(root) / ANNOTATIONS.rel(day)


def catalogs_path(root: Path, day: str) -> Path:
    """``<root>/store/catalogs-<day>.jsonl``: catalog records (docs/catalog.md)."""
    return store_dir(root) / CATALOGS.rel(day)


def catalog_pins_path(root: Path) -> Path:
    """``<root>/catalog-pins.json``: the approved catalogs (beside the store, never shared)."""
    return root / CATALOG_PINS


def history_path(root: Path) -> Path:
    """``<root>/store/probes/history.jsonl``: readiness trend points."""
    return store_dir(root) / TRENDS.rel()


def sizes_path(root: Path) -> Path:
    """``<root>/store/probes/sizes.jsonl``: result-size points."""
    return store_dir(root) / SIZES.rel()


def corpus_path(root: Path) -> Path:
    """``<root>/corpus.json``: a private readiness corpus (SPEC 15)."""
    return root / CORPUS


def salt_path(root: Path) -> Path:
    """``<root>/.salt``: beside the store, never inside it; never shared."""
    return root / SALT


def config_path(root: Path) -> Path:
    """``<root>/config.json``: the user's settings (``promotion_threshold``, ``retention_days``)."""
    return root / CONFIG


def audit_path(root: Path) -> Path:
    """``<root>/audit.jsonl``: outside the store, so never in a share envelope."""
    return root / AUDIT


def index_path(root: Path) -> Path:
    """``<root>/index.db``: the findings index."""
    return root / INDEX


def lifecycle_path(root: Path) -> Path:
    """``<root>/lifecycle.db``: the findings' lifecycle."""
    return root / LIFECYCLE


def lock_path(path: Path) -> Path:
    """The sidecar lock of a database: ``<path>.lock``."""
    return path.with_name(path.name + _LOCK_SUFFIX)


def index_lock_path(root: Path) -> Path:
    """``<root>/index.db.lock``: one index writer at a time."""
    return lock_path(index_path(root))


def lifecycle_lock_path(root: Path) -> Path:
    """``<root>/lifecycle.db.lock``: one lifecycle writer at a time."""
    return lock_path(lifecycle_path(root))


def erase_intent_path(root: Path) -> Path:
    """``<root>/.erase-intent.json``: what the next writer needs to finish an interrupted erase."""
    return root / ERASE_INTENT


def erase_work_path(root: Path) -> Path:
    """``<root>/.erase-work``: the filtered copies of an erase (owner-only, outside the store)."""
    return root / ERASE_WORK


def governance_lock_path(root: Path) -> Path:
    """``<root>/.governance.lock``: one erase, retention or recovery at a time."""
    return root / GOVERNANCE_LOCK


def engine_dataset_path(root: Path) -> Path:
    """``<root>/calls.parquet``: the scale engines' dataset (derived; dropped by erase and retention)."""
    return root / ENGINE_DATASET
