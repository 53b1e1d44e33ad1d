"""Compile the validation tables' LaTeX with a real TeX engine (issue 22): pdflatex from
Debian's ``texlive-latex-base`` (graphicx with it) and booktabs from ``texlive-latex-recommended``, which
``.ci/run`` and ``scripts/test`` install. Where the tests must run everything (CI, scripts/test:
:func:`tests.services.services_required`) a missing pdflatex fails the test; in a bare local
run it skips."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from hvstats.tables import LATEX_PREAMBLE, Table, to_latex
from tests import services


def pdflatex() -> str:
    exe = shutil.which("pdflatex")
    if exe is None:
        reason = "pdflatex is missing (Debian: texlive-latex-base texlive-latex-recommended)"
        if services.services_required():
            pytest.fail(f"{reason}; CI and scripts/test install it", pytrace=False)
        pytest.skip(reason)
    return exe


def run_pdflatex(body: str) -> tuple[bool, str]:
    """Compile a LaTeX body in a minimal document (:data:`LATEX_PREAMBLE`: article, booktabs,
    graphicx) with ``-halt-on-error``: whether a PDF came out, and the log."""
    exe = pdflatex()
    doc = LATEX_PREAMBLE + "\\begin{document}\n" + body + "\n\\end{document}\n"
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "tables.tex").write_text(doc, encoding="utf-8")
        run = subprocess.run(
            [exe, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "tables.tex"],
            cwd=tmp,
            capture_output=True,
            timeout=300,
        )
        log = Path(tmp, "tables.log").read_text(encoding="utf-8", errors="replace")
        return run.returncode == 0 and Path(tmp, "tables.pdf").exists(), log


def compile_latex(tables: Sequence[Table] | str) -> str:
    """Compile the tables (or a LaTeX body, :func:`run_pdflatex`); returns the log, fails the
    test with the TeX error when it does not compile."""
    body = tables if isinstance(tables, str) else to_latex(tables)
    ok, log = run_pdflatex(body)
    if not ok:
        errors = [line for line in log.splitlines() if line.startswith("!") or line.startswith("l.")]
        pytest.fail("pdflatex failed:\n" + "\n".join(errors[:20]) + "\n--- document ---\n" + body[:4000])
    assert "Unicode character" not in log
    return log
