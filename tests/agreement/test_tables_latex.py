"""Issue 22, finding 2: the LaTeX of the validation tables compiles with pdflatex. Every
non-ASCII character of a cell, header, row label, caption or note is escaped or mapped to a
LaTeX command (Greek letters, common symbols, accented Latin letters) or, for anything else,
written as its code point; every preset's tables are compiled in the tests of
``test_tables_humans_only.py`` (each with its verdicts table), the verdicts table and the
mapping here."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest

from agreement import validation
from hvstats.tables import Cell, Row, Table, latex_escape, to_latex
from hvstats.verdicts import verdicts_table
from tests.agreement.latex import compile_latex
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
