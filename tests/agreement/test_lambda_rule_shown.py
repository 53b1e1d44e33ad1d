"""The small-sample lambda rule (issue 34) is stated where it chose lambda: on the pages (in the
UI's language), in the long CSV rows and as a known text of the catalogues."""

from __future__ import annotations

import numpy as np
import pytest
from django.utils import translation

from agreement import presentation, services, table_strings
from hvstats.ppi import ppi_mean


def _ppi(n: int) -> dict:
    rng = np.random.default_rng(n)
    f = rng.beta(0.6, 1.4, n + 300)
    y = (rng.random(n + 300) < f).astype(float)
    return ppi_mean(y[:n], f[:n], f[n:])


def test_the_rule_is_shown_translated_beside_lambda():
    small, large = _ppi(40), _ppi(150)
    # 40 labels, 300 judge-only items: lambda = 300 / 340 (hvstats.ppi "Small samples")
    assert presentation._lambda_text(small) == "0.88 (lambda = N/(n+N): fewer than 100 labels)"
    assert presentation._lambda_text(large) == f"{large['lambda']:.2f}"  # tuned: the number alone
    with translation.override("de"):
        assert (
            presentation._lambda_text(small) == "0,88 (lambda = N/(n+N): weniger als 100 Labels)"
        )  # German decimal comma
    with translation.override("zh-hans"):
        assert presentation._lambda_text(small) == "0.88 (lambda = N/(n+N)：标注少于 100 个)"
    assert table_strings.is_known("lambda = 1: fewer than 200 labels")  # the active estimate's rule
    assert table_strings.is_known("lambda = N/(n+N): fewer than 100 labels")


def test_the_csv_lambda_row_carries_the_rule_as_its_reason():
    rows = {r["metric"]: r for r in services._verdict_rows("ppi", _ppi(40), {})}
    assert rows["lambda"]["value"] == pytest.approx(300 / 340)
    assert rows["lambda"]["reason"] == "lambda = N/(n+N): fewer than 100 labels"
    rows = {r["metric"]: r for r in services._verdict_rows("ppi", _ppi(150), {})}
    assert rows["lambda"]["reason"] is None


def test_the_active_form_defaults_tau_to_one_half():
    from agreement.active_forms import ActiveSampleForm
    from hvstats.active import DEFAULT_TAU

    assert DEFAULT_TAU == 0.5 and ActiveSampleForm.base_fields["tau"].initial == 0.5
    base = {
        "judge": "1",
        "source": "uniform",
        "field": "q1",
        "budget": "20",
        "floor": "0.05",
        "seed": "0",
        "rounds": "1",
    }
    kw = {"judges": [type("J", (), {"id": 1, "name": "gpt"})()], "sources": [("uniform", "uniform")], "fields": ["q1"]}
    form = ActiveSampleForm(base, **kw)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["tau"] == 0.5  # left empty: the default
    typed = ActiveSampleForm({**base, "tau": "0"}, **kw)
    assert typed.is_valid() and typed.cleaned_data["tau"] == 0.0
    bad = ActiveSampleForm({**base, "tau": "1.5"}, **kw)
    assert not bad.is_valid() and "tau" in bad.errors


def test_the_active_method_line_states_the_rule_in_every_language():
    from hvstats.active_table import METHOD

    assert "(1 below 200 labels)" in METHOD
    with translation.override("de"):
        assert "(1 unter 200 Labels)" in table_strings.translate(METHOD)
    with translation.override("zh-hans"):
        assert "标注少于 200 个时取 1" in table_strings.translate(METHOD)
