"""The fixed failure-reason labels and remediation hints (SPEC 8.3); the kind labels live in ``kinds.table``.

Labels are stable strings used in reports, in ``mcpeval-nb explain`` and by ``diff``; their order here is
the order ``explain`` lists them.  Hints are fixed text: they never embed payloads (workflow hints embed
only a call number).
"""

from __future__ import annotations

__all__ = [
    "BOUND_NAMES",
    "REASONS",
    "REASON_LABELS",
    "TRANSPORT_REASONS",
    "hint_for",
    "is_reason",
    "reason_hints",
]

#: (label, remediation hint) in SPEC order.
REASONS: tuple[tuple[str, str], ...] = (
    ("unexpected-outcome", "The call succeeded where an error was expected, or failed where success was "
     "expected; check the tool against the case's arguments."),
    ("missing-field", "The result lacks a field the expectation requires; return it in the result object."),
    ("value-mismatch", "A result field differs from the expected value; make the tool's answer literal and "
     "stable."),
    ("error-code-mismatch", "The error code differs from the expected one; return a stable, documented "
     "code."),
    ("discovery-limit-exceeded", "The catalog has more tools or schema bytes than the budget; trim tools or "
     "shorten schemas."),
    ("token-budget-exceeded", "Tool descriptions and schemas cost more context tokens than the budget; "
     "shorten descriptions and schemas."),
    ("invalid-schema", "The tool's inputSchema is not an object schema whose required names are declared "
     "properties; fix the schema."),
    ("missing-required-argument", "The manifest omits an argument the schema requires; add it to the "
     "case's arguments."),
    ("expected-error", "The tool accepted input it should refuse; validate arguments and return an error."),
    ("unstable-error-code", "Repeated failures returned different error codes; keep one code per failure "
     "cause."),
    ("retryability-mismatch", "The error's retryable flag differs from the expectation; mark transient "
     "errors retryable and permanent ones not."),
    ("retry-did-not-recover", "A retryable error never recovered within the attempts; make retryable "
     "errors transient or mark them non-retryable."),
    ("failure-not-observed", "The failure step succeeded, so recovery could not be exercised; make the "
     "failure tool fail."),
    ("recovery-failed", "The recovery tool failed after a failure; make recovery succeed."),
    ("validation-failed", "The validation tool failed after recovery; the session did not recover."),
    ("contended-client-failed", "A call failed while a second client used the same tool; make the tool "
     "safe under concurrent clients."),
    ("latency-budget-exceeded", "A call was slower than the latency budget; speed up the tool or raise "
     "max_latency_ms."),
    ("pagination-invalid-entry", "A tools/list page lacks a tools array or lists an entry without a valid "
     "name and object inputSchema."),
    ("pagination-duplicate-tool", "A tool name was listed on more than one page; list each tool once."),
    ("pagination-stalled-cursor", "tools/list kept returning cursors past max_pages; end pagination with "
     "no nextCursor."),
    ("payload-unhandled", "A large argument broke the connection; refuse oversized input with an error "
     "instead."),
    ("surface-invalid-envelope", "A declared resources or prompts listing failed or lacked its items "
     "array."),
    ("surface-stalled-cursor", "A resources or prompts listing kept returning cursors past max_pages."),
    ("output-schema-declared-but-missing", "The tool declares an outputSchema but returned no "
     "structuredContent."),
    ("output-schema-field-missing", "structuredContent lacks a field the outputSchema requires."),
    ("output-schema-invalid-result", "structuredContent does not conform to the declared outputSchema."),
    ("cancellation-ignored", "The server answered a cancelled request with a result; stop work on "
     "notifications/cancelled."),
    ("cancellation-errored", "The server answered a cancelled request with an unexpected error; stay "
     "silent or answer -32800."),
    ("negotiation-echoed-unknown", "The server echoed an unsupported protocol version; answer with a "
     "version it supports."),
    ("negotiation-invalid-version", "The server answered the handshake with a version that is not a "
     "YYYY-MM-DD date."),
    ("negotiation-inconsistent-support", "The server claimed a protocol version it then would not "
     "accept."),
    ("sampling-invalid-request", "A sampling/createMessage request was malformed; send messages and "
     "maxTokens."),
    ("sampling-request-flood", "The call issued more sampling requests than max_requests."),
    ("sampling-stalled-call", "The call under sampling never completed; answer after the sample arrives."),
    ("elicitation-invalid-request", "An elicitation/create request was malformed; send a message and a "
     "requestedSchema."),
    ("elicitation-request-flood", "The call issued more elicitation requests than max_requests."),
    ("elicitation-stalled-call", "The call under elicitation never completed; answer after the response "
     "arrives."),
    ("resource-unreadable", "resources/read failed for the subscribed uri."),
    ("subscription-rejected", "resources/subscribe was refused although resources.subscribe is declared."),
    ("subscription-notification-missing", "No notifications/resources/updated arrived for the uri within "
     "max_wait_seconds."),
    ("completion-invalid-request", "completion/complete answered without a completion.values string "
     "array."),
    ("completion-value-flood", "completion/complete returned more values than max_values."),
    ("completion-argument-unknown", "completion/complete refused the argument name; declare it or "
     "complete it."),
    ("completion-stalled-request", "completion/complete lost the transport or timed out."),
    ("transport-timeout", "The server did not answer within the timeout; raise timeout_ms or fix the "
     "stall."),
    ("transport-closed", "The server closed the connection during the case; check that it does not exit "
     "or crash."),
    ("transport-error", "The server broke the protocol or a transport limit during the case."),
    ("transport-unauthorized", "The HTTP endpoint answered 401 or 403 (authorization required or refused); "
     "set MCPEVAL_HTTP_AUTHORIZATION to the Authorization value it expects."),
    ("evaluation-budget-exceeded", "The run spent its shared budget of 4096 requests or 300 s; select "
     "fewer cases."),
)

REASON_LABELS: tuple[str, ...] = tuple(label for label, _ in REASONS)
#: Reasons meaning "the case errored" rather than a verdict (exit 3).
TRANSPORT_REASONS: frozenset[str] = frozenset(
    {"transport-timeout", "transport-closed", "transport-error", "transport-unauthorized",
     "evaluation-budget-exceeded"})
BOUND_NAMES: tuple[str, ...] = (
    "max_tools", "max_schema_bytes", "max_total_tokens", "max_tool_tokens", "max_latency_ms", "max_pages")

_HINTS = dict(REASONS)


def is_reason(label: object) -> bool:
    """True when ``label`` is one of the fixed failure-reason labels."""
    return isinstance(label, str) and label in _HINTS


def hint_for(label: str, *, call: int | None = None) -> str:
    """The remediation hint for a reason label.

    Args:
        label: a fixed reason label.
        call: for workflow cases, the 1-based call number the hint names.

    Returns:
        Fixed hint text (with ``workflow call <n>: `` prefixed when ``call`` is given).

    Raises:
        KeyError: the label is not a known reason.
    """
    text = _HINTS[label]
    return f"workflow call {call}: {text}" if call is not None else text


def reason_hints() -> tuple[tuple[str, str], ...]:
    """Every failure-reason label with its remediation hint, in SPEC order (what ``explain`` lists)."""
    return REASONS

