"""Issue 22, finding 2: the LaTeX of the validation tables compiles with pdflatex. Every
non-ASCII character of a cell, header, row label, caption or note is escaped or mapped to a
LaTeX command (Greek letters, common symbols, accented Latin letters) or, for anything else,
written as its code point; every preset's tables are compiled in the tests of
``test_tables_humans_only.py`` (each with its verdicts table), the verdicts table and the
mapping here."""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pytest

from agreement import validation
from hvstats.tables import CAPTION_MAX, LATEX_PREAMBLE, Cell, Row, Table, latex_escape, to_latex
from hvstats.verdicts import verdicts_table
from tests.agreement.latex import compile_latex, run_pdflatex
from tests.agreement.test_paper_tables import import_ok, submit_humans
from tests.annotation.factories import make_project, make_user, turing_records

NAMES = ("Zoë Ñandú", "Łódź", "张伟", "Ødegård", "naïve", "🙂 judge", "Dvořák")


def verdicts() -> dict:
    alt = {
        "winning_rate": 1.0,
        "advantage_probability": 0.97,
        "passed": True,
        "n_items": 40,
        "n_humans": 3,
    }
    ppi = {
        "estimate": 0.52,
        "ci": [0.4, 0.64],
        "classical_estimate": 0.5,
        "classical_ci": [0.35, 0.65],
        "lambda": 0.8,
        "n_labeled": 40,
        "n_unlabeled": 60,
    }
    return {"q1 ≥ ½": {n: {"alt_test": alt, "ppi": ppi} for n in NAMES}, "total": {NAMES[0]: {"alt_test": None}}}


def test_the_verdicts_table_compiles_with_omega_and_lambda():
    t = verdicts_table(verdicts(), epsilon=0.15)
    assert "ω" in " ".join(t.columns) and "λ" in t.columns  # the raw letters are in the table...
    tex = to_latex([t])
    assert tex.isascii()  # ...and never in its LaTeX
    assert r"$\omega$" in tex and r"$\lambda$" in tex and r"$\rho$" in tex
    compile_latex([t])


def test_every_non_ascii_character_is_mapped_and_compiles():
    # a broad sweep: Latin-1, Latin Extended, Greek, punctuation, arrows and maths, CJK, emoji
    ranges = [(0xA0, 0x250), (0x370, 0x3D0), (0x2010, 0x2040), (0x2190, 0x21A0), (0x2200, 0x2270)]
    chars = "".join(chr(c) for a, b in ranges for c in range(a, b) if unicodedata.category(chr(c))[0] in "LNPSZ")
    chars += "张伟🙂ﬁ"
    text = latex_escape(chars)
    assert text.isascii()
    assert latex_escape("ω λ ρ κ α τ ≥ ≤") == r"$\omega$ $\lambda$ $\rho$ $\kappa$ $\alpha$ $\tau$ $\geq$ $\leq$"
    assert latex_escape("café Zoë") == r"caf\'{e} Zo\"{e}"
    assert latex_escape("张") == "[U+5F20]"
    assert latex_escape("a<b|c>d_1 & 50% #") == r"a\textless{}b\textbar{}c\textgreater{}d\_1 \& 50\% \#"
    table = Table(
        key="sweep",
        title="Every character: " + chars[:200],
        columns=tuple(NAMES),
        rows=(
            Row(chars[200:400], tuple(Cell(0.5, (0.1, 0.9), 10) for _ in NAMES)),
            Row("α ≥ 0.8", tuple(Cell(n, fmt="text") for n in NAMES)),
        ),
        caption=chars[400:],
        row_header="Rater ω",
        notes=("Notes carry ω, λ and 张 too.",),
    )
    compile_latex([table])


@pytest.mark.django_db
def test_a_preset_table_with_non_ascii_rater_names_compiles(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    rng = np.random.default_rng(4)
    owner = make_user("tl-owner", researcher=True)
    team = [make_user(n) for n in ("zoë", "łukasz", "ødegård")]
    project = make_project("cqbench.turing", owner=owner, annotators=team, k=3)
    import_ok(project, turing_records(12))
    submit_humans(project, lambda e, u, a: {"human_written": str(rng.choice(["left", "right", "tie"]))})
    tables = validation.compute_tables(project, bootstrap=50, seed=0)
    labels = [r.label for r in tables[0].rows]
    assert "zoë" in labels
    log = compile_latex(tables)
    assert "Output written" in log


# --------------------------------------------------------------- issue 35: LaTeX at any length
JUDGES = tuple(f"Judge model number {k} with a long descriptive name (App. B.{k})" for k in range(12))
FIELDS = tuple(f"rewrite_improvement[{k}]" for k in range(8))


def warned_verdicts() -> dict:
    """Every judge x field without a verdict, each with a warning: the CQ-Bench story study's
    case (one warning per judge and field under the verdicts table), here 96 of them."""
    alt = {
        "passed": None,
        "reason": "undefined: fewer than 2 humans with 30 items or more rated this field together with the judge",
        "warnings": ["on these items the judge always says the same label, so its winning rate cannot vary"],
        "n_items": 12,
    }
    return {f: {j: {"alt_test": alt, "ppi": None} for j in JUDGES} for f in FIELDS}


def captions(tex: str) -> list[str]:
    """The text of every ``\\caption{...}`` (balanced braces)."""
    out = []
    for m in re.finditer(r"\\caption\{", tex):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(tex[i], 0)
            i += 1
        out.append(tex[m.end() : i - 1])
    return out


def test_a_verdicts_table_with_6000_characters_of_warnings_compiles_with_its_notes_after_the_table():
    t = verdicts_table(warned_verdicts(), epsilon=0.2)
    warnings = [n for n in t.notes if "always says the same label" in n]
    assert len(warnings) == len(JUDGES) * len(FIELDS)  # one per judge and field, and the table's own notes
    assert sum(len(n) for n in t.notes) > 6000  # longer than the story study's 5,741 characters
    tex = to_latex([t])
    (caption,) = captions(tex)
    # the caption is the title and the table's caption; no warning is in it
    assert caption.startswith("Judge verdicts") and len(caption) <= CAPTION_MAX
    assert "always says the same label" not in caption
    # the warnings follow the table, after \end{table}, in a note block that names it
    after = tex.split(r"\end{table}", 1)[1]
    assert r"\textit{Notes to Table~\ref{tab:judge-verdicts}.}" in after
    assert after.count("always says the same label") == len(warnings)
    log = compile_latex([t])
    assert "Output written" in log
    # warnings inside \caption are what stopped pdflatex (issue 35: the story study's caption
    # of 5,741 characters): the test can tell. TeX's box width wraps around past twice
    # \maxdimen, so the failure is shown at the story study's length, not at any length.
    k = next(k for k in range(len(t.notes)) if len(caption) + sum(len(n) + 1 for n in t.notes[:k]) > 5700)
    inside = tex.replace(
        r"\caption{" + caption + "}",
        r"\caption{" + latex_escape(" ".join((t.title + ".", t.caption, *t.notes[:k]))) + "}",
    )
    ok, log = run_pdflatex(inside)
    assert not ok and "Dimension too large" in log


def test_a_long_caption_moves_to_the_note_block():
    long = "A caption of many words. " * 200  # 5,000 characters
    t = Table("long", "Long", ("a",), (Row("r", (Cell(0.5),)),), caption=long, notes=("And a note.",))
    tex = to_latex([t])
    assert captions(tex) == ["Long."]
    notes = tex.split(r"\end{table}", 1)[1]
    assert notes.index("A caption of many words.") < notes.index("And a note.")
    compile_latex([t])


def test_a_table_with_many_judge_columns_fits_the_text_width():
    # 12 judges x 2 coefficients with long headers: far wider than the text unless scaled down
    columns = tuple(f"{j} vs mean human: Spearman rho" for j in JUDGES) + tuple(
        f"{j} vs mean human: Pearson r" for j in JUDGES
    )
    rows = tuple(Row(f"Q{k}", tuple(Cell(0.5 + k / 100, (0.3, 0.8), 40) for _ in columns)) for k in range(6))
    t = Table("wide", "Judges vs mean human", columns, rows, row_header="question")
    tex = to_latex([t])
    assert r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%" in tex
    # long headers are broken into lines of at most 16 characters (a longer word stays whole)
    assert r"\begin{tabular}[b]{@{}r@{}}Judge model \\ number 0 with a" in tex
    log = compile_latex([t])
    assert "Overfull \\hbox" not in log  # nothing sticks out of the text block
    # without the \resizebox the same tabular does stick out: the check can tell
    unscaled = tex.replace(r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%", "{%")
    ok, log = run_pdflatex(unscaled)
    assert ok and "Overfull \\hbox" in log


def test_the_download_names_the_packages_it_needs():
    tex = to_latex([Table("t", "T", ("a",), (Row("r", (Cell(0.5),)),))])
    head = tex.split(r"\begin{table}", 1)[0]
    # every package the tables use is named in the head, and is what the tests compile with
    used = {"booktabs", "graphicx"}
    assert {p for p in used if rf"%   \usepackage{{{p}}}" in head} == used
    assert all(rf"\usepackage{{{p}}}" in LATEX_PREAMBLE for p in used)
    assert all(line.startswith("%") for line in head.strip().splitlines())
