"""Every bound mcpeval-nb enforces, in one place (SPEC 6.1, 8.4, 13, 14)."""

from __future__ import annotations

#: A journal record, encoded as UTF-8 and including its trailing newline (SPEC 6.1).
MAX_RECORD_BYTES = 4 * 1024 * 1024
#: A stdio frame including its newline, for the shim and the probe client (SPEC 14).
MAX_FRAME_BYTES = 4 * 1024 * 1024
#: serde_json refuses input nested this deep (127 levels parse, 128 do not; SPEC 0.5).
MAX_JSON_DEPTH = 128
#: Incoming stdio frames queued by the probe client before the transport closes.
MAX_QUEUED_FRAMES = 16
#: Unsolicited notifications buffered while a response is awaited (count and total bytes).
MAX_NOTIFICATIONS = 128
MAX_NOTIFICATION_BYTES = 4 * 1024 * 1024
#: Server-to-client requests answered during one call in the battery, contention and payload cases.
MAX_SERVER_REQUESTS = 8
#: tools/list pages walked for the catalog.
MAX_TOOL_PAGES = 20
#: Default per-request response deadline on stdio, and the HTTP I/O timeout (seconds).
DEFAULT_RESPONSE_TIMEOUT_S = 30.0
DEFAULT_IO_TIMEOUT_S = 5.0
#: HTTP bodies (shim-http and the probe's HTTP client).
MAX_HTTP_BODY_BYTES = 8 * 1024 * 1024
MAX_HTTP_HEADER_BYTES = 64 * 1024
HTTP_WORKERS = 8
HTTP_ACCEPT_QUEUE = 32
#: The shared evaluation budget of one probe run.
MAX_EVAL_REQUESTS = 4096
MAX_EVAL_SECONDS = 300.0
#: Standard battery.
BATTERY_REPEATS = 3
BATTERY_CALL_TIMEOUT_S = 15.0
BATTERY_PAYLOAD_BYTES = 1_000_000
#: Input synthesis budgets (SPEC 8.4 and the seed requirements).
SYNTH_MAX_ENCODED_BYTES = 64 * 1024
SYNTH_MAX_NODES = 4096
SYNTH_MAX_ARRAY_ITEMS = 256
SYNTH_MAX_STRING_BYTES = 16 * 1024
SYNTH_MAX_DEPTH = 8
#: Journal locks wait at most this long before LockTimeout.
LOCK_TIMEOUT_S = 10.0
#: Bytes read per chunk of a journal snapshot (``journal.snapshot``): the loader's reads and the writer's
#: batched appends.  Large enough to amortise per-chunk overhead, bounded for memory.
CHUNK_BYTES = 8 * 1024 * 1024
#: Smaller reads where each byte costs more work than the loader's: the line reader (``read_records``),
#: the redaction check, the in-process share export (parsed records take several times their text) and
#: the span a share helper process normalises (at most the record bound).
LINE_READ_BYTES = 1024 * 1024
DOCTOR_READ_BYTES = 4 * 1024 * 1024
SHARE_READ_BYTES = 1024 * 1024
SHARE_SPAN_BYTES = 1024 * 1024
#: Annotation notes (SPEC 5).
MAX_NOTE_CHARS = 240
#: Requests the capture correlator keeps awaiting an answer (count, and bytes of shaped arguments plus a
#: fixed cost per entry); past either bound the oldest is journaled as a content-free ``unknown`` record.
MAX_PENDING_REQUESTS = 1024
MAX_PENDING_BYTES = 16 * 1024 * 1024
#: Multi round-trip and task operations waiting on their client (count, and bytes as for pending requests);
#: past either bound, or once the server's last answer is older than ``OPERATION_IDLE_S``, the oldest is
#: journaled as abandoned.
MAX_OPEN_OPERATIONS = 1024
MAX_OPEN_OPERATION_BYTES = 16 * 1024 * 1024
OPERATION_IDLE_S = 3600.0
#: shim-http event streams relayed at once (apart from the request workers; past it: 503).
MAX_HTTP_STREAMS = 64
#: Call and capture manifests (``sizes``, ``capture-phases``): the file bound, and at most this many calls
#: in a call manifest, phases in a capture manifest, and advance calls per phase.
MAX_CALL_MANIFEST_BYTES = 1024 * 1024
MAX_LISTED_CALLS = 1000
MAX_CAPTURE_PHASES = 64
MAX_ADVANCE_CALLS = 100
#: serve (SPEC 13.1): header bytes (request line and header lines) and the JSON-RPC body per request;
#: worker threads, and accepted connections waiting for one (past it the listener stops accepting and
#: the kernel's backlog holds them).
SERVE_MAX_HEADER_BYTES = 16 * 1024
SERVE_MAX_BODY_BYTES = 1024 * 1024
SERVE_WORKERS = 8
SERVE_ACCEPT_QUEUE = 64
#: Catalog records (docs/catalog.md): levels and nodes of one input-schema skeleton; pages and tools of one
#: listing the shims assemble (past them the listing is recorded as it is, ``complete: false``); listings
#: assembled at once (a new one past it records the oldest, incomplete); catalog journal days read for the
#: names of tools other servers listed (``cross-tool-reference``).
MAX_SKELETON_DEPTH = 16
MAX_SKELETON_NODES = 2048
MAX_CATALOG_PAGES = 100
MAX_CATALOG_TOOLS = 10_000
MAX_OPEN_LISTINGS = 8
CATALOG_NAME_DAYS = 30
