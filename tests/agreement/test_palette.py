"""Charts of the agreement report read the same with every common colour vision: the heatmap's
diverging scale is blue-orange (Okabe-Ito), not red-green, checked by simulating protanopia,
deuteranopia and tritanopia (Machado et al. 2009, severity 1) and requiring the two ends to stay far
apart in CIELAB; axis labels are cut to fit the chart and the tick labels never reach the rotated
y label; long rater names in the heatmap's head are cut, whole in their title. The report job's
part shows its percentage while it runs."""

from __future__ import annotations

import colorsys
import math
import random
import re
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from agreement import presentation
from agreement.models import AgreementReport
from annotation import importing
from annotation.models import Item
from tests.annotation.factories import jsonl, make_project, make_user

from .test_platform_report import annotate_all, story_answers, story_records

# linear-RGB simulation matrices, Machado, Oliveira & Fernandes (2009), severity 1.0
CVD = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}
#: CIELAB distance the two ends of the scale keep under every simulation (about 2 is "just noticeable")
MIN_DELTA_E = 40.0


def parse(colour: str) -> tuple[float, float, float]:
    m = re.fullmatch(r"rgb\((\d+), (\d+), (\d+)\)", colour)
    if m:
        return tuple(float(c) for c in m.groups())
    m = re.fullmatch(r"hsl\((\d+), (\d+)%, (\d+)%\)", colour)
    assert m, colour
    h, s, lum = (int(c) for c in m.groups())
    r, g, b = colorsys.hls_to_rgb(h / 360, lum / 100, s / 100)
    return r * 255, g * 255, b * 255


def to_linear(c: float) -> float:
    c /= 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def from_linear(c: float) -> float:
    c = min(max(c, 0.0), 1.0)
    return 255 * (12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055)


def simulate(rgb, matrix) -> tuple[float, float, float]:
    lin = [to_linear(c) for c in rgb]
    return tuple(from_linear(sum(matrix[i][j] * lin[j] for j in range(3))) for i in range(3))


def lab(rgb) -> tuple[float, float, float]:
    r, g, b = (to_linear(c) for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def worst_delta_e(a: str, b: str) -> float:
    """The smallest CIELAB distance between two colours, as seen normally and with each deficiency."""
    ra, rb = parse(a), parse(b)
    seen = [(ra, rb)] + [(simulate(ra, m), simulate(rb, m)) for m in CVD.values()]
    return min(math.dist(lab(x), lab(y)) for x, y in seen)


def hue(colour: str) -> float:
    r, g, b = (c / 255 for c in parse(colour))
    return colorsys.rgb_to_hls(r, g, b)[0] * 360


def test_the_checker_fails_the_old_red_green_scale():
    """The old ends (hsl 5° red, hsl 140° green) merge for deuteranopes: the check must say so."""
    assert worst_delta_e("hsl(140, 55%, 52%)", "hsl(5, 70%, 57%)") < MIN_DELTA_E


def test_the_heatmap_ends_stay_apart_with_every_colour_vision():
    best, worst = presentation.colour(1.0), presentation.colour(-1.0)
    assert worst_delta_e(best, worst) >= MIN_DELTA_E
    # and the halfway shades still differ from each other and from the neutral middle
    assert worst_delta_e(presentation.colour(0.5), presentation.colour(-0.5)) >= MIN_DELTA_E / 2
    assert presentation.colour(0.0) == "rgb(255, 255, 255)"


def test_no_pure_red_green_pair():
    reds = lambda h: h < 20 or h > 340  # noqa: E731
    greens = lambda h: 90 <= h <= 160  # noqa: E731
    ends = [hue(presentation.colour(1.0)), hue(presentation.colour(-1.0))]
    assert not (any(map(reds, ends)) and any(map(greens, ends))), ends
    assert presentation.SCATTER_FILL == "#0072B2"


def test_the_scale_stays_light_enough_for_dark_numbers():
    for v in (-1.0, 1.0):
        lightness = lab(parse(presentation.colour(v)))[0]
        assert lightness >= 60, (v, lightness)  # black text on it keeps a contrast of at least 4.5


def scatter(x_label: str, y_label: str, lo: float = -0.75, hi: float = 1.0) -> str:
    points = [{"x": lo, "y": hi, "n": 3}, {"x": hi, "y": lo, "n": 1}]
    return str(presentation.scatter_svg({"points": points, "x_label": x_label, "y_label": y_label}))


def test_long_axis_labels_are_cut_with_the_whole_text_in_a_title():
    long_x = "mean human rating of the naturalness of the rewritten story " * 2
    long_y = "an ensemble of three judges with a very long descriptive name"
    svg = scatter(long_x, long_y)
    labels = re.findall(r"<text [^>]*><title>([^<]*)</title>([^<]*)</text>", svg)
    assert len(labels) == 2
    (x_full, x_shown), (y_full, y_shown) = labels
    assert x_full == long_x and x_shown.endswith("…") and len(x_shown) * presentation.LABEL_CHAR_PX <= 320 - 8
    assert y_full == long_y and y_shown.endswith("…") and len(y_shown) * presentation.LABEL_CHAR_PX <= 260 - 1.5 * 36
    short = scatter("mean human", "gpt-judge")
    assert "<title>mean human</title>mean human</text>" in short


def test_tick_labels_do_not_reach_the_rotated_y_label():
    svg = scatter("mean human", "judge", lo=-0.75, hi=1.0)
    ticks = re.findall(r'<text x="([\d.]+)" y="[\d.]+" font-size="10" text-anchor="end">([^<]*)</text>', svg)
    assert ticks and any(t == "-0.75" for _x, t in ticks)
    y_label_right = 10 + 11 / 2  # the rotated label is centred on x = 10, 11 px high
    for x, text in ticks:
        assert float(x) - len(text) * 10 * 0.6 > y_label_right, (x, text)  # 10 px digits are ~6 px wide


@pytest.fixture
def long_named(db, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    owner = make_user("owner", researcher=True)
    names = [f"annotator-with-a-rather-long-name-{i}" for i in range(3)]
    project = make_project("cqbench.story", owner=owner, annotators=[make_user(n) for n in names], k=3)
    assert importing.import_items(project=project, data=jsonl(story_records(6)), data_format="jsonl").ok
    rng = random.Random(2)
    quality = {it.id: 1 + k % 5 for k, it in enumerate(Item.objects.filter(project=project).order_by("id"))}
    annotate_all(project, lambda item, rater: story_answers(rng, quality[item.id]))
    return project, owner, names


def test_heatmap_heads_are_cut_and_written_upwards(client, long_named):
    project, owner, names = long_named
    client.force_login(owner)
    r = client.get(reverse("agreement_report", args=[project.id]), {"field": "naturalness", "bootstrap": 0})
    html = r.content.decode()
    assert r.status_code == 200 and 'data-testid="heatmap"' in html
    for name in names:
        assert f'<th class="col" scope="col" title="{name}"><span>{name[:17]}…</span></th>' in html
        assert f'<th scope="row" title="{name}">{name[:23]}…</th>' in html
    # the page's styles live in static/report.css (issue 25), linked from the page
    assert "report.css" in html
    css = (Path(__file__).resolve().parents[2] / "static" / "report.css").read_text()
    assert ".heat th.col > span { display:inline-block; writing-mode:vertical-rl;" in css
    legend = re.search(r'data-testid="heat-legend">(.*?)</p>', html).group(1)
    assert "rgb(" in legend and "hsl(" not in html.split('data-testid="heatmap"')[1].split("</table>")[0]


def test_a_running_report_shows_its_percentage(client, long_named):
    project, owner, _names = long_named
    job = AgreementReport.objects.create(
        project=project, status="running", progress=0.375, heartbeat_at=timezone.now(), attempts=1
    )
    client.force_login(owner)
    r = client.get(reverse("agreement_job", args=[project.id, job.id]), headers={"HX-Request": "true"})
    html = r.content.decode()
    assert 'aria-valuenow="38"' in html and 'data-testid="agreement-percent">38%<' in html
    assert 'hx-trigger="every 1s"' in html
