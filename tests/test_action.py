"""The composite GitHub Action (``action.yml``), run locally the way the runner would run it.

Each step's ``run:`` block is executed with ``bash --noprofile --norc -eo pipefail`` (GitHub's ``shell:
bash``), its ``env:`` expanded from the inputs (defaults from action.yml) and earlier steps' outputs,
``$GITHUB_OUTPUT`` and ``$GITHUB_STEP_SUMMARY`` pointing at files; a step whose ``if:`` is false is
skipped, and the first failing step ends the run, as on a runner.  The install step runs too, against
the package already installed here (``PIP_NO_INDEX=1``: no network).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from tests import waiting
from tests.ci_support import fixture, junit, outcomes

ACTION = yaml.safe_load((Path(__file__).resolve().parents[1] / "action.yml").read_text())
_EXPR = re.compile(r"\$\{\{\s*(inputs\.[\w-]+|steps\.[\w-]+\.outputs\.[\w-]+)\s*\}\}")


def run_action(work: Path, **given: str) -> tuple[int, dict[str, dict[str, str]], str]:
    """Run every step: (exit code, step id -> outputs, job summary text)."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    unknown = set(given) - set(inputs)
    assert not unknown, unknown
    inputs |= given
    outputs: dict[str, dict[str, str]] = {}
    summary = work / "summary.md"
    summary.touch()

    def expand(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            parts = m.group(1).split(".")
            return inputs[parts[1]] if parts[0] == "inputs" else outputs.get(parts[1], {}).get(parts[3], "")

        assert "${{" not in _EXPR.sub("", text), text
        return _EXPR.sub(one, text)

    for step in ACTION["runs"]["steps"]:
        condition = step.get("if")
        if condition is not None:
            match = re.fullmatch(r"inputs\.([\w-]+) != ''", condition)
            assert match, condition
            if inputs[match.group(1)] == "":
                continue
        out_file = work / f"output-{step.get('id', 'step')}"
        out_file.write_text("")
        env = {
            **os.environ,
            "PIP_NO_INDEX": "1",
            "GITHUB_OUTPUT": str(out_file),
            "GITHUB_STEP_SUMMARY": str(summary),
        }
        env |= {k: expand(str(v)) for k, v in step.get("env", {}).items()}
        assert step["shell"] == "bash"
        done = waiting.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            stall_s=240,
            check=False,
        )
        if "id" in step:
            outputs[step["id"]] = dict(line.split("=", 1) for line in out_file.read_text().splitlines())
        if done.returncode != 0:
            return done.returncode, outputs, summary.read_text()
    return 0, outputs, summary.read_text()


def _manifest(work: Path, *cases: dict[str, Any]) -> str:
    (work / "mcp-eval.manifest.json").write_text(json.dumps({"version": 1, "probes": list(cases)}, indent=2))
    return "mcp-eval.manifest.json"


PAGES = {"id": "pages", "probe": "pagination", "access": "read_only", "max_pages": 3}
TOKENS = {"id": "tokens", "probe": "token-cost", "access": "read_only", "max_total_tokens": 100000}


def test_the_action_probes_diffs_and_writes_summary_sarif_and_junit(tmp_path: Path) -> None:
    _manifest(tmp_path, PAGES, TOKENS)
    server = " ".join(fixture("probe_clean"))
    base = dict(
        python=sys.executable, **{"server-command": server, "server-label": "demo", "gate-only": "true"}
    )
    code, outputs, _ = run_action(tmp_path, **base, **{"output-dir": "first"})
    assert code == 0 and outputs["verdict"]["exit-code"] == "0"
    code, outputs, summary = run_action(
        tmp_path,
        **base,
        **{"baseline-report": "first/report.json", "sarif-path": "probe.sarif", "junit-path": "probe.xml"},
    )
    assert code == 0, summary
    assert outputs["probe"]["report"] == "mcpeval-results/report.json"
    assert summary.index("# Probe report: demo") < summary.index("# Probe diff: demo")
    assert "**Summary:** 0 regressed, 0 fixed, 0 changed, 2 unchanged" in summary
    assert json.loads((tmp_path / "probe.sarif").read_text())["version"] == "2.1.0"
    assert outcomes(junit((tmp_path / "probe.xml").read_text())) == {
        "pages": ("passed", None),
        "tokens": ("passed", None),
    }


def test_a_regression_or_a_change_fails_the_action_with_exit_one(tmp_path: Path) -> None:
    server = " ".join(fixture("probe_clean"))
    base = dict(
        python=sys.executable, **{"server-command": server, "server-label": "demo", "gate-only": "true"}
    )
    _manifest(tmp_path, PAGES, TOKENS)
    assert run_action(tmp_path, **base, **{"output-dir": "first"})[0] == 0
    _manifest(tmp_path, PAGES, {**TOKENS, "max_total_tokens": 10})
    code, outputs, summary = run_action(tmp_path, **base, **{"baseline-report": "first/report.json"})
    assert (code, outputs["probe"]["status"], outputs["diff"]["status"]) == (1, "1", "1")
    assert "| tokens | token-cost | regressed | pass | token-budget-exceeded |" in summary
    _manifest(
        tmp_path, PAGES, TOKENS, {"id": "more", "probe": "pagination", "access": "read_only", "max_pages": 2}
    )
    code, outputs, _ = run_action(tmp_path, **base, **{"baseline-report": "first/report.json"})
    assert (code, outputs["diff"]["status"]) == (0, "0")  # an added case is a change, not a regression
    code, outputs, _ = run_action(
        tmp_path, **base, **{"baseline-report": "first/report.json", "fail-on-change": "true"}
    )
    assert (code, outputs["diff"]["status"], outputs["verdict"]["exit-code"]) == (1, "1", "1")


def test_budgets_add_the_traffic_gate_and_its_junit(tmp_path: Path) -> None:
    from tests.test_gate import write_calls

    root = tmp_path / "capture"
    write_calls(root, "docs", "search", list(range(1, 21)))
    (tmp_path / "budgets.json").write_text(json.dumps({"version": 1, "budgets": [{"p95_ms": 10}]}))
    _manifest(tmp_path, PAGES)
    code, outputs, summary = run_action(
        tmp_path,
        python=sys.executable,
        **{
            "server-command": " ".join(fixture("probe_clean")),
            "gate-only": "true",
            "budgets": "budgets.json",
            "capture-root": str(root),
            "gate-junit-path": "gate.xml",
        },
    )
    assert (code, outputs["probe"]["status"], outputs["gate"]["status"]) == (1, "0", "1")
    assert "# Traffic gate" in summary and "| docs | search | p95_ms | fail | 20 | 19.05 | 10 |" in summary
    assert outcomes(junit((tmp_path / "gate.xml").read_text())) == {
        "docs search p95_ms": ("failure", "gate-p95-exceeded")
    }


def test_a_usage_error_stops_the_action_with_exit_two(tmp_path: Path) -> None:
    code, outputs, _ = run_action(
        tmp_path, python=sys.executable, **{"server-command": "true", "manifest": "missing.json"}
    )
    assert code == 2 and outputs["probe"]["status"] == "2"
