"""The closed vocabularies of readiness (SPEC 9.2-9.3): the standards, their areas and weights, check
ids, and every readiness reason with its fixed remediation hint.

Two standards are scored: ``mcpeval-standard/2`` for servers that speak the initialize handshake (SPEC
9.3, unchanged), and ``mcpeval-modern/1`` for servers that speak the stateless 2026-07-28 revision
(docs/readiness.md): the same six areas and weights; its protocol area drops what the revision removed
(``ping``, the initialize negotiation) and checks what it introduced.

Reports, the parser and the published report schema all draw on these tables; nothing outside them is
ever accepted from a saved document.
"""

from __future__ import annotations

__all__ = ["AREAS", "CHECK_IDS", "LEGACY_PROTOCOL_CHECKS", "MODERN_PROTOCOL_CHECKS", "MODERN_STANDARD",
           "READINESS_REASONS", "SCORED_STANDARDS", "STANDARD", "check_ids", "reason_hint"]

STANDARD = "mcpeval-standard/2"
MODERN_STANDARD = "mcpeval-modern/1"
#: The standards this evaluator scores; any other is display-only (only its score is shown).
SCORED_STANDARDS: tuple[str, ...] = (STANDARD, MODERN_STANDARD)
#: (area, weight) in report order; weights sum to 100.
AREAS: tuple[tuple[str, int], ...] = (
    ("protocol", 15), ("catalog", 20), ("context", 15), ("error-honesty", 15), ("reliability", 20),
    ("coverage", 15))

LEGACY_PROTOCOL_CHECKS: tuple[str, ...] = (
    "protocol.unknown-method", "protocol.ping", "protocol.unknown-tool", "protocol.pagination",
    "protocol.surfaces", "protocol.negotiation")
MODERN_PROTOCOL_CHECKS: tuple[str, ...] = (
    "protocol.discover", "protocol.unknown-method", "protocol.unknown-tool", "protocol.pagination",
    "protocol.surfaces", "protocol.unknown-resource", "protocol.version-refusal", "protocol.headers",
    "protocol.result-type", "protocol.cache-hints", "protocol.tools-order", "protocol.input-required",
    "protocol.tasks")

#: Every check id by area, over both scored standards (``check_ids`` gives one standard's).
CHECK_IDS: dict[str, tuple[str, ...]] = {
    "protocol": tuple(dict.fromkeys(LEGACY_PROTOCOL_CHECKS + MODERN_PROTOCOL_CHECKS)),
    "catalog": ("catalog.description", "catalog.params-described", "catalog.params-typed",
                "catalog.read-only-declared", "catalog.destructive-declared", "catalog.output-schema",
                "catalog.empty"),
    "context": ("context.catalog", "context.heaviest-tool"),
    "error-honesty": ("error-honesty.invalid-input", "error-honesty.untestable"),
    "reliability": ("reliability.skipped", "reliability.none-exercised", "reliability.success",
                    "reliability.consistent", "reliability.latency", "reliability.output-schema",
                    "reliability.contention", "reliability.payload"),
    "coverage": ("coverage.exercised",),
}

def check_ids(standard: str) -> dict[str, tuple[str, ...]]:
    """The check ids of one scored standard, by area."""
    protocol = MODERN_PROTOCOL_CHECKS if standard == MODERN_STANDARD else LEGACY_PROTOCOL_CHECKS
    return {**CHECK_IDS, "protocol": protocol}


#: Every readiness reason with its remediation hint (fixed text, never a payload).
READINESS_REASONS: dict[str, str] = {
    "protocol-unknown-method-answered": "Answer unknown JSON-RPC methods with error -32601.",
    "protocol-ping-failed": "Answer ping with an empty object result.",
    "protocol-unknown-tool-accepted": "Refuse tools/call for a tool that is not in the catalog.",
    "protocol-pagination-invalid": "Return valid tools/list pages: named tools with object input schemas, "
                                   "no duplicates, and a cursor that ends.",
    "protocol-surface-invalid": "Return valid resources/list and prompts/list envelopes for declared "
                                "capabilities, with cursors that end.",
    "protocol-negotiation-echoed-unknown": "Do not echo an unsupported protocol version; answer with one "
                                           "you support.",
    "protocol-negotiation-invalid-version": "Answer initialize with a date-shaped protocol version.",
    "protocol-negotiation-inconsistent-support": "Accept the protocol version you offered when a client "
                                                 "asks for it.",
    "protocol-call-failed": "The protocol check could not complete; keep the connection answering.",
    "protocol-discover-incomplete": "Answer server/discover with supportedVersions naming 2026-07-28 and a "
                                    "capabilities object.",
    "protocol-unknown-resource-code": "Refuse resources/read of an unknown URI with -32602 (2026-07-28 "
                                      "replaced -32002).",
    "protocol-version-accepted": "Refuse a request at a protocol version you do not serve with -32022.",
    "protocol-version-refusal-invalid": "Refuse an unsupported version with -32022 whose data.supported "
                                        "lists the versions you serve and data.requested echoes the one "
                                        "asked for.",
    "protocol-header-mismatch-accepted": "Refuse a request whose Mcp-Method or Mcp-Name header disagrees "
                                         "with its body: HTTP 400 with -32020.",
    "protocol-result-type-missing": "Put resultType on every result (complete, input_required or task).",
    "protocol-cache-hints-missing": "Put ttlMs (>= 0) and cacheScope (public or private) on list, read and "
                                    "discover results.",
    "protocol-tools-order-unstable": "Return tools/list in a deterministic order.",
    "protocol-input-undeclared": "Ask for input (elicitation, sampling, roots) only when the client "
                                 "declared the capability.",
    "protocol-input-malformed": "Give every input_required result inputRequests or a requestState, and "
                                "only elicitation, sampling or roots requests.",
    "protocol-task-lifecycle-broken": "Let a task reach a terminal status through tasks/get, and refuse "
                                      "tasks/get for an unknown task id.",
    "catalog-short-description": "Describe the tool in at least 40 characters: what it does and when to "
                                 "use it.",
    "catalog-undescribed-params": "Give every input property a description.",
    "catalog-untyped-params": "Give every input property a type (or enum, const, $ref, anyOf, oneOf).",
    "catalog-read-only-undeclared": "Declare readOnlyHint in the tool's annotations.",
    "catalog-destructive-undeclared": "Declare destructiveHint on tools that change state.",
    "catalog-no-output-schema": "Declare an outputSchema and return structuredContent.",
    "catalog-no-tools": "The server listed no tools.",
    "context-catalog-heavy": "The catalog costs many context tokens; shorten descriptions and schemas.",
    "context-tool-heavy": "One tool costs many context tokens; shorten its description and schema.",
    "honesty-accepted-invalid": "Validate arguments: the tool accepted input its schema forbids.",
    "honesty-empty-error": "Explain refused input: the error result carried no usable message.",
    "honesty-wrong-code": "Refuse invalid arguments with -32602 or an isError result that explains why.",
    "honesty-call-failed": "The connection failed while refusing invalid input; keep serving after errors.",
    "honesty-untestable": "No called tool had a schema that allows an invalid-argument probe; declare "
                          "required properties or types.",
    "no-read-only-tools": "Every tool is a writer (or none is listed); mark read-only tools readOnlyHint.",
    "coverage-skipped": "The tool was skipped by --skip-tool; skipped tools score zero.",
    "coverage-open-world": "The tool reaches outside this machine (openWorldHint); the battery calls it "
                           "only with --allow-open-world.",
    "coverage-unannotated": "Unannotated tools are only called with --confirm-read-only; declare "
                            "readOnlyHint.",
    "coverage-unsynthesizable": "No valid arguments could be built from the schema within the budgets; "
                                "add defaults, examples or simpler constraints.",
    "coverage-rejected-arguments": "The tool refused arguments valid under its own schema (-32602); align "
                                   "the schema with what the tool accepts.",
    "coverage-call-failed": "No call with valid arguments succeeded.",
    "reliability-call-failed": "Some calls with valid arguments failed.",
    "reliability-inconsistent": "Repeated identical calls had different outcomes.",
    "reliability-slow": "The median call latency is high.",
    "reliability-output-schema-broken": "structuredContent did not conform to the declared outputSchema.",
    "reliability-contention-failed": "A call failed while a second client used the same tool.",
    "reliability-payload-unhandled": "A large argument broke the transport; refuse oversized input with "
                                     "an error.",
    "reliability-none-exercised": "No tool could be exercised.",
}


def reason_hint(reason: str) -> str:
    """The fixed hint for a readiness reason (KeyError for an unknown one)."""
    return READINESS_REASONS[reason]
