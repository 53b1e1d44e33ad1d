"""Every researcher page is translated (issue 25, point 3): each page a researcher works in,
rendered for a demo project with two judges (both run, so the validation tables carry judge
columns and the verdicts table), in Simplified Chinese and German, shows no English sentence. The
demo's simulated study (people and judges) gives the pages that need human ratings: the printable
report, the active sample and its round, and the import of ratings made in another tool (upload
page, preview, report).

The check compares each page's visible text (text nodes outside ``<script>``/``<style>``, plus
``placeholder``, ``title`` and ``aria-label``) with the same page in English: a text of three
or more letters that reads exactly as in English is untranslated, unless it is on the
allow-list below (proper nouns, protocol and statistic names, units) or is user data (item
ids, field names, judge, user and project names, sample and plan names). Failures of every page
are collected and printed together, so one run lists all the work left.

Two more checks (issue 35): English hidden inside a translated text (the alt-test guidance, a
generated sample name: :data:`ENGLISH_FRAGMENTS`), and, on German pages, a decimal written with a
point (German writes "0,2"; a paper's section or a model's version is a name, not a number).
Downloads are not pages and keep the paper's English."""

from __future__ import annotations

import gettext
import io
import re
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone, translation

from accounts import services as account_services
from agreement import active_pages
from annotation import annotation_import
from annotation.answers import METRICS_KEY
from annotation.models import Annotation, ImportJob, Item, Project, Rater
from benchmarks.base import STRATA_KEYS
from benchmarks.registry import PRESETS
from curation import services as curation_services
from demo.management.commands import seed_demo
from judges import configuration, execution, runs
from judges import uncertainty as judge_uncertainty
from judges.models import JudgeConfig, JudgeOutputImport, JudgeRun
from studies import plans, sampling
from studies.models import AssignmentPlan, Sample

pytestmark = pytest.mark.django_db

LANGUAGES = ("zh-hans", "de")

#: texts that read the same in every language: names of things, protocols, statistics, units
ALLOWED = {
    "Deutsch",  # the language switcher names each language in its own words
    "English",
    "HV",
    "API",
    "CSV",
    "JSON",
    "JSONL",
    "LaTeX",
    "LaTeX (booktabs)",
    "Markdown",
    "Parquet",
    "ZIP",
    "Swagger",
    "ReDoc",
    "OpenAPI",
    "Hugging Face",
    "Prolific",
    "Pearson r",
    "Spearman ρ",
    "Kendall τ-b",
    "Cohen's κ",
    "Fleiss' κ",
    "Krippendorff's α",
    "Gwet's AC1",
    "PPI",
    "PPI++",
    "SSIM",
    "ValueGround",
    "Total",
    "Admin",
    "Django",
    "Bearer",
    "Token",
    "Tokens",
    "SHA-256",
}
#: patterns of texts that are data or notation rather than words
ALLOWED_PATTERNS = [
    re.compile(p)
    for p in (
        r"^[\W\d_]*$",  # numbers, punctuation
        r"^[A-Z]?\d*[A-Za-z]?\d+(\[\*\])?$",  # q1, Q3, total-like ids
        r"^https?://",
        r"^/",  # paths
        r"^[\w.-]+\.(?:jsonl|json|csv|zip|png|jpg|md|tex|parquet)$",  # file names
        r"^[a-z_]+(?:\[\*\]|\[\d+\])?$",  # field / key identifiers (q1, total, generator)
        r"^[a-z]+\.[a-z_]+$",  # preset keys
        r"^(?:ε|ω|ρ|λ|α|κ|n|k|q|p)\b",  # statistic symbols
    )
]


#: what follows a name in a table's row label: ": " and a field identifier ("GPT-4o: total")
FIELD_AFTER_NAME = re.compile(r": [a-z_]+(?:\[\*\]|\[\d+\])?")


class _Text(HTMLParser):
    SKIP = {"script", "style", "code", "pre", "svg", "textarea"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.depth += 1
        for name, value in attrs:
            if name in ("placeholder", "title", "aria-label") and value:
                self.texts.append(value)

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if not self.depth:
            self.texts.append(data)


def visible_texts(html: str) -> set[str]:
    p = _Text()
    p.feed(html)
    return {" ".join(t.split()) for t in p.texts if t.strip()}


def kept_words(language: str) -> set[str]:
    """Words a translator kept as they are ("Status", "Name", "Plan" in German): the catalog
    holds them with a translation equal to the message, so the choice was made, not missed."""
    root = Path(__file__).resolve().parent.parent / "locale"
    catalog = gettext.translation("django", root, [translation.to_locale(language)])._catalog
    return {msgstr for msgid, msgstr in catalog.items() if isinstance(msgid, str) and msgid and msgid == msgstr}


#: English that hides inside a translated sentence (a whole-text comparison cannot see it): the
#: alt-test guidance, the agreement notes, the form labels written in notation, generated names
ENGLISH_FRAGMENTS = (
    "expert",
    "skilled",
    "crowd",
    "no human with at least",
    "too few humans",
    "whose label differs",
    "(by)",
    "E[(Y",
    "Uniform mix",
    "active sample 20",
    "sample 20",
    " of 2)",
    "judge said",
    "humans said",
    "Table 2",
)
#: a decimal written with a point: German pages write "0,2" (issue 35)
POINT_DECIMAL = re.compile(r"(?<![\w.,/:-])\d+\.\d+(?![\w.])")
#: a paper's section, table or equation, or a model's version, is a name, not a number
REFERENCE = re.compile(
    r"\b(?:Abschn|Anh|Sec|Section|App|Gl|Eq|Abb|Fig|Tabelle|Table|Gemini|GPT|Qwen|InternVL|Llama|Claude)\.?[\s-]?\S+"
)


def english_fragments(texts: set[str], data: set[str]) -> set[str]:
    """Texts of a translated page that hold one of :data:`ENGLISH_FRAGMENTS` (user data aside)."""
    return {t for t in texts if t not in data and any(f in t for f in ENGLISH_FRAGMENTS)}


def point_decimals(texts: set[str], data: set[str]) -> set[str]:
    """Texts of a German page with a decimal point instead of the comma (user data aside)."""
    return {t for t in texts if t not in data and POINT_DECIMAL.search(REFERENCE.sub("", t))}


def untranslated(english: set[str], other: set[str], data: set[str], kept: set[str] = frozenset()) -> set[str]:
    out = set()
    for t in other & english:
        if len(re.findall(r"[A-Za-z]", t)) < 3 or t in ALLOWED or t in data:
            continue
        if t in kept or t.rstrip(":") in kept:
            continue
        # a stratum or a profile written as data: "category = economy (12)", "=gpt,"
        words = re.findall(r"[A-Za-z][\w-]*", t)
        if words and all(w in data for w in words) and not re.search(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}", t):
            continue
        if any(p.search(t) for p in ALLOWED_PATTERNS):
            continue
        # a name cut to fit a chart's axis: "judge: SSIM pair-…"
        if t.endswith("…") and any(d.startswith(t[:-1]) for d in data):
            continue
        # user data followed by a count or an id: "annotator1 (2)", "judge: q3"
        if any(t.startswith(d) and not re.search(r"[A-Za-z]{3,}", t[len(d) :]) for d in data if len(d) > 2):
            continue
        # user data and a field: a verdicts row "GPT-4o: total" (a judge's short label, issue 35)
        if any(t.startswith(d) and FIELD_AFTER_NAME.fullmatch(t[len(d) :]) for d in data if len(d) > 2):
            continue
        out.add(t)
    return out


@pytest.fixture
def demo(settings, tmp_path, monkeypatch, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    monkeypatch.setattr(seed_demo, "PRESETS", {"valueground.pair_quality": PRESETS["valueground.pair_quality"]})
    call_command("seed_demo", stdout=io.StringIO())
    project = Project.objects.get(name__startswith="Demo: ")
    first = JudgeConfig.objects.get(project=project)
    configuration.create_judge_config(
        project=project,
        name="Strict SSIM judge",
        backend=first.backend,
        model_id=first.model_id,
        params={**first.params, "q3_thresholds": [0.9, 0.95]},
        created_by=project.created_by,
    )
    for config in JudgeConfig.objects.filter(project=project):
        with django_capture_on_commit_callbacks(execute=False):
            run = runs.start_judge_run(config=config)
        for start in range(0, len(run.item_ids), run.chunk_size):
            execution.execute_judge_chunk(run_id=run.id, item_ids=run.item_ids[start : start + run.chunk_size])
    sample = sampling.draw_sample(project=project, name="paper subset", strata_keys=["generator"], per_stratum=2)
    plan = plans.create_plan(sample=sample, name="two each", k=2, seed=1)
    with django_capture_on_commit_callbacks(execute=False):
        export = curation_services.start_export(
            project=project, user=project.created_by, content="annotations", format="jsonl"
        )
    account_services.create_token(user=project.created_by, name="laptop")
    # an import of items that ran (its page shows the report)
    item_import = ImportJob.objects.create(
        project=project,
        created_by=project.created_by,
        data_file="items.jsonl",
        data_format="jsonl",
        original_name="items.jsonl",
        status=ImportJob.Status.DONE,
        report={"ok": True, "items_created": 40, "lines_read": 40, "images_stored": 80, "images_reused": 0},
    )
    # imports of judge outputs, one done and one running (the judges page's table of them)
    for status, report in (("done", {"ok": True, "items": 3, "questions": ["q1"]}), ("running", {"progress": 0.4})):
        JudgeOutputImport.objects.create(
            project=project,
            data_file="judge-outputs.jsonl",
            data_format="outputs-jsonl",
            original_name="judge-outputs.jsonl",
            name="metric judge",
            status=status,
            report=report,
            heartbeat_at=timezone.now(),
        )
    return SimpleNamespace(
        project=project, sample=sample, plan=plan, export=export, item_import=item_import, **simulated_study()
    )


#: a long CSV of ratings made in another tool (the annotation import's preview and its report)
LONG_HEADER = "item,rater,field,value,nationality\n"


def long_csv(ratings: list[tuple[str, str, dict]]) -> bytes:
    lines = [
        f"{item},{rater},{field},{value},Germany\n"
        for item, rater, answers in ratings
        for field, value in answers.items()
        if value is not None
    ]
    return (LONG_HEADER + "".join(lines)).encode()


def simulated_study() -> dict:
    """The demo's simulated study (people and two judges) with what the active-sample, report and
    annotation-import pages show: the first judge's confidence per item, an active sample of two
    rounds drawn from it, ratings made in another tool imported (the import's page) and a second
    file staged (the preview, which a POST renders)."""
    study = Project.objects.get(name__startswith="Demo study: ")
    owner = study.created_by
    judge = judge_uncertainty.judge_raters(study)[0]
    for k, a in enumerate(Annotation.objects.filter(rater=judge).order_by("id")):
        a.derived = {**a.derived, METRICS_KEY: {"confidence": (0.35, 0.6, 0.8, 0.95)[k % 4]}}
        a.save(update_fields=["derived"])
    active = active_pages.draw_from_form(
        study,
        {
            "judge": judge.id,
            "source": "confidence:confidence",
            "field": "q1",
            "budget": 12,
            "tau": 0.1,
            "floor": 0.2,
            "seed": 0,
            "rounds": 2,
            "name": "unsure items",
        },
        owner,
    )
    answers = [
        (a.item.external_id, a.answers)
        for a in Annotation.objects.filter(item__project=study, rater__kind=Rater.Kind.HUMAN)
        .select_related("item")
        .order_by("id")[:6]
    ]
    imported = annotation_import.stage_annotations(
        project=study,
        user=owner,
        name="other-tool.csv",
        chunks=[long_csv([(item, "ext-1", a) for item, a in answers[:3]])],
        data_format="csv",
    )
    done = annotation_import.start_annotation_import(
        project=study,
        user=owner,
        path=imported.path,
        original_name="other-tool.csv",
        data_format="csv",
        item_key="id",
        mapping={},
        inline=True,
    )
    assert done.status == done.Status.DONE, done.report
    second = long_csv([(item, "ext-2", a) for item, a in answers[3:]])
    staged = annotation_import.stage_annotations(
        project=study, user=owner, name="second-batch.csv", chunks=[second], data_format="csv"
    )
    preview = {"token": staged.token, "format": "csv", "item_key": "id", "mapping": ""}
    return {"study": study, "active": active, "annotation_import": done, "preview": preview, "second_file": second}


def researcher_pages(demo) -> dict[str, str | tuple[str, dict]]:
    """Page name -> its address (GET), or (address, form) for a page a POST renders."""
    project, sample, plan, export = demo.project, demo.sample, demo.plan, demo.export
    p = f"/projects/{project.id}"
    s = f"/projects/{demo.study.id}"
    config = JudgeConfig.objects.filter(project=project).order_by("id").first()
    run = JudgeRun.objects.filter(config__project=project).order_by("id").first()
    item = Item.objects.filter(project=project).order_by("id").first()
    judge = demo.active.design["judge"]["rater"]
    return {
        "home": "/",
        "new project": "/projects/new/",
        "project": f"{p}/",
        "annotators": f"{p}/annotators/",
        "study design": f"{p}/design/",
        "sample": f"{p}/samples/{sample.id}/",
        "plan": f"{p}/plans/{plan.id}/",
        "dashboard": f"{p}/dashboard/",
        "items": f"{p}/items/",
        "item preview": f"{p}/items/{item.id}/preview/",
        "judges": f"{p}/judges/",
        "judge": f"{p}/judges/{config.id}/",
        "judge run": f"{p}/judges/runs/{run.id}/",
        "agreement": f"{p}/agreement/?bootstrap=50&seed=0",
        "curation": f"{p}/curation/",
        "export": f"{p}/curation/exports/{export.id}/",
        "tokens": "/account/tokens/",
        "item import": f"/imports/{demo.item_import.id}/",
        "plan delete": f"{p}/plans/{plan.id}/delete/",
        "judge delete": f"{p}/judges/{config.id}/delete/",
        "report": f"{s}/report/?bootstrap=50&seed=0",
        "active sample": f"{s}/active/?judge={judge}&source=confidence:confidence&field=q1",
        "active sample round": f"{s}/samples/{demo.active.id}/",
        "annotation import": f"{s}/annotation-imports/",
        "annotation import preview": (f"{s}/annotation-imports/preview/", demo.preview),
        "annotation import report": f"/annotation-imports/{demo.annotation_import.id}/",
    }


def user_data(project, *more) -> set[str]:
    """Names the researcher or the data chose: shown as they are in every language."""
    data = set().union(*(user_data(other) for other in more))
    data |= {project.name, project.preset.name, project.created_by.username}
    data |= set(type(project).objects.values_list("name", flat=True))  # every project's name (the home page lists them)
    judges = set(JudgeConfig.objects.filter(project=project).values_list("name", flat=True))
    data |= judges | {f"judge: {j}" for j in judges}  # a judge's rater name
    data |= set(JudgeConfig.objects.filter(project=project).values_list("short_label", flat=True))  # issue 35
    data |= set(project.items.values_list("external_id", flat=True))
    data |= {"annotator1", "annotator2", "annotator3", "researcher", "paper subset", "two each", "laptop"}
    # the simulated study's: its active sample, the files imported, the other tool's raters
    data |= {"unsure items", "other-tool.csv", "second-batch.csv", "items.jsonl", "ext-1", "ext-2"}
    data |= {"metric judge", "judge-outputs.jsonl"}  # the imports of judge outputs
    data |= set(Rater.objects.filter(kind=Rater.Kind.HUMAN).values_list("name", flat=True))
    data |= set(Sample.objects.filter(project=project).values_list("name", flat=True))
    data |= set(AssignmentPlan.objects.filter(project=project).values_list("name", flat=True))
    data |= set(JudgeConfig.objects.filter(project=project).values_list("backend", flat=True))
    # a judge's row in the verdicts table: "<judge's rater name>: <field>" (derived fields too)
    fields = {q.id for q in project.rubric_version.parsed().questions}
    for derived in Annotation.objects.filter(item__project=project).values_list("derived", flat=True)[:50]:
        fields |= {k for k in derived or {} if not k.startswith("_")}
    for judge in Rater.objects.filter(kind=Rater.Kind.MODEL, annotations__item__project=project).distinct():
        data |= {f"{judge.name}: {field}" for field in fields}
    # strata keys are identifiers the researcher writes ("country=China", the API's strata_keys)
    data |= set(STRATA_KEYS)
    for attributes in Rater.objects.filter(kind=Rater.Kind.HUMAN).values_list("attributes", flat=True):
        for key, value in (attributes or {}).items():
            data |= {str(key), str(value)}
    for item in project.items.all():
        data |= {str(v) for v in (item.data or {}).values() if isinstance(v, str | int)}
        data |= {str(v) for v in (item.meta or {}).values() if isinstance(v, str | int)}
        data |= {item.country, item.region, item.generator, item.category, item.dimension}
    return data


def test_every_researcher_page_is_translated(demo):
    project = demo.project
    data = user_data(project, demo.study)
    client = Client()
    client.force_login(project.created_by)
    failures: dict[tuple[str, str], list[str]] = {}
    kept = {language: kept_words(language) for language in LANGUAGES}
    for page, address in researcher_pages(demo).items():
        url, form = address if isinstance(address, tuple) else (address, None)
        texts = {}
        for language in ("en", *LANGUAGES):
            client.cookies["django_language"] = language
            with translation.override(language):
                r = client.post(url, form) if form is not None else client.get(url)
            if r.status_code != 200:
                failures[(page, language)] = [f"HTTP {r.status_code}"]
                break
            texts[language] = visible_texts(r.content.decode())
        for language in LANGUAGES if len(texts) == 3 else ():
            left = untranslated(texts["en"], texts[language], data, kept[language])
            left |= english_fragments(texts[language], data)
            if language == "de":
                left |= {f"decimal point: {t}" for t in point_decimals(texts[language], data)}
            if left:
                failures[(page, language)] = sorted(left)
    found = sorted(f"{page} [{lang}]: {t!r}" for (page, lang), ts in failures.items() for t in ts)
    assert not found, f"{len(found)} untranslated texts:\n" + "\n".join(found)


def test_the_check_reports_an_english_sentence_and_lets_names_data_and_kept_words_pass():
    """The guard of the test above: it can fail."""
    english = visible_texts(
        "<h1>Judges</h1><p>Run the judge on every item</p><p>category = economy (12)</p>"
        '<p>Status</p><input placeholder="stratum, e.g. country=China"><code>temperature</code><p>Spearman ρ</p>'
    )
    german = visible_texts(
        "<h1>Modell-Judges</h1><p>Run the judge on every item</p><p>category = economy (12)</p>"
        '<p>Status</p><input placeholder="stratum, e.g. country=China"><code>temperature</code><p>Spearman ρ</p>'
    )
    left = untranslated(english, german, data={"economy", *STRATA_KEYS}, kept={"Status"})
    assert left == {"Run the judge on every item", "stratum, e.g. country=China"}


def test_the_check_finds_english_inside_a_translated_text_and_a_german_decimal_point():
    """The guards added for issue 35: a whole-text comparison misses English inside a translated
    sentence and numbers written with the point; these two catch them, and let names pass."""
    german = visible_texts(
        "<p>Empfehlung des Papers: 0.2 expert, 0.15 skilled</p><p>Pro Stratum (by)</p>"
        "<p>Abschn. 4.2 und Qwen2.5-VL</p><p>0,82 [0,75; 0,88]</p><p>0.82</p>"
    )
    assert english_fragments(german, data=set()) == {
        "Empfehlung des Papers: 0.2 expert, 0.15 skilled",
        "Pro Stratum (by)",
    }
    assert point_decimals(german, data=set()) == {"Empfehlung des Papers: 0.2 expert, 0.15 skilled", "0.82"}
    assert point_decimals({"0.82"}, data={"0.82"}) == set()  # user data shown as it is
