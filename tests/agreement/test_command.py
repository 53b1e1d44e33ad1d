import io
import json

import pytest


@pytest.fixture
def csv_file(tmp_path):
    lines = ["item,rater,value,field,rater_kind,country"]
    for i in range(30):
        for r in range(3):
            lines.append(f"i{i},h{r},{(i + (r == 2) * (i % 3 == 0)) % 5 + 1},Total,human,{'CN' if i % 2 else 'DE'}")
        lines.append(f"i{i},judge,{(i + 1) % 5 + 1},Total,model,{'CN' if i % 2 else 'DE'}")
    p = tmp_path / "r.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def _call(*args):
    from django.core.management import call_command

    out = io.StringIO()
    call_command("agreement", *[str(a) for a in args], stdout=out)
    return out.getvalue()


def test_command_json_and_table(django_ready, csv_file):
    rep = json.loads(_call(csv_file, "--by", "country", "--bootstrap", "50", "--level", "ordinal"))
    f = rep["fields"]["Total"]
    assert f["humans_vs_humans"]["krippendorff_alpha"]["value"] is not None
    assert "judge" in f["judges_vs_humans"] and set(f["strata"]["country"]) == {"CN", "DE"}
    txt = _call(
        csv_file, "--format", "table", "--bootstrap", "0", "--metric", "pearson", "--metric", "krippendorff_alpha"
    )
    assert "krippendorff_alpha" in txt and "field Total" in txt


def test_command_jsonl(django_ready, tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(
        "\n".join(json.dumps({"item": i, "rater": r, "value": (i * (r + 1)) % 4}) for i in range(12) for r in range(3))
    )
    rep = json.loads(_call(p, "--bootstrap", "0"))
    assert rep["fields"]["value"]["n_items"] == 12


def test_command_errors(django_ready, tmp_path, csv_file):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="cannot read"):
        _call(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("item,value\n1,2\n")
    with pytest.raises(CommandError, match="missing required column"):
        _call(bad)
    nn = tmp_path / "nn.csv"
    nn.write_text("item,rater,value\n1,a,2\n1,b,3\n2,a,oops\n")
    with pytest.raises(CommandError, match="line 4"):
        _call(nn, "--level", "interval")
    j = tmp_path / "x.jsonl"
    j.write_text('{"item": 1, "rater": "a", "value": 1}\n{broken\n')
    with pytest.raises(CommandError, match="line 2"):
        _call(j)
    with pytest.raises(CommandError, match="stratum"):
        _call(csv_file, "--by", "nowhere")


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_command_krippendorff_worked_example(django_ready, tmp_path, level):
    """``agreement FILE --metric krippendorff_alpha --level L`` on Krippendorff's 2011 worked
    example: the published value (3 decimals) and the ``krippendorff`` package (the pair A-B
    does not use category 5; this used to raise IndexError)."""
    import krippendorff

    from tests.hvstats.kripp2011 import KRIPP, PUBLISHED, write_csv

    p = write_csv(tmp_path / "kripp2011.csv")
    ref = krippendorff.alpha(reliability_data=KRIPP.T, level_of_measurement=level)
    rep = json.loads(_call(p, "--metric", "krippendorff_alpha", "--level", level, "--bootstrap", "100"))
    a = rep["fields"]["value"]["humans_vs_humans"]["krippendorff_alpha"]
    assert round(a["value"], 3) == PUBLISHED[level]
    assert a["value"] == pytest.approx(ref, abs=1e-12)
    assert a["n_items"] == 11 and a["ci"] is not None
    txt = _call(p, "--metric", "krippendorff_alpha", "--level", level, "--format", "table", "--bootstrap", "0")
    assert f"krippendorff_alpha       {PUBLISHED[level]:.3f}" in txt


def test_command_alpha_only_with_a_judge(django_ready, csv_file):
    """Only alpha asked for, a judge present, numeric level: no ceiling metrics are
    reported (this used to raise KeyError looking up the judge's correlation table)."""
    for level in ("ordinal", "interval", "ratio", "nominal"):
        rep = json.loads(_call(csv_file, "--metric", "krippendorff_alpha", "--level", level, "--bootstrap", "20"))
        f = rep["fields"]["Total"]
        assert f["humans_vs_humans"]["krippendorff_alpha"]["value"] is not None
        assert f["humans_vs_humans"]["leave_one_rater_out"] == {}
        assert f["judges_vs_humans"]["judge"] == {}


@pytest.fixture
def verdict_file(tmp_path):
    """3 humans on 40 items (one human on 25 only), 20 judge-only items; judge ``gpt``
    (rater_kind model) and ``heuristic`` (a human-kind rater named with --judge); a 1-5
    ``score`` and a yes/no ``ok`` field."""
    import numpy as np

    rng = np.random.default_rng(7)
    rows = []
    for i in range(60):
        t = int(rng.integers(1, 6))
        for h in range(3):
            if i < 40 and (h < 2 or i < 25):
                v = int(np.clip(t + rng.integers(-1, 2), 1, 5))
                rows.append({"item": f"i{i}", "rater": f"h{h}", "value": v, "field": "score", "rater_kind": "human"})
                ok = "yes" if (t > 3) != (rng.random() < 0.1) else "no"
                rows.append({"item": f"i{i}", "rater": f"h{h}", "value": ok, "field": "ok", "rater_kind": "human"})
        for j, noise in (("gpt", 0.2), ("heuristic", 0.5)):
            v = t if rng.random() > noise else int(rng.integers(1, 6))
            rows.append(
                {
                    "item": f"i{i}",
                    "rater": j,
                    "value": v,
                    "field": "score",
                    "rater_kind": "model" if j == "gpt" else "human",
                }
            )
            rows.append(
                {
                    "item": f"i{i}",
                    "rater": j,
                    "value": "yes" if v > 3 else "no",
                    "field": "ok",
                    "rater_kind": "model" if j == "gpt" else "human",
                }
            )
    p = tmp_path / "v.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows))
    return p, rows


def test_command_alt_test_and_ppi_contract(django_ready, verdict_file):
    """Issue 11 point 6: ``--format json`` writes ``alt_test`` and ``ppi`` per judge and field."""
    import numpy as np
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    from hvstats import alt_test

    p, rows = verdict_file
    rep = json.loads(_call(p, "--bootstrap", "0", "--epsilon", "0.15", "--judge", "gpt", "--judge", "heuristic"))
    assert rep["settings"]["epsilon"] == 0.15
    for field in ("score", "ok"):
        jv = rep["fields"][field]["judges_vs_humans"]
        assert set(jv) == {"gpt", "heuristic"}
        for jd in jv.values():
            a = jd["alt_test"]
            assert {"winning_rate", "advantage_probability", "passed", "epsilon", "scoring", "per_human"} <= set(a)
            assert a["epsilon"] == 0.15 and a["scoring"] == ("accuracy" if field == "ok" else "neg_rmse")
            assert set(a["per_human"]) == {"h0", "h1"} and a["skipped_humans"] == {"h2": 25}
            assert all({"items", "p_value", "rejected"} <= set(d) for d in a["per_human"].values())
            pp = jd["ppi"]
            assert {
                "estimate",
                "ci",
                "classical_estimate",
                "classical_ci",
                "n_labeled",
                "n_unlabeled",
                "lambda",
            } <= set(pp)
            assert pp["n_labeled"] == 40 and pp["n_unlabeled"] == 20 and len(pp["ci"]) == 2
    # the numbers: the stats functions on the same matrix / ppi-python on the same vectors
    hum = {f"h{h}": {} for h in range(3)}
    judge: dict[str, float] = {}
    for r in rows:
        if r["field"] == "score":
            (judge if r["rater"] == "gpt" else hum.get(r["rater"], {}))[r["item"]] = float(r["value"])
    items = [f"i{i}" for i in range(60)]
    H = np.array([[hum[h].get(i, np.nan) for h in hum] for i in items])
    y = np.array([judge[i] for i in items])
    a = rep["fields"]["score"]["judges_vs_humans"]["gpt"]["alt_test"]
    want = alt_test(H, y, list(hum), scoring="neg_rmse", epsilon=0.15)
    assert a["winning_rate"] == want["winning_rate"] and a["advantage_probability"] == want["advantage_probability"]
    Y = np.nanmean(H[:40], axis=1)
    pp = rep["fields"]["score"]["judges_vs_humans"]["gpt"]["ppi"]
    # 40 labelled items, fewer than 100: lambda = N / (n + N) (hvstats.ppi "Small samples")
    lam = len(y[40:]) / len(y)
    assert pp["lambda"] == pytest.approx(lam, abs=1e-15)
    assert pp["lambda_rule"] == "lambda = N/(n+N): fewer than 100 labels"
    assert pp["estimate"] == pytest.approx(
        float(np.squeeze(ppi_mean_pointestimate(Y, y[:40], y[40:], lam=lam))), abs=1e-9
    )
    lo, hi = ppi_mean_ci(Y, y[:40], y[40:], alpha=0.05, lam=lam)
    assert pp["ci"] == pytest.approx([float(np.squeeze(lo)), float(np.squeeze(hi))], abs=1e-9)
    assert rep["fields"]["ok"]["judges_vs_humans"]["gpt"]["ppi"]["positive_label"] == "yes"


def test_command_verdict_options(django_ready, verdict_file, tmp_path):
    from django.core.management.base import CommandError

    p, _ = verdict_file
    # rater_kind model is the judge by default; --level nominal scores accuracy, no PPI for 5 labels
    rep = json.loads(_call(p, "--bootstrap", "0", "--level", "nominal", "--field", "score", "--half-width", "0.3"))
    jv = rep["fields"]["score"]["judges_vs_humans"]
    assert set(jv) == {"gpt"} and jv["gpt"]["alt_test"]["scoring"] == "accuracy" and "ppi" not in jv["gpt"]
    rep = json.loads(
        _call(
            p, "--bootstrap", "0", "--level", "interval", "--field", "score", "--half-width", "0.3", "--metric", "ppi"
        )
    )
    g = rep["fields"]["score"]["judges_vs_humans"]["gpt"]
    assert "alt_test" not in g and g["ppi"]["budget"]["half_width"] == 0.3
    assert g["ppi"]["budget"]["classical_items"] >= 1
    txt = _call(
        p, "--bootstrap", "0", "--format", "table", "--half-width", "0.3", "--judge", "gpt", "--judge", "heuristic"
    )
    assert "judge gpt alt_test" in txt and "judge gpt ppi mean" in txt and "budget for half-width 0.3" in txt
    assert "human h2: skipped (25 items < 30)" in txt
    joint = json.loads(_call(p, "--bootstrap", "0", "--joint-alt-test", "--metric", "alt_test", "--judge", "gpt"))
    jt = joint["alt_test_joint"]["gpt"]
    assert (
        set(jt["environments"]) == {"score", "ok"} and jt["n_hypotheses"] == 6
    )  # h0, h1 and heuristic (a human without --judge) per field
    with pytest.raises(CommandError, match="epsilon"):
        _call(p, "--epsilon", "1.5")
    with pytest.raises(CommandError, match="half-width"):
        _call(p, "--half-width", "0")
