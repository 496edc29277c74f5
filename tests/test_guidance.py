"""``guidance`` on both eras: discovery facts against behaviour, as labels and counts (never the
instruction text), from the SDK's servers, the raw modern fixture and a legacy fixture."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

import mcpeval_nb as me
from mcpeval_nb.cli import cli
from mcpeval_nb.probe.guidance import instruction_names
from mcpeval_nb.testing.servers._eras_readiness import CANARY_DESCRIPTION, CANARY_INSTRUCTIONS
from mcpeval_nb.transport import StdioTarget
from tests.era_support import era_http, era_stdio
from tests.probe_support import fixture

FORMATS = ("text", "markdown", "json", "junit")


def test_an_incoherent_modern_server_gets_every_finding_by_label_and_count() -> None:
    found = me.guidance(StdioTarget(tuple(fixture("modern_faults", "incoherent"))), server="faults")
    assert dict(found.findings) == {"instructions-unlisted-tools": 2, "tools-without-capability": 1,
                                    "prompts-without-capability": 1, "task-tools-undeclared": 1,
                                    "param-headers-invalid": 1, "list-changed-undeclared": 1}
    assert found.protocol is not None and found.protocol.modern and found.exit_code == 1
    assert found.facts["tools"] == 6 and found.facts["instructions_chars"] > 0
    assert "fetch_all" not in found.render("json") and "summarize_all" not in found.render("text")


def test_a_discover_result_without_server_info_is_a_guidance_finding() -> None:
    found = me.guidance(StdioTarget(tuple(fixture("modern_faults", "no-server-info"))), server="anon")
    assert dict(found.findings) == {"server-info-missing": 1} and found.facts["server_info"] == 0


def test_a_coherent_server_has_no_finding_in_either_era() -> None:
    assert me.guidance(StdioTarget(tuple(fixture("modern_faults"))), server="modern").findings == ()
    clean = me.guidance(StdioTarget(tuple(fixture("probe_clean"))), server="clean")
    assert clean.findings == () and clean.protocol is not None and clean.protocol.era == "legacy"
    assert clean.exit_code == 0


@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_the_sdk_server_s_instructions_are_counted_never_printed(protocol: str) -> None:
    with era_http("dual") as target:
        found = me.guidance(target, server="sdk", protocol=protocol)
    assert dict(found.findings) == {"instructions-unlisted-tools": 1}  # forecast_tomorrow
    assert found.facts["instructions_tool_mentions"] == 1  # describe_weather
    for fmt in FORMATS:
        text = found.render(fmt)
        assert CANARY_INSTRUCTIONS not in text and CANARY_DESCRIPTION not in text
        assert "forecast_tomorrow" not in text and "Use describe_weather" not in text
    ET.fromstring(found.render("junit"))


def test_the_command_prints_json_and_exits_1_on_findings() -> None:
    result = CliRunner().invoke(cli, ["guidance", "--server", "sdk", "--format", "json", "--protocol",
                                      "legacy", "--", *era_stdio("legacy").argv], standalone_mode=False)
    assert result.return_value == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["schema"] == "mcpeval-nb.guidance/v1" and doc["protocol"]["era"] == "legacy"


def test_instruction_names_are_snake_case_or_backticked_within_the_grammar() -> None:
    text = "Use `lookup` then read_only mode, not 2026-07-28 or read-only; call fetch_all. `two words`"
    assert instruction_names(text) == {"lookup", "read_only", "fetch_all"}
