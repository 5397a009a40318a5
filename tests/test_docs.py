"""The docs' code runs: every fenced block of README.md and docs/*.md that is code.

A block's info string says what it is. ``python file=NAME`` (and ``json file=NAME``) is a whole
file, written under NAME beside the doc's commands; a Python one must build and validate as a
spec. ``python fragment`` is an excerpt that illustrates (never run). ``sh run`` is a list of
commands run in order, in the fast tier, from a folder that holds the doc's files (and
``tests/``), each asserting what its comment states: ``exit N`` (0 when it states none),
``N distinct states``, ``Property in N steps``; ``sh run=slow`` the same in the slow tier. Every
``hwcheck`` command of any other ``sh`` block is parsed by the command line's own parser, so an
option the docs name exists and takes what they give it.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest
from helpers import NEEDS_JAVA

from hwcheck.checker import protocols
from hwcheck.checker.cli.main import main, run

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(\s*)```(.*)$")


@dataclass
class Block:
    doc: Path
    line: int  # of the opening fence, 1-based
    lang: str
    attrs: dict[str, str]
    text: str

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


@dataclass
class Command:
    args: list[str]
    line: int
    comment: str = ""
    expect: dict = field(default_factory=dict)


def blocks(doc: Path) -> list[Block]:
    """The fenced blocks of a Markdown file (indented ones inside lists included)."""
    out: list[Block] = []
    lines = doc.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, info = len(m.group(1)), m.group(2).split()
        body, j = [], i + 1
        while j < len(lines) and not FENCE.match(lines[j]):
            body.append(lines[j][indent:])
            j += 1
        attrs = dict(a.partition("=")[::2] for a in info[1:])
        out.append(Block(doc, i + 1, info[0] if info else "", attrs, "\n".join(body) + "\n"))
        i = j + 1
    return out


ALL = [b for d in DOCS for b in blocks(d)]


def _split_comment(line: str) -> tuple[str, str]:
    """(code, comment) of a shell line: the comment starts at a # outside quotes."""
    quote = None
    for k, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (k == 0 or line[k - 1].isspace()):
            return line[:k], line[k + 1:].strip()
    return line, ""


def commands(block: Block) -> list[Command]:
    """The ``hwcheck`` commands of a shell block, each with the comment that follows it (on its
    line or on the comment-only lines after it); ``NAME=value`` lines are substituted."""
    env: dict[str, str] = {}
    out: list[Command] = []
    pending = ""
    for n, raw in enumerate(block.text.splitlines(), start=block.line + 1):
        code, comment = _split_comment(pending + raw)
        if code.rstrip().endswith("\\"):
            pending = code.rstrip()[:-1] + " "
            continue
        pending = ""
        code = code.strip()
        if not code:
            if comment and out:
                out[-1].comment += " " + comment
            continue
        m = re.fullmatch(r"([A-Za-z_]\w*)=(\S+)", code)
        if m:
            env[m.group(1)] = m.group(2)
            continue
        for part in re.split(r"&&|;", code):
            # a variable the block does not set (a loop's) stands for nothing here
            words = shlex.split(re.sub(r"\$(\w+)", lambda v: env.get(v.group(1), ""), part))
            while words[:1] in (["do"], ["then"]):
                words = words[1:]
            if words and words[0] == "hwcheck":
                out.append(Command(words[1:], n, comment))
    return out


def expectations(comment: str) -> tuple[int, list[str]]:
    """(exit code, texts the output must hold) that a command's comment states."""
    m = re.search(r"\bexit (\d+)", comment)
    code = int(m.group(1)) if m else 0
    texts = [f"{n} distinct states" for n in re.findall(r"([\d,]+) distinct states", comment)]
    texts += [f"{p} in {n} steps" for p, n in
              re.findall(r"\b([A-Z]\w+) (?:violated )?in (\d+)\b", comment)]
    return code, texts


def test_every_code_block_says_what_it_is():
    """A Python block is a whole file or marked as a fragment; a file block has a name; a run
    block is a shell block."""
    assert any(b.attrs.get("file") == "die_hard.py" for b in ALL)
    for b in ALL:
        if b.lang == "python":
            assert "fragment" in b.attrs or b.attrs.get("file", "").endswith(".py"), \
                f"{b.where}: a python block is `python file=NAME.py` or `python fragment`"
        if "run" in b.attrs:
            assert b.lang == "sh" and b.attrs["run"] in ("", "slow"), b.where
            assert commands(b), f"{b.where}: a run block with no hwcheck command"


@pytest.mark.parametrize("block", [b for b in ALL if b.lang == "python" and "file" in b.attrs],
                         ids=lambda b: b.where)
def test_python_files_in_the_docs_build(block, tmp_path):
    path = tmp_path / block.attrs["file"]
    path.write_text(block.text)
    spec = protocols.build(protocols.load(str(path)))
    assert spec.actions and spec.invariants


def test_the_die_hard_of_the_guide_is_the_tested_one():
    """The guide says its Die Hard is tests/specs/die_hard.py: the file's code is the block."""
    block = next(b for b in ALL if b.attrs.get("file") == "die_hard.py")
    assert (ROOT / "tests" / "specs" / "die_hard.py").read_text().endswith(block.text)


SHELL = [(b, c) for b in ALL if b.lang == "sh" for c in commands(b)]


@pytest.mark.parametrize("block,cmd", SHELL, ids=[f"{b.doc.name}:{c.line}" for b, c in SHELL])
def test_every_hwcheck_command_in_the_docs_parses(block, cmd):
    """The command exists and takes the options and values the docs give it (click's parser and
    its types, nothing run)."""
    assert cmd.args, f"{block.where}: `hwcheck` alone"
    with main.make_context("hwcheck", list(cmd.args), resilient_parsing=False) as ctx:
        name, sub, rest = main.resolve_command(ctx, list(cmd.args))
        assert sub is not None, f"{block.doc.name}:{cmd.line}: no command {name}"
        if "--help" in rest or "-h" in rest:
            return
        try:
            sub.make_context(name, rest, parent=ctx)
        except click.UsageError as e:
            pytest.fail(f"{block.doc.name}:{cmd.line}: hwcheck {' '.join(cmd.args)}: "
                        f"{e.format_message()}")


def _hwcheck(capsys, args: list[str]) -> tuple[int, str]:
    try:
        run(list(args))
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0
    out, err = capsys.readouterr()
    return code, out + err


def _run_block(block: Block, tmp_path: Path, capsys, monkeypatch) -> None:
    for b in ALL:  # the doc's files, where its commands expect them
        if b.doc == block.doc and "file" in b.attrs:
            (tmp_path / b.attrs["file"]).write_text(b.text)
    os.symlink(ROOT / "tests", tmp_path / "tests")
    monkeypatch.chdir(tmp_path)
    for cmd in commands(block):
        code, out = _hwcheck(capsys, cmd.args)
        want, texts = expectations(cmd.comment)
        shown = f"{block.doc.name}:{cmd.line}: hwcheck {' '.join(cmd.args)}"
        assert code == want, f"{shown}: exit {code}, the doc says {want}\n{out[-2000:]}"
        for t in texts:
            assert t in out, f"{shown}: the doc says {t!r}\n{out[-2000:]}"


RUN = [b for b in ALL if b.attrs.get("run") == ""]
RUN_SLOW = [b for b in ALL if b.attrs.get("run") == "slow"]


@pytest.mark.parametrize("block", RUN, ids=lambda b: b.where)
def test_doc_commands_do_what_the_doc_says(block, tmp_path, capsys, monkeypatch):
    _run_block(block, tmp_path, capsys, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("block", [
    pytest.param(b, marks=[NEEDS_JAVA] if any("spark" in c.args for c in commands(b)) else [],
                 id=b.where) for b in RUN_SLOW])
def test_slow_doc_commands_do_what_the_doc_says(block, tmp_path, capsys, monkeypatch):
    _run_block(block, tmp_path, capsys, monkeypatch)


def test_the_checks_of_this_file_catch_a_wrong_doc():
    """The parser reads what the docs state: a comment's exit code and counts, continuation
    lines, variables, comment-only lines after a command."""
    b = Block(ROOT / "README.md", 1, "sh", {"run": ""},
              "S=x.py\nhwcheck check --spec $S \\\n  --param a=1\n"
              "          # exit 12: NotSolved violated in 6 steps, 1,234 distinct states\n"
              "make install && hwcheck params   # holds\n")
    cmds = commands(b)
    assert [c.args for c in cmds] == [["check", "--spec", "x.py", "--param", "a=1"],
                                      ["params"]]
    assert expectations(cmds[0].comment) == (12, ["1,234 distinct states",
                                                  "NotSolved in 6 steps"])
    assert expectations(cmds[1].comment) == (0, [])
