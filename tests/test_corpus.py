"""SPEC 15 readiness corpus placement from a private ``<root>/corpus.json``: text and markdown when the
standards match, never JSON, never a server name; other schemas ignored; a bad v2 file named."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import mcpeval_nb as me
from mcpeval_nb.probe.corpus import parse_corpus, placement_lines
from tests import waiting
from tests.probe_support import fixture

CANARY_SERVER = "CANARY-corpus-server"


SCORES, TOKENS = (40, 60, 76, 76, 90), (100, 300, 900, 5000)


def _corpus(root: Path, standard: str = "mcpeval-standard/2",
            schema: str = "mcpeval.readiness-corpus/v2") -> None:
    observations = [{"server": f"{CANARY_SERVER}-{i}", "readiness": s, "tool_count": 3,
                     **({"catalog_tokens": TOKENS[i]} if i < len(TOKENS) else {})}
                    for i, s in enumerate(SCORES)]
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.json").write_text(json.dumps({"schema": schema, "standard": standard,
                                                  "observations": observations}), encoding="utf-8")


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> me.ProbeReport:
    return me.score_server(me.StdioTarget(tuple(fixture("probe_clean"))), server="clean",
                           options=me.BatteryOptions(history=False))


def test_placement_lines_follow_spec_15(scored: me.ProbeReport, tmp_path: Path) -> None:
    _corpus(tmp_path)
    corpus = me.load_corpus(tmp_path)
    assert scored.readiness is not None
    score = scored.readiness.score
    tokens = scored.readiness.area("context").measurements["catalog_tokens"]
    lines = placement_lines(corpus, scored.readiness)
    scores, catalogs = SCORES, TOKENS
    assert lines[0] == (f"standard corpus (mcpeval-standard/2): above {sum(s < score for s in scores)}, tied "
                        f"{sum(s == score for s in scores)}, below {sum(s > score for s in scores)} of 5 "
                        "observed servers")
    assert lines[1] == (f"catalog: {tokens} tokens over {scored.readiness.surface.tools} tools, lighter than "
                        f"{sum(c > tokens for c in catalogs)} of 4 observed servers (median 300 tokens)")
    text = me.render(scored, "text", corpus=corpus)
    markdown = me.render(scored, "markdown", corpus=corpus)
    assert lines[0] in text and lines[1] in markdown
    assert "corpus" not in me.render(scored, "json", corpus=corpus)
    assert CANARY_SERVER not in text + markdown


def test_another_standard_or_schema_places_nothing(scored: me.ProbeReport, tmp_path: Path) -> None:
    _corpus(tmp_path / "old", standard="mcpeval-standard/1")  # the reference's public corpus standard
    assert placement_lines(me.load_corpus(tmp_path / "old"), scored.readiness) == []
    _corpus(tmp_path / "v1", schema="mcpeval.readiness-corpus/v1")
    assert me.load_corpus(tmp_path / "v1") is None
    assert me.load_corpus(tmp_path / "none") is None


def test_an_invalid_v2_corpus_is_named_not_quoted(tmp_path: Path) -> None:
    bad = {"schema": "mcpeval.readiness-corpus/v2", "standard": "s",
           "observations": [{"server": CANARY_SERVER, "readiness": CANARY_SERVER}]}
    (tmp_path / "corpus.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(me.DocumentError) as caught:
        me.load_corpus(tmp_path)
    assert "observation 1 readiness" in str(caught.value) and CANARY_SERVER not in str(caught.value)
    assert parse_corpus(b"[]") is None


def test_the_score_command_prints_the_placement(tmp_path: Path) -> None:
    _corpus(tmp_path)
    done = waiting.run([sys.executable, "-m", "mcpeval_nb", "score", "--server", "clean", "--no-history",
                           "--root", str(tmp_path), "--", *fixture("probe_clean")], capture_output=True,
                       text=True, stall_s=300)
    assert done.returncode == 0, done.stderr
    assert "standard corpus (mcpeval-standard/2): above " in done.stdout
    assert CANARY_SERVER not in done.stdout + done.stderr
