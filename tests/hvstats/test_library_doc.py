"""docs/library.md's worked example is true: its Python blocks, run in order in one namespace,
print exactly the text blocks that follow them (trailing spaces aside). It runs the DataFrame
API of :mod:`hvstats.frame` end to end: agreement, alt-test, PPI++ with budget advice, active
estimates, latent truth and a preset's paper table (the platform's ValueGround tables, which the
test environment can import)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "library.md"
BLOCK = re.compile(r"```(python|text)\n(.*?)\n```", re.S)


def _example() -> list[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Worked example") : text.index("## Checked")]
    blocks = BLOCK.findall(section)
    pairs = list(zip(blocks[::2], blocks[1::2], strict=True))
    assert pairs and all(a[0] == "python" and b[0] == "text" for a, b in pairs)
    return [(code, shown) for (_, code), (_, shown) in pairs]


def _lines(s: str) -> list[str]:
    return [line.rstrip() for line in s.rstrip("\n").splitlines()]


def test_the_worked_example_prints_what_the_doc_shows():
    namespace: dict = {}
    for k, (code, shown) in enumerate(_example(), start=1):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"docs/library.md example block {k}", "exec"), namespace)
        assert _lines(out.getvalue()) == _lines(shown), f"block {k}"
