"""The generated blocks of docs/benchmark.md: each tool rewrites only the text between its
``<!-- BEGIN name -->`` and ``<!-- END name -->`` lines, so hand-written prose around the tables
survives a rerun."""
from __future__ import annotations

import re
from pathlib import Path

BENCHMARK_MD = Path(__file__).resolve().parents[2] / "docs" / "benchmark.md"


def replace_block(text: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- BEGIN {re.escape(name)} -->\n).*?(<!-- END {re.escape(name)} -->)",
                         re.S)
    if not pattern.search(text):
        raise SystemExit(f"docs/benchmark.md has no {name} block")
    return pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)


def write_block(name: str, body: str, doc: Path = BENCHMARK_MD) -> None:
    doc.write_text(replace_block(doc.read_text(), name, body))
    print(f"updated {doc} ({name})")
