"""The BLEnD-Vis paper's wording, verbatim where the declaration says so: annotator instructions and
their translations, and the judge prompts. Kept apart so the declaration in ``__init__.py`` reads
on one screen."""

from __future__ import annotations

from typing import Any

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

TEMPLATE_INSTRUCTIONS = """\
Evaluate the automatically generated rephrased question template for semantic fidelity and clarity against the original BLEnD SAQ template. The goal is to verify if the rephrased question accurately inverted the original query while maintaining clarity.

Mark 'Good' if the rephrased template asks for the region given the entity ({answer}) and keeps the original intent. Mark 'Bad' for semantic misalignment (e.g., the rephrasing fails to capture the specific nuance of the original question, such as focusing only on celebration rather than family association or religious nature) or grammatical issues (grammatically awkward structures). Bad templates are corrected by the research team, not dropped: a comment helps the correction."""

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
