"""The first-hour pages stay true: docs/first-hour-python.md's snippets run, in order, in one
namespace, in a fresh folder holding the page's files, and print exactly the output the page
shows under them; docs/first-hour-c.md shows examples/c/example.c as it is (CTest builds and
runs that file)."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON_PAGE = ROOT / "docs" / "first-hour-python.md"
C_PAGE = ROOT / "docs" / "first-hour-c.md"

_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```$", re.M | re.S)


def fenced_blocks(page: Path) -> List[Tuple[str, str]]:
    """(info string, text) of each fenced block, in order."""
    return [(m.group(1).strip(), m.group(2)) for m in _FENCE.finditer(page.read_text("utf-8"))]


def python_steps(blocks: List[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """(code, the output shown right under it, or None) for each python block."""
    steps = []
    for i, (info, text) in enumerate(blocks):
        if info == "python":
            after = blocks[i + 1] if i + 1 < len(blocks) else ("", "")
            steps.append((text, after[1] if after[0] == "text" else None))
    return steps


def test_the_python_page_runs_and_prints_what_it_shows(tmp_path, monkeypatch):
    blocks = fenced_blocks(PYTHON_PAGE)
    files = [(info.split(None, 1)[1], text) for info, text in blocks
             if info.startswith("json ") and len(info.split()) == 2]
    assert files, "the page's config file (a ```json NAME block)"
    for name, text in files:
        (tmp_path / name).write_text(text, "utf-8")
    monkeypatch.chdir(tmp_path)
    steps = python_steps(blocks)
    assert len(steps) >= 6, "install, config, call, snapshot, errors, real clock"
    namespace: dict = {"__name__": "first_hour"}
    try:
        for n, (code, shown) in enumerate(steps, 1):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"{PYTHON_PAGE.name} python block {n}", "exec"), namespace)
            if shown is not None:
                assert out.getvalue() == shown, f"python block {n} printed:\n{out.getvalue()}"
            else:
                assert out.getvalue() == "", f"python block {n} printed without showing it"
    finally:
        for value in list(namespace.values()):
            if type(value).__name__ == "Engine" and not value.closed:
                value.close()


def test_the_c_page_shows_the_example_program_as_it_is():
    c_blocks = [text for info, text in fenced_blocks(C_PAGE) if info == "c"]
    assert c_blocks, "the page shows the program"
    assert c_blocks[0] == (ROOT / "examples" / "c" / "example.c").read_text("utf-8")


@pytest.mark.parametrize("page", [PYTHON_PAGE, C_PAGE], ids=lambda p: p.name)
def test_the_readme_links_the_page(page):
    assert f"docs/{page.name}" in (ROOT / "README.md").read_text("utf-8")
