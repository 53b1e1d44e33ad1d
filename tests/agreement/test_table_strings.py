"""The validation tables are translated on the page (issue 25): every text a preset's tables
can produce (titles, headers, row labels, text cells, captions, notes, cell notes) is in the
catalogue of ``agreement/table_strings.py``, and the page shows it in German and Chinese while
the downloads keep the paper's English."""

from __future__ import annotations

import pytest
from django.utils import translation

from agreement import table_strings
from hvstats.tables import Cell, Row, Table, raters_note
from hvstats.verdicts import verdicts_table

from . import test_paper_tables as paper

pytestmark = pytest.mark.django_db
_env = paper._env
valueground = paper.valueground


def _unknown(tables, data) -> list[str]:
    return [
        t for table in tables for t in table_strings.texts_of(table.to_dict()) if not table_strings.is_known(t, data)
    ]


def test_every_valueground_and_verdicts_text_is_in_the_catalogue(valueground):
    from agreement import validation

    project, ids, _humans, judges, pos = valueground
    paper._store_ensemble(project, ids, pos, judges)
    tables = validation.compute_tables(project, bootstrap=20, seed=0)
    assert {t.key for t in tables} >= {"valueground-table4", "judge-answers", "judge-verdicts"}
    keys = [t.key for t in tables]
    assert keys.index("judge-answers") == keys.index("judge-verdicts") - 1  # the answer first
    data = {"LLM ensemble (ensemble)", "ensemble", "China", "Germany", "gpt", "gemini"}
    data |= set(paper.human_assignments(project).values_list("rater__name", flat=True))
    left = _unknown(tables, data)
    assert left == [], left


def test_the_verdicts_table_without_epsilon_and_the_raters_note():
    for eps in (None, 0.2):
        t = verdicts_table({"q1": {"j": {"alt_test": {"passed": True, "winning_rate": 0.6}}}}, str, eps)
        assert _unknown([t], {"j"}) == []
        for language in ("en", "de", "zh-hans"):
            with translation.override(language):
                caption = table_strings.translate_table(t.to_dict())["caption"]
            assert "95% CI" in caption or "95-%-KI" in caption or "95% 置信区间" in caption, (language, caption)
            epsilon = "0,2" if language == "de" else "0.2"  # German writes the decimal comma (issue 35)
            assert (epsilon in caption) == (eps is not None), (language, caption)
    assert raters_note(1, 1) == "1 annotator, 1 judge." and raters_note(4, 2) == "4 annotators, 2 judges."


def test_the_page_translates_and_the_download_keeps_english():
    table = Table(
        key="valueground-table4",
        title="Table 4: Agreement between the automatic judge and human annotations",
        columns=("judge-a vs mean human: Pearson r", "Human agreement: Spearman ρ", "n"),
        rows=(
            Row("Total", (Cell(0.5), Cell(None, note="undefined: fewer than two human raters"), Cell(3, fmt="count"))),
        ),
        row_header="Field",
        notes=(raters_note(1, 2),),
    )
    with translation.override("de"):
        de = table_strings.translate_table(table.to_dict())
    assert de["title"].startswith("Tabelle 4:") and de["rows"][0]["label"] == "Gesamt"
    assert de["columns"][0] == "judge-a vs. menschlicher Mittelwert: Pearson r"
    assert de["rows"][0]["cells"][1]["note"] == "undefiniert: weniger als zwei menschliche Bewerter"
    assert de["notes"] == ["1 annotierende Person, 2 Judges."]
    with translation.override("zh-hans"):
        zh = table_strings.translate_table(table.to_dict())
    assert zh["title"].startswith("表 4") and zh["notes"] == ["1 名标注者，2 个评审模型。"]
    assert table.to_dict()["title"].startswith("Table 4:")  # the data (and so the downloads) stay English


@pytest.mark.parametrize(
    "text",
    [
        "Q1",
        "China: Total",
        "judge-a: q3",
        "gpt: Q2",
        "As Table 4, with the mean human and the human agreement computed within each annotator group only (China: a, b; Germany: c, d).",
    ],
)
def test_templates_cover_labels_with_data(text):
    assert table_strings.is_known(text, {"China", "Germany", "judge-a", "gpt"})


def test_the_answers_table_reads_in_every_language():
    """One answer per judge (hvstats.verdicts.answers_table): every text known, and shown in
    German and Chinese (a cannot-tell reason, a flip and a threshold note included)."""
    from hvstats.verdicts import answers_table

    per = {
        "q1": {"status": "passed", "winning_rate": 0.5, "reason": ""},
        "q2": {
            "status": "undecided",
            "winning_rate": None,
            "reason": "too few humans: 2 tested (the alt-test asks for at least 3)",
        },
    }
    a = {
        "judge": "gpt",
        "verdict": "some_fields",
        "per_field": per,
        "stability": 0.75,
        "replicates": 4,
        "flipped_by": ["ann1"],
        "borderline": True,
        "n_humans": 3,
        "n_items": 40,
        "epsilon": 0.2,
    }
    t = answers_table([a])
    assert _unknown([t], {"gpt", "ann1"}) == []
    with translation.override("de"):
        de = table_strings.translate_table(t.to_dict())
    assert de["title"].startswith("Eine Antwort je Judge") and "Epsilon 0,2" in de["caption"]
    assert de["rows"][0]["cells"][0]["display"] == "nur bei einigen Feldern"
    assert de["rows"][0]["cells"][2]["note"].startswith("zu wenige Menschen: 2 getestet")
    assert de["notes"][:2] == [
        "gpt: Die Antwort ändert sich ohne eine dieser Personen: ann1.",
        "gpt: Gewinnrate bei q1 genau 0,5.",
    ]
    # then what the human-labels-saved column means (issue 34)
    assert de["notes"][2].startswith("Eingesparte menschliche Labels (PPI++): ")
    assert de["notes"][3].startswith("Die eingesparten menschlichen Labels eines Judges sind das Minimum")


def test_the_small_sample_notes_row_and_column_labels_are_translated():
    """Issue 34: the labels listed inside the small-sample note under a table (rows, columns) are
    UI words and follow the page's language; names (a judge) stay as they are."""
    from hvstats.notes import with_small_sample_note

    table = with_small_sample_note(
        Table(
            key="t",
            title="T",
            columns=("judge-a vs mean human: Pearson r", "Human agreement: Spearman ρ"),
            rows=(Row("Total", (Cell(0.5, n=4), Cell(0.4, n=6))),),
        )
    )
    note = table.notes[-1]
    assert "in the rows Total; columns judge-a vs mean human: Pearson r, Human agreement: Spearman ρ." in note
    with translation.override("de"):
        de = table_strings.translate(note)
    assert de.startswith("Kleine Stichproben") and "Zeilen Gesamt;" in de
    assert "judge-a vs. menschlicher Mittelwert: Pearson r" in de and "Human agreement" not in de
    with translation.override("zh-hans"):
        zh = table_strings.translate(note)
    assert "Total" not in zh and "Human agreement" not in zh and "人类一致性：Spearman ρ" in zh


def test_the_zero_width_note_reads_in_every_language():
    from hvstats.notes import ZERO_WIDTH_TABLE_NOTE

    note = ZERO_WIDTH_TABLE_NOTE % {"count": 1, "rows": "Total", "columns": "Human agreement: Spearman ρ"}
    assert table_strings.is_known(note)
    with translation.override("de"):
        assert table_strings.translate(note).startswith("Intervalle der Breite null")
    with translation.override("zh-hans"):
        zh = table_strings.translate(note)
    assert zh.startswith("宽度为零的区间") and "人类一致性：Spearman ρ" in zh and "Total" not in zh
