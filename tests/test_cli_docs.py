"""docs/cli.md cannot drift from the CLI: every command and every option is documented, and every
command's ``--help`` ends with an example (sqlite-utils' tests/test_docs.py is the model)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mcpeval_nb.cli import cli

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
_HEADING = re.compile(r"^### `mcpeval-nb ([^`]*)`", re.M)


def _leaves(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        path = (*prefix, name)
        if isinstance(command, click.Group):
            found += _leaves(command, path)
        else:
            found.append((path, command))
    return found


COMMANDS = _leaves(cli)


def _sections(text: str) -> dict[tuple[str, ...], str]:
    """Command path -> its section's text; ``schema report|diff`` documents two commands."""
    heads = list(_HEADING.finditer(text))
    found: dict[tuple[str, ...], str] = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        words = []
        for word in head.group(1).split():
            if not re.fullmatch(r"[a-z][a-z|-]*", word):
                break
            words.append(word.split("|"))
        paths: list[tuple[str, ...]] = [()]
        for options in words:
            paths = [(*p, o) for p in paths for o in options]
        for path in paths:
            found[path] = text[head.start():end]
    return found


def _long_flags(command: click.Command) -> list[str]:
    flags = []
    for param in command.params:
        if isinstance(param, click.Option):
            flags += [o for o in param.opts if o.startswith("--") and o != "--help"]
    return flags


def test_the_sections_parser_finds_what_it_should() -> None:
    sections = _sections("### `mcpeval-nb schema report|diff`\nx --y\n### `mcpeval-nb probe --server L`\nz\n")
    assert set(sections) == {("schema", "report"), ("schema", "diff"), ("probe",)}
    assert "--y" in sections[("schema", "diff")] and "--y" not in sections[("probe",)]


def test_every_command_has_a_section_in_docs_cli_md() -> None:
    sections = _sections(DOC.read_text(encoding="utf-8"))
    missing = [" ".join(path) for path, _ in COMMANDS if path not in sections]
    assert missing == []


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_option_is_documented_in_its_commands_section(path: tuple[str, ...],
                                                              command: click.Command) -> None:
    section = _sections(DOC.read_text(encoding="utf-8")).get(path, "")
    assert [flag for flag in _long_flags(command) if not re.search(rf"{flag}(?![a-z-])", section)] == []


def test_the_global_options_are_documented() -> None:
    intro = DOC.read_text(encoding="utf-8").split("\n## ", 1)[0]
    assert [flag for flag in _long_flags(cli) if flag not in intro] == []


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS] + [()], ids=lambda p: " ".join(p) or "mcpeval-nb")
def test_every_help_ends_with_an_example(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0
    lines = [line.strip() for line in result.output.rstrip().splitlines()]
    start = len(lines) - 1 - lines[::-1].index("Example:")
    example = lines[start + 1:]
    assert example and all(line.startswith("mcpeval-nb ") for line in example)
    if path:
        assert example[0].startswith("mcpeval-nb " + " ".join(path))


def test_every_command_is_found_in_its_home_module_alone() -> None:
    """``mcpeval-nb X`` imports X's module only (COMMAND_HOMES): the table names each command's module."""
    import importlib

    from mcpeval_nb import cli as cli_package

    modules = {n: importlib.import_module(f"mcpeval_nb.cli.{n}") for n in cli_package.COMMAND_MODULES}
    declared = {command.name: name for name, module in modules.items() for command in module.COMMANDS}
    assert declared == cli_package.COMMAND_HOMES
    schemas = {command.name: name for name, module in modules.items()
               for command in getattr(module, "SCHEMA_COMMANDS", ())}
    assert schemas == cli_package.SCHEMA_HOMES
