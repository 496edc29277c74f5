"""The format tables: one call writes every document, each table owns its unknown and empty cases, the
CLI offers exactly the formats a table holds, and the renderers sit below the documents (no cycle)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import click
import pytest

import mcpeval_nb
from mcpeval_nb import ProbeReport, UsageError, render
from mcpeval_nb.cli import cli
from mcpeval_nb.probe.render import Format, FormatSet, Rendered, RenderOptions, aligned, lines_text

PACKAGE = Path(mcpeval_nb.__file__).resolve().parent


def _no_price(options: RenderOptions) -> None:
    if options.price_per_mtok is not None:
        raise UsageError("no price")


@dataclass(frozen=True)
class Rows:
    """A list document, as the findings are: JSON writes ``[]`` for no rows, the lines format nothing."""

    rows: tuple[str, ...]

    FORMATS: ClassVar[FormatSet[Rows]] = FormatSet(
        (Format("lines", lambda d, _: lines_text(d.rows)),
         Format("json", lambda d, _: "[" + ", ".join(f'"{r}"' for r in d.rows) + "]\n", empty="[]\n")),
        unknown="format must be lines or json", is_empty=lambda d: not d.rows,
        check=_no_price)


def test_a_format_owns_its_empty_case_and_the_table_its_unknown_one() -> None:
    assert render(Rows(()), "json") == "[]\n"  # the format's empty text, not the caller's
    assert render(Rows(()), "lines") == ""  # no empty text: written as any other
    assert render(Rows(("a", "b")), "json") == '["a", "b"]\n'
    with pytest.raises(UsageError, match=r"^format must be lines or json$"):
        render(Rows(("a",)), "csv")
    with pytest.raises(UsageError, match=r"^no price$"):  # option checks come before any writing
        render(Rows(()), "json", price_per_mtok=1.0)


def test_the_report_table_checks_the_price_before_any_format_writes() -> None:
    report = ProbeReport(server="demo", cases=())
    assert ProbeReport.FORMATS.names == ("text", "json", "markdown", "sarif", "junit")
    for fmt in ProbeReport.FORMATS.names:
        with pytest.raises(UsageError, match="--price-per-mtok must be a positive number of USD"):
            render(report, fmt, price_per_mtok=0.0)
    assert render(report, "json") == report.render("json") == report.dumps()
    assert render(report, "text", price_per_mtok=3.0) == report.render("text", price_per_mtok=3.0) == (
        "demo session cost unknown at $3/Mtok: no token estimate\n")


def test_aligned_rows_pad_every_column_to_its_widest_cell() -> None:
    assert aligned([["area", "a", "bb"], ["overall", "100", "7"]]) == ["area    a   bb", "overall 100 7"]
    assert aligned([["#", "tool"], ["10", "x"]], sep="  ") == ["#   tool", "10  x"]


def _format_choices(command: click.Command) -> tuple[str, ...]:
    option = next(p for p in command.params if p.name == "fmt")
    assert isinstance(option.type, click.Choice)
    return tuple(option.type.choices)


@pytest.mark.parametrize(("name", "document"), [
    ("probe", mcpeval_nb.ProbeReport), ("score", mcpeval_nb.ProbeReport), ("report", mcpeval_nb.ProbeReport),
    ("diff", mcpeval_nb.ProbeDiff), ("compare", (mcpeval_nb.Comparison, mcpeval_nb.EraMatrix)),
    ("gate", mcpeval_nb.GateReport),
    ("sizes", mcpeval_nb.ResultSizes), ("phases", mcpeval_nb.PhaseView),
    ("findings", mcpeval_nb.FindingsView), ("usage", mcpeval_nb.UsageReport),
    ("catalog", mcpeval_nb.CatalogReport), ("catalog check", mcpeval_nb.CatalogCheck),
    ("replay", mcpeval_nb.ReplayReport), ("audit", mcpeval_nb.AuditLog), ("config", mcpeval_nb.ConfigReport),
])
def test_every_format_a_command_offers_is_on_its_document_s_table(
        name: str, document: Rendered | tuple[Rendered, ...]) -> None:
    """A command that renders one of several documents (compare: a comparison, or with --eras the era
    matrix) offers only formats one of them has."""
    command: click.Command | None = cli
    for word in name.split():
        assert isinstance(command, click.Group)
        command = command.get_command(click.Context(command), word)
    assert command is not None
    documents = document if isinstance(document, tuple) else (document,)
    assert set(_format_choices(command)) <= {n for d in documents for n in d.FORMATS.names}


def _imports(path: Path) -> set[str]:
    """Every module of ours an import anywhere in ``path`` names (in functions and TYPE_CHECKING too)."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module.rpartition(".")[0] if path.name != "__init__.py" else module.removesuffix(".__init__")
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
            target = f"{base}.{node.module}" if node.module else base
            found |= {f"{target}.{a.name}" for a in node.names} | {target}
    return found


@pytest.mark.parametrize("folders", [("probe", "sizes"), ("triage", "serve")])
def test_no_import_cycle_in_these_modules(folders: tuple[str, ...]) -> None:
    files = [p for folder in folders for p in sorted((PACKAGE / folder).rglob("*.py"))]
    names = [".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
             for p in files]
    graph = {name: _imports(p) for name, p in zip(names, files, strict=True)}
    state: dict[str, int] = {}

    def visit(node: str, trail: tuple[str, ...]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node] & graph.keys()):
            assert state.get(nxt) != 1, f"import cycle: {' -> '.join((*trail, node, nxt))}"
            if nxt not in state:
                visit(nxt, (*trail, node))
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, ())
