"""The CULTIVate paper's wording, verbatim where the declaration says so: annotator instructions and
their translations, and the judge prompts. Kept apart so the declaration in ``__init__.py`` reads
on one screen."""

from __future__ import annotations

from typing import Any

FAITH_INSTRUCTIONS = """\
We conduct a human study to validate our metrics for Faithfulness (i.e., Alignment, Hallucination, and Exaggeration) and realism (whether image looks realistic).

The image was generated with the prompt "A photorealistic photo of {activity} in {country}." (the activity and country are shown with the image). Rate it for that country: where the wording below says "your country", the form names the image's country.

We collected 3 ground-truth (GT) labels using a 5-point Likert scale: GT-FAITH (main gold standard) measures overall faithfulness according to annotators - How well does this image show {activity} in your country?; GT-EXAG measures image exaggeration - How exaggerated is the image?; GT-HAL measures hallucinations - How incorrect is the image? (activity/culture).

Scale anchors (mind the direction: 5 is best for faithfulness and realism, but worst for exaggeration and hallucination):
- Faithfulness (ALIGN): 1 = Not well at all (completely wrong or unrelated); 2 = Slightly relevant; 3 = Somewhat accurate; 4 = Mostly accurate; 5 = Exactly as expected for this country.
- Hallucination (HAL), whether an image contains incorrect elements with respect to the mentioned activity and country: 1 = Not at all. All elements seem appropriate.; 2 = Slightly. One minor element seems foreign.; 3 = Somewhat. A few elements feel unusual.; 4 = Mostly. Many elements appear incorrect or from another culture.; 5 = Strongly. The image is completely wrong, most elements are wrong, the activity is wrong, or the scene belongs to another country.
- Exaggeration (EXAG), how exaggerated an image is in terms of cultural elements (e.g., attire, objects, background, art/design): 1 = Appropriate and balanced.; 2 = Slightly decorative but within cultural norms.; 3 = Several features feel idealized or overly emphasized.; 4 = Many elements feel exaggerated and unrealistic.; 5 = Strongly stereotypical, misleading, or culturally irrelevant.
- Realism (GT-REALISM): How realistic does this image look? 1 = Not realistic at all (clearly synthetic or broken) ... 5 = Completely realistic (could be a real photo).

Quality control: the form may contain attention checks (e.g., selecting a pre-mentioned number) and repeated questions to test consistency, and a free-text rationale describing the errors in the image is required."""


# CULTIVate / AHEaD, App. A, Tables 29-31 (MLLM-as-a-Judge prompts), verbatim: one prompt per
# question (ALIGN -> faith, HAL, EXAG). The paper's {{prompt}} / {{country}} are the item's T2I
# prompt and country.
_SCORE_FORMAT = (
    "Respond with ONLY the score in the exact format below:\n\nscore is < num >\n\n"
    "Do not include any other text, explanation, or formatting."
)
JUDGE_ALIGN = {
    "system": (
        "You are a helpful assistant scoring how well an image depicts an activity as it would typically "
        "appear in the specified country. Provide a rating from 1 to 5 using the guidelines below. Only output "
        "the score in the required format.\n\nScoring Scale:\n\n- 1 = Not well at all (completely wrong or "
        "unrelated)\n- 2 = Slightly relevant\n- 3 = Somewhat accurate\n- 4 = Mostly accurate\n- 5 = Exactly as "
        "expected for this country\n\nTask:\n\nPROMPT: {prompt}\n\nCOUNTRY: {country}"
    ),
    "user": _SCORE_FORMAT,
}
JUDGE_HAL = {
    "system": (
        "You are a helpful assistant scoring whether an image contains incorrect elements with respect to the "
        "mentioned activity and country. Rate on a scale from 1 to 5 using the rules below. Only output the "
        "score in the required format.\n\nScoring Scale:\n\n- 1 = Not at all. All elements seem appropriate.\n"
        "- 2 = Slightly. One minor element seems foreign.\n- 3 = Somewhat. A few elements feel unusual.\n"
        "- 4 = Mostly. Many elements appear incorrect or from another culture.\n- 5 = Strongly. The image is "
        "completely wrong, most elements are wrong, the activity is wrong, or the scene belongs to another "
        "country.\n\nTask:\n\nPROMPT: {prompt}\n\nCOUNTRY: {country}"
    ),
    "user": _SCORE_FORMAT,
}
JUDGE_EXAG = {
    "system": (
        "You are a helpful assistant scoring how exaggerated an image is in terms of cultural elements (e.g., "
        "attire, objects, background, art/design). Rate on a scale from 1 to 5 using the rules below. Only "
        "output the score in the required format.\n\nScoring Scale:\n\n- 1 = Appropriate and balanced.\n"
        "- 2 = Slightly decorative but within cultural norms.\n- 3 = Several features feel idealized or overly "
        "emphasized.\n- 4 = Many elements feel exaggerated and unrealistic.\n- 5 = Strongly stereotypical, "
        "misleading, or culturally irrelevant.\n\nTask:\n\nPROMPT: {prompt}\n\nCOUNTRY: {country}"
    ),
    "user": _SCORE_FORMAT,
}

DESC_INSTRUCTIONS = """\
We also evaluate reference descriptor quality through human evaluation. We measure precision by having annotators mark each descriptor as correct or incorrect. It is infeasible to compute recall because no ground-truth descriptor set exists. Instead, we estimate recall through two measures: (1) annotators rated overall descriptor quality on a 5-point Likert scale, and (2) annotators identified missing descriptors in free-text responses.

For each descriptor of the activity: mark it correct (1) if it is something an image of this activity in this country could correctly show, incorrect (0) otherwise. Then rate how well the whole list covers the activity, and list any missing descriptors."""


# Translations of the rubrics for annotators who read Chinese or German. The English above is the
# paper's wording and stays canonical; judges and the stored rubric ids, values and rules read it
# alone. Prompts name the same {fields}; the statistic names (GT-FAITH, ALIGN, ...) stay as they are.
FAITH_INSTRUCTIONS_ZH_HANS = """\
我们开展了一项人工研究，以验证我们关于忠实度（即一致性 Alignment、幻觉 Hallucination 和夸张 Exaggeration）和真实感（图像看起来是否真实）的指标。

该图像由提示词 "A photorealistic photo of {activity} in {country}."（“一张{country}的{activity}的照片级写实照片。”）生成（活动和国家随图像一同显示）。请针对该国家评分：下文凡是说“你的国家”之处，表单都会写明该图像所对应的国家。

我们使用 5 级 Likert 量表收集了 3 个真值（GT）标签：GT-FAITH（主要金标准）衡量标注者眼中的整体忠实度——这张图像在多大程度上展示了你的国家的 {activity}？；GT-EXAG 衡量图像的夸张程度——这张图像有多夸张？；GT-HAL 衡量幻觉——这张图像有多不正确？（活动/文化）。

量表锚点（注意方向：对忠实度和真实感而言 5 分最好，但对夸张和幻觉而言 5 分最差）：
- 忠实度（ALIGN）：1 = 完全不符合（完全错误或毫不相关）；2 = 略有相关；3 = 有些准确；4 = 大体准确；5 = 完全符合对该国家的预期。
- 幻觉（HAL），即图像是否包含与所述活动和国家不符的错误元素：1 = 完全没有。所有元素看起来都恰当。；2 = 轻微。有一个次要元素显得格格不入。；3 = 有一些。有几个元素让人感觉不寻常。；4 = 大部分。许多元素看起来是错误的或来自另一种文化。；5 = 严重。图像完全错误：大多数元素是错的、活动是错的，或场景属于另一个国家。
- 夸张（EXAG），即图像在文化元素（例如服饰、物品、背景、艺术/设计）方面有多夸张：1 = 恰当且平衡。；2 = 略带装饰性，但仍在文化常规之内。；3 = 若干特征显得理想化或被过度强调。；4 = 许多元素显得夸张且不真实。；5 = 严重刻板化、具有误导性或与文化无关。
- 真实感（GT-REALISM）：这张图像看起来有多真实？1 = 完全不真实（明显是合成的或有破损）……5 = 完全真实（可能是一张真实的照片）。

质量控制：表单中可能包含注意力检查（例如选择一个事先提到的数字）和用于检验一致性的重复问题，并且必须填写一段自由文本理由，描述图像中的错误。"""

FAITH_INSTRUCTIONS_DE = """\
Wir führen eine Studie mit menschlichen Annotierenden durch, um unsere Metriken für Treue (d. h. Alignment, Halluzination und Übertreibung) und Realismus (ob das Bild realistisch aussieht) zu validieren.

Das Bild wurde mit dem Prompt "A photorealistic photo of {activity} in {country}." („Ein fotorealistisches Foto von {activity} in {country}.“) erzeugt (Aktivität und Land werden mit dem Bild angezeigt). Bewerten Sie es für dieses Land: Wo im folgenden Text „Ihr Land“ steht, nennt das Formular das Land des Bildes.

Wir haben mit einer 5-stufigen Likert-Skala 3 Ground-Truth-Labels (GT) erhoben: GT-FAITH (wichtigster Goldstandard) misst die Gesamttreue nach Einschätzung der Annotierenden – Wie gut zeigt dieses Bild {activity} in Ihrem Land?; GT-EXAG misst die Übertreibung im Bild – Wie übertrieben ist das Bild?; GT-HAL misst Halluzinationen – Wie fehlerhaft ist das Bild? (Aktivität/Kultur).

Skalenanker (achten Sie auf die Richtung: 5 ist bei Treue und Realismus am besten, bei Übertreibung und Halluzination aber am schlechtesten):
- Treue (ALIGN): 1 = Überhaupt nicht gut (völlig falsch oder ohne Bezug); 2 = Etwas relevant; 3 = Einigermaßen zutreffend; 4 = Größtenteils zutreffend; 5 = Genau so, wie man es für dieses Land erwartet.
- Halluzination (HAL), ob ein Bild in Bezug auf die genannte Aktivität und das genannte Land falsche Elemente enthält: 1 = Überhaupt nicht. Alle Elemente wirken passend.; 2 = Leicht. Ein unbedeutendes Element wirkt fremd.; 3 = Etwas. Einige Elemente wirken ungewöhnlich.; 4 = Größtenteils. Viele Elemente wirken falsch oder stammen aus einer anderen Kultur.; 5 = Stark. Das Bild ist völlig falsch, die meisten Elemente sind falsch, die Aktivität ist falsch oder die Szene gehört in ein anderes Land.
- Übertreibung (EXAG), wie übertrieben ein Bild in Bezug auf kulturelle Elemente ist (z. B. Kleidung, Gegenstände, Hintergrund, Kunst/Design): 1 = Angemessen und ausgewogen.; 2 = Leicht dekorativ, aber im Rahmen kultureller Normen.; 3 = Mehrere Merkmale wirken idealisiert oder übermäßig betont.; 4 = Viele Elemente wirken übertrieben und unrealistisch.; 5 = Stark stereotyp, irreführend oder kulturell irrelevant.
- Realismus (GT-REALISM): Wie realistisch sieht dieses Bild aus? 1 = Überhaupt nicht realistisch (eindeutig künstlich erzeugt oder fehlerhaft) ... 5 = Vollständig realistisch (könnte ein echtes Foto sein).

Qualitätskontrolle: Das Formular kann Aufmerksamkeitstests (z. B. die Auswahl einer zuvor genannten Zahl) und wiederholte Fragen zur Prüfung der Konsistenz enthalten; eine Begründung in freiem Text, die die Fehler im Bild beschreibt, ist Pflicht."""

FAITH_TRANSLATIONS: dict[str, Any] = {
    "zh-hans": {
        "title": "CULTIVate 文化忠实度",
        "instructions": FAITH_INSTRUCTIONS_ZH_HANS,
        "fields": {"image": "生成的图像", "activity": "活动", "prompt": "文生图提示词"},
        "questions": {
            "faith": {
                "label": "GT-FAITH（忠实度）",
                "prompt": "这张图像在多大程度上展示了{country}的{activity}？",
                "help": "1 = 完全不符合（完全错误或毫不相关）……5 = 完全符合对该国家的预期。",
                "options": {
                    "1": "完全不符合（完全错误或毫不相关）",
                    "2": "略有相关",
                    "3": "有些准确",
                    "4": "大体准确",
                    "5": "完全符合对该国家的预期",
                },
            },
            "exag": {
                "label": "GT-EXAG（夸张程度）",
                "prompt": "这张图像有多夸张？",
                "help": "图像在文化元素（例如服饰、物品、背景、艺术/设计）方面有多夸张。",
                "options": {
                    "1": "恰当且平衡。",
                    "2": "略带装饰性，但仍在文化常规之内。",
                    "3": "若干特征显得理想化或被过度强调。",
                    "4": "许多元素显得夸张且不真实。",
                    "5": "严重刻板化、具有误导性或与文化无关。",
                },
            },
            "hal": {
                "label": "GT-HAL（幻觉）",
                "prompt": "这张图像有多不正确？（活动/文化）",
                "help": "图像是否包含与所述活动和国家不符的错误元素。",
                "options": {
                    "1": "完全没有。所有元素看起来都恰当。",
                    "2": "轻微。有一个次要元素显得格格不入。",
                    "3": "有一些。有几个元素让人感觉不寻常。",
                    "4": "大部分。许多元素看起来是错误的或来自另一种文化。",
                    "5": "严重。图像完全错误：大多数元素是错的、活动是错的，或场景属于另一个国家。",
                },
            },
            "realism": {
                "label": "GT-REALISM（真实感）",
                "prompt": "这张图像看起来有多真实？",
                "options": {
                    "1": "完全不真实（明显是合成的或有破损）",
                    "2": "略显真实（有明显瑕疵）",
                    "3": "有些真实",
                    "4": "大体真实（有轻微瑕疵）",
                    "5": "完全真实（可能是一张真实的照片）",
                },
            },
            "rationale": {"label": "理由", "prompt": "描述图像中的错误（必填的自由文本理由）。"},
        },
    },
    "de": {
        "title": "CULTIVate: kulturelle Treue",
        "instructions": FAITH_INSTRUCTIONS_DE,
        "fields": {"image": "Generiertes Bild", "activity": "Aktivität", "prompt": "T2I-Prompt"},
        "questions": {
            "faith": {
                "label": "GT-FAITH (Treue)",
                "prompt": "Wie gut zeigt dieses Bild {activity} in {country}?",
                "help": "1 = Überhaupt nicht gut (völlig falsch oder ohne Bezug) ... 5 = Genau so, wie man es für "
                "dieses Land erwartet.",
                "options": {
                    "1": "Überhaupt nicht gut (völlig falsch oder ohne Bezug)",
                    "2": "Etwas relevant",
                    "3": "Einigermaßen zutreffend",
                    "4": "Größtenteils zutreffend",
                    "5": "Genau so, wie man es für dieses Land erwartet",
                },
            },
            "exag": {
                "label": "GT-EXAG (Übertreibung)",
                "prompt": "Wie übertrieben ist das Bild?",
                "help": "Wie übertrieben das Bild in Bezug auf kulturelle Elemente ist (z. B. Kleidung, Gegenstände, "
                "Hintergrund, Kunst/Design).",
                "options": {
                    "1": "Angemessen und ausgewogen.",
                    "2": "Leicht dekorativ, aber im Rahmen kultureller Normen.",
                    "3": "Mehrere Merkmale wirken idealisiert oder übermäßig betont.",
                    "4": "Viele Elemente wirken übertrieben und unrealistisch.",
                    "5": "Stark stereotyp, irreführend oder kulturell irrelevant.",
                },
            },
            "hal": {
                "label": "GT-HAL (Halluzination)",
                "prompt": "Wie fehlerhaft ist das Bild? (Aktivität/Kultur)",
                "help": "Ob das Bild in Bezug auf die genannte Aktivität und das genannte Land falsche Elemente enthält.",
                "options": {
                    "1": "Überhaupt nicht. Alle Elemente wirken passend.",
                    "2": "Leicht. Ein unbedeutendes Element wirkt fremd.",
                    "3": "Etwas. Einige Elemente wirken ungewöhnlich.",
                    "4": "Größtenteils. Viele Elemente wirken falsch oder stammen aus einer anderen Kultur.",
                    "5": "Stark. Das Bild ist völlig falsch, die meisten Elemente sind falsch, die Aktivität ist "
                    "falsch oder die Szene gehört in ein anderes Land.",
                },
            },
            "realism": {
                "label": "GT-REALISM (Realismus)",
                "prompt": "Wie realistisch sieht dieses Bild aus?",
                "options": {
                    "1": "Überhaupt nicht realistisch (eindeutig künstlich erzeugt oder fehlerhaft)",
                    "2": "Wenig realistisch (offensichtliche Artefakte)",
                    "3": "Einigermaßen realistisch",
                    "4": "Größtenteils realistisch (kleine Artefakte)",
                    "5": "Vollständig realistisch (könnte ein echtes Foto sein)",
                },
            },
            "rationale": {
                "label": "Begründung",
                "prompt": "Beschreiben Sie die Fehler im Bild (verpflichtende Begründung in freiem Text).",
            },
        },
    },
}

DESC_INSTRUCTIONS_ZH_HANS = """\
我们还通过人工评估来评价参考描述项的质量。我们让标注者把每个描述项标记为正确或错误，以此衡量精确率。由于不存在真值描述项集合，无法计算召回率。因此，我们通过两种方式估计召回率：(1) 标注者用 5 级 Likert 量表为描述项的整体质量评分；(2) 标注者在自由文本回答中指出缺失的描述项。

对于该活动的每个描述项：如果一张展示该国家这一活动的图像可以正确地呈现它，就标为正确（1），否则标为错误（0）。然后评价整个列表对该活动的覆盖程度，并列出任何缺失的描述项。"""

DESC_INSTRUCTIONS_DE = """\
Wir bewerten außerdem die Qualität der Referenzdeskriptoren durch eine menschliche Evaluation. Die Präzision messen wir, indem die Annotierenden jeden Deskriptor als korrekt oder inkorrekt markieren. Den Recall zu berechnen ist nicht möglich, da es keine Ground-Truth-Menge von Deskriptoren gibt. Stattdessen schätzen wir den Recall auf zwei Wegen: (1) Die Annotierenden bewerteten die Gesamtqualität der Deskriptoren auf einer 5-stufigen Likert-Skala, und (2) sie nannten fehlende Deskriptoren in Freitextantworten.

Für jeden Deskriptor der Aktivität: Markieren Sie ihn als korrekt (1), wenn ein Bild dieser Aktivität in diesem Land ihn zutreffend zeigen könnte, sonst als inkorrekt (0). Bewerten Sie dann, wie gut die gesamte Liste die Aktivität abdeckt, und nennen Sie fehlende Deskriptoren."""

DESC_TRANSLATIONS: dict[str, Any] = {
    "zh-hans": {
        "title": "CULTIVate 参考描述项验证",
        "instructions": DESC_INSTRUCTIONS_ZH_HANS,
        "fields": {"image": "示例图像", "activity": "活动", "descriptors": "参考描述项"},
        "questions": {
            "descriptor_correct": {
                "label": "描述项是否正确？",
                "prompt": "这个关于{country}的{activity}的描述项正确吗？",
                "options": {"0": "错误", "1": "正确"},
                "repeat_label": "描述项 {n}",
            },
            "coverage": {
                "label": "覆盖度",
                "prompt": "总体而言，这些描述项对{country}的{activity}覆盖得如何？",
                "options": {
                    "1": "很差：大多数重要元素缺失",
                    "2": "较差：许多重要元素缺失",
                    "3": "一般：部分重要元素缺失",
                    "4": "良好：只缺少次要元素",
                    "5": "优秀：没有缺少任何重要内容",
                },
            },
            "missing": {"label": "缺失的描述项", "prompt": "列出任何缺失的描述项（选填）。"},
        },
    },
    "de": {
        "title": "CULTIVate: Validierung der Referenzdeskriptoren",
        "instructions": DESC_INSTRUCTIONS_DE,
        "fields": {"image": "Beispielbild", "activity": "Aktivität", "descriptors": "Referenzdeskriptoren"},
        "questions": {
            "descriptor_correct": {
                "label": "Deskriptor korrekt?",
                "prompt": "Ist dieser Deskriptor für {activity} in {country} korrekt?",
                "options": {"0": "Inkorrekt", "1": "Korrekt"},
                "repeat_label": "Deskriptor {n}",
            },
            "coverage": {
                "label": "Abdeckung",
                "prompt": "Wie gut decken diese Deskriptoren {activity} in {country} insgesamt ab?",
                "options": {
                    "1": "Sehr schlecht: die meisten wichtigen Elemente fehlen",
                    "2": "Schlecht: viele wichtige Elemente fehlen",
                    "3": "Mittelmäßig: einige wichtige Elemente fehlen",
                    "4": "Gut: nur unbedeutende Elemente fehlen",
                    "5": "Sehr gut: nichts Wichtiges fehlt",
                },
            },
            "missing": {"label": "Fehlende Deskriptoren", "prompt": "Nennen Sie fehlende Deskriptoren (optional)."},
        },
    },
}
