"""BLEnD-Vis validation (blend-vis.txt, App. D.1 rephrased templates, App. D.2 image QA, App. E)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from stats import majority_vote
from stats.tables import Cell, Row, Table
from stats.validation import ValidationInput, share

from .base import Preset, StudyDesign
from .demo_images import draw_image

# --------------------------------------------------------------------------- image validation
IMAGE_PROTOCOL = (
    "BLEnD-Vis (blend-vis.txt), App. D.2 Sampled Quality Assurance for Generated Images and App. E.2. "
    "A random, stratified 10% sample (500 of 4,916 Gemini 2.5 Flash Image images) is evaluated by "
    "three independent annotators, given the entity, the region and the image placeholder: G = the "
    "image successfully conveys the intended concept; B = it fails to, with a required brief reason "
    "and a failure category. Decided by a 2/3 majority vote; reported 27/500 (5.40%) Bad."
)

# App. D.2, verbatim, except the fourth criterion: the paper lists three, and its examples
# (App. E.2, Figs. 5-7) also use "Inaccurate Regional Representation". Where it comes from is
# a note for researchers (this comment), not for annotators (issue 14).
IMAGE_INSTRUCTIONS = """\
Annotators were provided with a detailed protocol to determine if a generated image serves as a plausible and recognisable visual representation of a specific cultural concept. For each image, annotators were given three key pieces of context: the specific 'entity' (e.g., "spicy potatoes"), the 'region' (e.g., "Spain"), and the general category or 'image_placeholder' (e.g., "this food").

The core instructions were as follows:

Mark as 'G' (Good) if: The image successfully conveys the intended concept. The guiding principle was whether someone familiar with the region's cultural context would likely understand that the image represents the intended 'entity'. Images were marked 'G' even with minor flaws, such as:
- Slightly unusual art styles (e.g., painterly or illustrative), as long as the subject was identifiable.
- Minor visual artefacts or imperfections (e.g., odd textures, background glitches).
- Representations that might seem generic in isolation but were appropriate within the given cultural context.

Mark as 'B' (Bad) if: The image fails to sufficiently represent or convey the core concept. Annotators were required to provide a brief reason for their judgment. The primary criteria for a 'B' rating were:
- Clearly Wrong Subject: The image depicts something fundamentally different from the 'entity'.
- Misleading or Ambiguous Representation: The image is so generic, abstract, or poorly rendered that it fails to represent the 'entity', even with the provided context.
- Unusably Distorted: The image has such severe visual artefacts that the main subject is unrecognisable or nonsensical.
- Inaccurate Regional Representation: The image is too generic and does not accurately reflect the visual characteristics of the actual entity in the region.

Annotators were also encouraged to use image search engines to verify concepts with which they were unfamiliar, ensuring a high degree of accuracy in their judgments."""

IMAGE_ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "image", "type": "image", "label": "Generated image"},
    {"name": "entity", "type": "text", "label": "Entity"},
    {"name": "placeholder", "type": "text", "label": "Image placeholder"},
    {"name": "question", "type": "text", "required": False, "label": "Original question"},
]

# Translations for annotators who read Chinese or German (issue 14). The English above is the
# paper's wording and stays canonical; judges and the stored ids, values and rules read it alone.
IMAGE_INSTRUCTIONS_ZH_HANS = """\
标注者会拿到一份详细的规程，用来判断一张生成的图像能否作为某个特定文化概念的合理且可辨认的视觉呈现。对于每张图像，标注者会得到三项关键背景信息：具体的“实体”（entity，例如“辣土豆”）、“地区”（region，例如“西班牙”），以及一般类别或“图像占位词”（image_placeholder，例如“这种食物”）。

核心说明如下：

标记为“G”（合格），如果：图像成功传达了预期的概念。指导原则是：熟悉该地区文化背景的人是否很可能看得出这张图像表现的是预期的“实体”。即使有小瑕疵，图像也标记为“G”，例如：
- 略显特别的艺术风格（例如绘画式或插画式），只要主体可以辨认。
- 轻微的视觉伪影或瑕疵（例如奇怪的纹理、背景中的小故障）。
- 单独看可能显得笼统，但放在给定文化背景中是恰当的呈现。

标记为“B”（不合格），如果：图像未能充分表现或传达核心概念。标注者必须为自己的判断给出简要理由。评为“B”的主要标准是：
- 主体明显错误：图像描绘的东西与该“实体”有根本不同。
- 误导或含糊的呈现：图像过于笼统、抽象或渲染拙劣，即使有所给的背景信息，也无法表现该“实体”。
- 失真到无法使用：图像有严重的视觉伪影，以致主体无法辨认或毫无意义。
- 地区呈现不准确：图像过于笼统，没有准确反映该实体在该地区的实际视觉特征。

我们也鼓励标注者使用图片搜索引擎核实自己不熟悉的概念，以确保判断高度准确。"""

IMAGE_INSTRUCTIONS_DE = """\
Die Annotatorinnen und Annotatoren erhielten ein ausführliches Protokoll, um zu entscheiden, ob ein generiertes Bild eine plausible und erkennbare visuelle Darstellung eines bestimmten kulturellen Konzepts ist. Zu jedem Bild erhielten sie drei wichtige Kontextangaben: die konkrete „Entität“ (entity, z. B. „scharfe Kartoffeln“), die „Region“ (region, z. B. „Spanien“) und die allgemeine Kategorie bzw. den „Bildplatzhalter“ (image_placeholder, z. B. „dieses Gericht“).

Die Kernanweisungen lauteten:

Als „G“ (Gut) markieren, wenn: Das Bild das beabsichtigte Konzept erfolgreich vermittelt. Leitender Gedanke war, ob jemand, der mit dem kulturellen Kontext der Region vertraut ist, wahrscheinlich erkennen würde, dass das Bild die beabsichtigte „Entität“ darstellt. Bilder wurden auch mit kleineren Mängeln als „G“ markiert, etwa:
- Etwas ungewöhnliche Stile (z. B. malerisch oder illustrativ), solange das Motiv erkennbar ist.
- Kleinere visuelle Artefakte oder Unvollkommenheiten (z. B. seltsame Texturen, Störungen im Hintergrund).
- Darstellungen, die für sich genommen allgemein wirken mögen, im gegebenen kulturellen Kontext aber passend sind.

Als „B“ (Schlecht) markieren, wenn: Das Bild das Kernkonzept nicht ausreichend darstellt oder vermittelt. Die Annotatorinnen und Annotatoren mussten ihr Urteil kurz begründen. Die wichtigsten Kriterien für eine Bewertung mit „B“ waren:
- Eindeutig falsches Motiv: Das Bild zeigt etwas grundlegend anderes als die „Entität“.
- Irreführende oder mehrdeutige Darstellung: Das Bild ist so allgemein, abstrakt oder schlecht gerendert, dass es die „Entität“ selbst mit dem gegebenen Kontext nicht darstellt.
- Unbrauchbar verzerrt: Das Bild hat so starke visuelle Artefakte, dass das Hauptmotiv nicht erkennbar oder sinnlos ist.
- Ungenaue regionale Darstellung: Das Bild ist zu allgemein und gibt die visuellen Merkmale der tatsächlichen Entität in der Region nicht genau wieder.

Sie wurden außerdem ermutigt, Bildersuchmaschinen zu nutzen, um Konzepte zu überprüfen, die ihnen nicht vertraut waren, damit ihre Urteile möglichst genau sind."""

IMAGE_TRANSLATIONS: dict[str, Any] = {
    "zh-hans": {
        "title": "BLEnD-Vis 图像验证",
        "instructions": IMAGE_INSTRUCTIONS_ZH_HANS,
        "fields": {"image": "生成的图像", "entity": "实体", "placeholder": "图像占位词", "question": "原始问题"},
        "questions": {
            "verdict": {
                "label": "判定",
                "prompt": "这张图像（{placeholder}）能否作为 {region} 的 {entity} 的合理且可辨认的视觉呈现？",
                "options": {
                    "G": "G（合格）：图像成功传达了预期的概念。",
                    "B": "B（不合格）：图像未能充分表现或传达核心概念。",
                },
            },
            "reason_category": {
                "label": "失败类别",
                "prompt": "如果选 B：适用哪一条标准？",
                "options": {
                    "wrong_subject": "主体明显错误：图像描绘的东西与该“实体”有根本不同。",
                    "misleading": "误导或含糊的呈现：图像过于笼统、抽象或渲染拙劣，即使有所给的背景信息，也无法表现该“实体”。",
                    "distorted": "失真到无法使用：图像有严重的视觉伪影，以致主体无法辨认或毫无意义。",
                    "regional": "地区呈现不准确：图像没有准确反映该实体在该地区的视觉特征。",
                },
            },
            "reason": {"label": "理由", "prompt": "如果选 B：请简要说明你的判断理由。"},
        },
    },
    "de": {
        "title": "BLEnD-Vis: Bildvalidierung",
        "instructions": IMAGE_INSTRUCTIONS_DE,
        "fields": {
            "image": "Generiertes Bild",
            "entity": "Entität",
            "placeholder": "Bildplatzhalter",
            "question": "Ursprüngliche Frage",
        },
        "questions": {
            "verdict": {
                "label": "Urteil",
                "prompt": "Ist dieses Bild ({placeholder}) eine plausible und erkennbare visuelle Darstellung von "
                "{entity} in {region}?",
                "options": {
                    "G": "G (Gut): Das Bild vermittelt das beabsichtigte Konzept erfolgreich.",
                    "B": "B (Schlecht): Das Bild stellt das Kernkonzept nicht ausreichend dar oder vermittelt es nicht.",
                },
            },
            "reason_category": {
                "label": "Fehlerkategorie",
                "prompt": "Falls B: Welches Kriterium trifft zu?",
                "options": {
                    "wrong_subject": "Eindeutig falsches Motiv: Das Bild zeigt etwas grundlegend anderes als die „Entität“.",
                    "misleading": "Irreführende oder mehrdeutige Darstellung: Das Bild ist so allgemein, abstrakt oder "
                    "schlecht gerendert, dass es die „Entität“ selbst mit dem gegebenen Kontext nicht darstellt.",
                    "distorted": "Unbrauchbar verzerrt: Das Bild hat so starke visuelle Artefakte, dass das Hauptmotiv "
                    "nicht erkennbar oder sinnlos ist.",
                    "regional": "Ungenaue regionale Darstellung: Das Bild gibt die visuellen Merkmale der Entität in der "
                    "Region nicht genau wieder.",
                },
            },
            "reason": {"label": "Begründung", "prompt": "Falls B: eine kurze Begründung Ihres Urteils."},
        },
    },
}

IMAGE_RUBRIC: dict[str, Any] = {
    "title": "BLEnD-Vis image validation",
    "instructions": IMAGE_INSTRUCTIONS,
    "questions": [
        {
            "id": "verdict",
            "type": "choice",
            "label": "Verdict",
            "prompt": "Does this image ({placeholder}) serve as a plausible and recognisable visual representation "
            "of {entity} in {region}?",
            "options": [
                {"value": "G", "label": "G (Good): The image successfully conveys the intended concept."},
                {
                    "value": "B",
                    "label": "B (Bad): The image fails to sufficiently represent or convey the core concept.",
                },
            ],
        },
        {
            "id": "reason_category",
            "type": "choice",
            "label": "Failure category",
            "prompt": "If B: which criterion applies?",
            "required": False,
            "required_if": "verdict == 'B'",
            "options": [
                {
                    "value": "wrong_subject",
                    "label": "Clearly Wrong Subject: The image depicts something fundamentally different from the 'entity'.",
                },
                {
                    "value": "misleading",
                    "label": "Misleading or Ambiguous Representation: The image is so generic, abstract, or poorly rendered that it fails to represent the 'entity', even with the provided context.",
                },
                {
                    "value": "distorted",
                    "label": "Unusably Distorted: The image has such severe visual artefacts that the main subject is unrecognisable or nonsensical.",
                },
                {
                    "value": "regional",
                    "label": "Inaccurate Regional Representation: The image does not accurately reflect the visual characteristics of the entity in the region.",
                },
            ],
        },
        {
            "id": "reason",
            "type": "text",
            "label": "Reason",
            "prompt": "If B: a brief reason for your judgment.",
            "required_if": "verdict == 'B'",
            "min_length": 3,
        },
    ],
    "derived": [
        {"id": "good", "label": "Good (G)", "expr": "1 if verdict == 'G' else 0"},
    ],
    "translations": IMAGE_TRANSLATIONS,
}

# (region, entity, placeholder, question)
_IMAGE_DEMO = [
    ("Spain", "patatas bravas", "this food", "What is the most popular tapas dish in Spain?"),
    ("South Korea", "kimchi jjigae", "this food", "What is the most common stew eaten at home in South Korea?"),
    ("Nigeria", "jollof rice", "this food", "What food is always served at parties in Nigeria?"),
    ("Mexico", "Day of the Dead", "this holiday", "What is the most famous family-related holiday in Mexico?"),
    ("Iran", "Tochal", "this destination", "What is the most popular winter destination in the north of Iran?"),
    ("Azerbaijan", "Qabala", "this destination", "What is the most popular mountain destination in Azerbaijan?"),
    ("Indonesia", "badminton", "this sport", "What is the most popular sport in Indonesia?"),
    ("Ethiopia", "injera", "this food", "What is the most common staple food in Ethiopia?"),
]


def image_demo_items(folder: Path) -> list[dict[str, Any]]:
    items = []
    for i, (region, entity, placeholder, question) in enumerate(_IMAGE_DEMO, start=1):
        name = draw_image(folder, f"blendvis_{i:02d}.png", entity, subtitle=f"{placeholder} - {region}")
        item: dict[str, Any] = {
            "id": f"blendvis-img-{i:02d}",
            "image": name,
            "entity": entity,
            "region": region,
            "placeholder": placeholder,
            "generator": "gemini-2.5-flash-image",
            "category": placeholder.removeprefix("this "),
        }
        if i % 4:
            item["question"] = question
        items.append(item)
    return items


# App. D.2 "Task Setup": "A random, stratified sample of 500 images (10%) was evaluated by three
# independent annotators" (also Sec. 3 Step 5); App. D: "All annotators are research assistants
# with at least an undergraduate degree". The strata are not named; no eligibility, no QC.
IMAGE_STUDY_DESIGN = StudyDesign(
    source="BLEnD-Vis (blend-vis.txt), App. D and D.2",
    k=3,
    sample_size=500,
    notes=(
        "The paper's 500 images (10% of 4,916) are a 'random, stratified' sample, without naming "
        "the strata: choose them (e.g. region, category).",
        "Annotators were research assistants with at least an undergraduate degree (no platform setting).",
    ),
)


# --------------------------------------------------------------------------- validation report
# App. D: three annotators per item, decided by a 2-of-3 majority (27/500 = 5.4% Bad images,
# 39/320 Bad templates); the Bad reasons by category (images).
REASON_LABELS = {
    "wrong_subject": "Clearly Wrong Subject",
    "misleading": "Misleading or Ambiguous Representation",
    "distorted": "Unusably Distorted",
    "regional": "Inaccurate Regional Representation",
}


def majority_table(inp: ValidationInput, key: str, title: str, unit: str) -> Table | None:
    """Good / Bad by the human majority of the derived ``good`` field, the Bad rate with its CI."""
    W = inp.wide("good", inp.humans())
    if not len(W):
        return None
    maj = majority_vote(W.to_numpy(dtype=float), min_votes=2)
    decided = maj[~np.isnan(maj)]
    bad = share(decided == 0, inp.bootstrap, inp.seed, "bad_rate")
    return Table(
        key=key,
        title=title,
        columns=("Good", "Bad", "Bad rate", f"{unit} with a majority", f"{unit} without (tie)"),
        rows=(
            Row(
                "Majority of the annotators",
                (
                    Cell(int((decided == 1).sum()), fmt="count"),
                    Cell(int((decided == 0).sum()), fmt="count"),
                    Cell.of(bad, "%"),
                    Cell(len(decided), fmt="count"),
                    Cell(int(np.isnan(maj).sum()), fmt="count"),
                ),
            ),
        ),
        caption="Each item is Good or Bad by the majority of its annotators (2 of 3); 95% bootstrap CI "
        f"of the Bad rate over {unit.lower()}. Items with a tied vote or fewer than two votes have no majority.",
        row_header="Decision",
    )


def image_validation_report(inp: ValidationInput) -> list[Table]:
    t = majority_table(inp, "blendvis-images", "Image validation: Good / Bad by 2-of-3 majority", "Images")
    if t is None:
        return []
    rows = inp.rows("reason_category")
    rows = rows[rows["rater_kind"] == "human"] if len(rows) else rows
    cats = rows["value"].astype(str).tolist() if len(rows) else []
    out = []
    for k, (value, label) in enumerate(REASON_LABELS.items()):
        sh = share([c == value for c in cats], inp.bootstrap, inp.seed + 1 + k)
        out.append(Row(label, (Cell(sum(c == value for c in cats), fmt="count"), Cell.of(sh, "%"))))
    reasons = Table(
        key="blendvis-bad-reasons",
        title="Image validation: reasons given for Bad",
        columns=("Bad judgements", "Share of Bad judgements"),
        rows=tuple(out),
        caption="Every annotator's Bad judgement with its failure category; 95% bootstrap CIs over judgements.",
        row_header="Failure category",
    )
    return [t, reasons]


def template_validation_report(inp: ValidationInput) -> list[Table]:
    t = majority_table(inp, "blendvis-templates", "Template validation: Good / Bad by 2-of-3 majority", "Templates")
    return [] if t is None else [t]


IMAGE = Preset(
    key="blendvis.image",
    name="BLEnD-Vis image validation (G/B)",
    protocol=IMAGE_PROTOCOL,
    item_fields=IMAGE_ITEM_FIELDS,
    rubric=IMAGE_RUBRIC,
    demo_items=image_demo_items,
    defaults={"k": 3},
    study_design=IMAGE_STUDY_DESIGN,
    suggested_policy={"rule": "good == 1", "aggregation": "majority"},
    validation_report=image_validation_report,
)

# --------------------------------------------------------------------------- template validation
TEMPLATE_PROTOCOL = (
    "BLEnD-Vis (blend-vis.txt), App. D.1 Rephrased Question Validation and App. E.1. Three independent "
    "annotators evaluate each automatically generated rephrased question template (Entity -> Region "
    "inversion) against the original BLEnD SAQ template for semantic fidelity and clarity: Good / Bad. "
    "A majority vote (at least 2 of 3) flagged 39 of 320 templates (12.2%) as Bad; these were "
    "manually corrected by the research team, not dropped."
)

TEMPLATE_INSTRUCTIONS = """\
Evaluate the automatically generated rephrased question template for semantic fidelity and clarity against the original BLEnD SAQ template. The goal is to verify if the rephrased question accurately inverted the original query while maintaining clarity.

Mark 'Good' if the rephrased template asks for the region given the entity ({answer}) and keeps the original intent. Mark 'Bad' for semantic misalignment (e.g., the rephrasing fails to capture the specific nuance of the original question, such as focusing only on celebration rather than family association or religious nature) or grammatical issues (grammatically awkward structures). Bad templates are corrected by the research team, not dropped: a comment helps the correction."""

TEMPLATE_ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "original_template", "type": "text", "label": "Original template"},
    {"name": "rephrased_template", "type": "text", "label": "Rephrased template"},
]

# Translations for annotators who read Chinese or German (issue 14); the English above stays canonical.
TEMPLATE_INSTRUCTIONS_ZH_HANS = """\
请对照原始的 BLEnD SAQ 模板，评估自动生成的改写问题模板的语义忠实度和清晰度。目的是核实改写后的问题是否准确地反转了原始问题，同时保持清晰。

如果改写后的模板是在给定实体（{answer}）的情况下询问地区，并保留了原始意图，请标记为“Good”（合格）。如果存在语义偏差（例如改写未能抓住原始问题的具体细微之处，比如只关注庆祝活动，而忽略了与家庭的关联或宗教性质）或语法问题（语法上别扭的结构），请标记为“Bad”（不合格）。不合格的模板会由研究团队修正，而不是被删除：写一条评论有助于修正。"""

TEMPLATE_INSTRUCTIONS_DE = """\
Bewerten Sie die automatisch erzeugte umformulierte Fragevorlage im Vergleich zur ursprünglichen BLEnD-SAQ-Vorlage hinsichtlich semantischer Treue und Klarheit. Ziel ist zu prüfen, ob die umformulierte Frage die ursprüngliche Frage korrekt umkehrt und dabei klar bleibt.

Markieren Sie „Good“ (Gut), wenn die umformulierte Vorlage bei gegebener Entität ({answer}) nach der Region fragt und die ursprüngliche Absicht beibehält. Markieren Sie „Bad“ (Schlecht) bei semantischer Abweichung (z. B. wenn die Umformulierung eine bestimmte Nuance der ursprünglichen Frage nicht erfasst, etwa nur auf das Feiern statt auf den Familienbezug oder den religiösen Charakter abzielt) oder bei grammatischen Problemen (grammatisch holprige Strukturen). Schlechte Vorlagen werden vom Forschungsteam korrigiert, nicht verworfen: Ein Kommentar hilft bei der Korrektur."""

TEMPLATE_TRANSLATIONS: dict[str, Any] = {
    "zh-hans": {
        "title": "BLEnD-Vis 改写模板验证",
        "instructions": TEMPLATE_INSTRUCTIONS_ZH_HANS,
        "fields": {"original_template": "原始模板", "rephrased_template": "改写后的模板"},
        "questions": {
            "verdict": {
                "label": "判定",
                "prompt": "改写后的问题是否准确地反转了原始问题，同时保持清晰？",
                "options": {"Good": "Good（合格）", "Bad": "Bad（不合格：语义偏差或语法问题）"},
            },
            "comment": {"label": "评论", "prompt": "选填：哪里有问题，或给出修正后的改写。"},
        },
    },
    "de": {
        "title": "BLEnD-Vis: Validierung der umformulierten Vorlagen",
        "instructions": TEMPLATE_INSTRUCTIONS_DE,
        "fields": {"original_template": "Ursprüngliche Vorlage", "rephrased_template": "Umformulierte Vorlage"},
        "questions": {
            "verdict": {
                "label": "Urteil",
                "prompt": "Kehrt die umformulierte Frage die ursprüngliche Frage korrekt um und bleibt dabei klar?",
                "options": {"Good": "Good (Gut)", "Bad": "Bad (semantische Abweichung oder grammatische Probleme)"},
            },
            "comment": {
                "label": "Kommentar",
                "prompt": "Optional: Was ist falsch, oder eine korrigierte Umformulierung.",
            },
        },
    },
}

TEMPLATE_RUBRIC: dict[str, Any] = {
    "title": "BLEnD-Vis rephrased template validation",
    "instructions": TEMPLATE_INSTRUCTIONS,
    "questions": [
        {
            "id": "verdict",
            "type": "choice",
            "label": "Verdict",
            "prompt": "Does the rephrased question accurately invert the original query while maintaining clarity?",
            "options": [
                {"value": "Good", "label": "Good"},
                {"value": "Bad", "label": "Bad (semantic misalignment or grammatical issues)"},
            ],
        },
        {
            "id": "comment",
            "type": "text",
            "label": "Comment",
            "prompt": "Optional: what is wrong, or a corrected rephrasing.",
            "required": False,
        },
    ],
    "derived": [
        {"id": "good", "label": "Good", "expr": "1 if verdict == 'Good' else 0"},
    ],
    "translations": TEMPLATE_TRANSLATIONS,
}

# (original, rephrased, category)
_TEMPLATE_DEMO = [
    ("What are the family-related holidays in {country}?", "During which occasion is {answer} celebrated?", "holidays"),
    (
        "What are the family-related holidays in {country}?",
        "In which country/region is {answer} the holiday most associated with family?",
        "holidays",
    ),
    (
        "What is the most famous university in {country} known for its sports team?",
        "At which university is {answer} known for its sports team?",
        "education",
    ),
    (
        "What is the most famous university in {country} known for its sports team?",
        "{answer} is the most famous university known for its sports team in which country/region?",
        "education",
    ),
    (
        "What is the most famous religious holiday in {country}?",
        "In which country/region is {answer} the most famous religious holiday?",
        "holidays",
    ),
    (
        "What is the most popular breakfast food in {country}?",
        "In which country/region is {answer} the most popular breakfast food?",
        "food",
    ),
    (
        "What is the most popular sport in {country}?",
        "In which country/region is {answer} the most popular sport?",
        "sport",
    ),
    (
        "What is the most common snack for children in {country}?",
        "Which children snack {answer} in which country is common?",
        "food",
    ),
]


def template_demo_items(folder: Path) -> list[dict[str, Any]]:
    return [
        {"id": f"blendvis-tpl-{i:02d}", "original_template": o, "rephrased_template": r, "category": c}
        for i, (o, r, c) in enumerate(_TEMPLATE_DEMO, start=1)
    ]


# App. D.1: "Three independent annotators evaluated the 320 automatically generated rephrased
# question templates" - every template, no sample; no eligibility, no QC.
TEMPLATE_STUDY_DESIGN = StudyDesign(
    source="BLEnD-Vis (blend-vis.txt), App. D and D.1",
    k=3,
    notes=(
        "The paper validated all 320 rephrased templates (no sample).",
        "Annotators were research assistants with at least an undergraduate degree (no platform setting).",
    ),
)


TEMPLATE = Preset(
    key="blendvis.template",
    name="BLEnD-Vis rephrased template validation",
    protocol=TEMPLATE_PROTOCOL,
    item_fields=TEMPLATE_ITEM_FIELDS,
    rubric=TEMPLATE_RUBRIC,
    demo_items=template_demo_items,
    defaults={"k": 3},
    study_design=TEMPLATE_STUDY_DESIGN,
    # Bad templates were corrected by the team, not dropped.
    suggested_policy={"rule": "good == 1", "aggregation": "majority", "revise_if": "good == 0"},
    validation_report=template_validation_report,
)

PRESETS = [IMAGE, TEMPLATE]
