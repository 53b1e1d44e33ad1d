"""The ValueGround paper's wording, verbatim where the declaration says so: annotator instructions and
their translations, and the judge prompts. Kept apart so the declaration in ``__init__.py`` reads
on one screen."""

from __future__ import annotations

from typing import Any

INSTRUCTIONS = """\
To assess the quality of candidate image pairs, we use a four-item rubric aligned with the three construction criteria. Specifically, semantic alignment is decomposed into two directional checks: Match-A (Q1), which evaluates whether image I_A fits the question and option direction o_A, and Match-B (Q2), which does the same for I_B and o_B. For Q1 and Q2, a score of 2 indicates clear semantic alignment, 1 indicates that the intended option direction is visually distinguishable but only partially grounded, and 0 indicates a mismatch or an unclear direction. Minimal contrast is captured by PairMatch (Q3), which evaluates whether the two images remain well matched outside the core intended contrast. Shortcut suppression is captured by NoExplicitCue (Q4), which checks for explicit cues such as visible text, UI elements, flags, check marks, or cross symbols.

The image-judge rubric contains four primary questions:
- Q1 (Semantic alignment with option o_a). Q1 evaluates whether Image A is semantically closer to option o_a than to the alternative option o_b, given the survey question. A score of 2 means that Image A is both distinguishable and semantically complete: it is closer to o_a and contains sufficient visual evidence for the question-option meaning. A score of 1 means that Image A is distinguishable from the alternative option, but the evidence is partial, generic, or incomplete. A score of 0 means that Image A is not distinguishable, matches both options equally, or better matches o_b.
- Q2 (Semantic alignment with option o_b). Q2 is defined analogously for Image B and option o_b. A score of 2 means that Image B clearly and completely matches o_b; a score of 1 means that it is closer to o_b but only partially or generically expresses the intended meaning; and a score of 0 means that it is not distinguishable or better matches o_a.
- Q3 (Minimal contrast). Q3 evaluates the quality of the A/B pair as a controlled contrast pair rather than the semantics of either image in isolation. A score of 2 means that the two images are well matched overall and differ mainly in the intended semantic contrast. A score of 1 means that the pair is only partly matched, with noticeable extra visual differences. A score of 0 means that the two images differ substantially in scene, people, composition, or presentation.
- Q4 (Shortcut suppression). Q4 is a binary shortcut-control variable that asks whether the pair avoids explicit giveaway cues. A score of 1 means that no obvious explicit cue is present. A score of 0 means that the pair contains direct answer-revealing cues, such as readable text, UI elements, flags, check marks, cross symbols, country names, or other explicit symbolic labels.

Final acceptance: a pair is retained only if Q1 + Q2 >= 3, Q3 = 2, Q4 = 1 (Eq. 7). This rule filters out clear semantic mismatches while enforcing strict pair-level control. Pairs that fail the rule but can be corrected are revised by passing human review feedback to the Critic and then rechecked under the same rubric: write that feedback in "Revision feedback"."""

# Translations of the rubric for annotators who read Chinese or German (issue 14). The English
# above is the paper's wording and stays canonical; judges and the stored rubric ids, values and
# rules read it alone. Prompts name the same {fields}.
INSTRUCTIONS_ZH_HANS = """\
为评估候选图像对的质量，我们使用一个与三条构建标准相对应的四项评分细则。具体而言，语义一致性被分解为两个方向性检查：Match-A（Q1）评估图像 I_A 是否符合问题和选项方向 o_A；Match-B（Q2）对 I_B 和 o_B 做同样的评估。对于 Q1 和 Q2，2 分表示语义明确一致；1 分表示预期的选项方向在视觉上可以区分，但只得到部分体现；0 分表示不匹配或方向不清楚。最小对比由 PairMatch（Q3）衡量，它评估两张图像在核心的预期对比之外是否仍然高度匹配。捷径抑制由 NoExplicitCue（Q4）衡量，它检查是否存在显性提示，例如可见的文字、界面元素、旗帜、对勾或叉号。

图像评审细则包含四个主要问题：
- Q1（与选项 o_a 的语义一致性）。Q1 评估在给定调查问题的情况下，图像 A 在语义上是否更接近选项 o_a 而非另一个选项 o_b。2 分表示图像 A 既可区分又语义完整：它更接近 o_a，并包含足以表达该问题与选项含义的视觉证据。1 分表示图像 A 可以与另一个选项区分开，但证据是部分的、笼统的或不完整的。0 分表示图像 A 无法区分、与两个选项同样匹配，或更符合 o_b。
- Q2（与选项 o_b 的语义一致性）。Q2 对图像 B 和选项 o_b 作类似的定义。2 分表示图像 B 清楚且完整地符合 o_b；1 分表示它更接近 o_b，但只是部分地或笼统地表达了预期含义；0 分表示它无法区分，或更符合 o_a。
- Q3（最小对比）。Q3 评估 A/B 图像对作为受控对比对的质量，而不是单独评估任一图像的语义。2 分表示两张图像整体上高度匹配，主要区别在于预期的语义对比。1 分表示图像对只部分匹配，存在明显的额外视觉差异。0 分表示两张图像在场景、人物、构图或呈现方式上差异很大。
- Q4（捷径抑制）。Q4 是一个二元的捷径控制变量，询问该图像对是否避免了明显泄露答案的显性提示。1 分表示没有明显的显性提示。0 分表示图像对包含直接泄露答案的提示，例如可读的文字、界面元素、旗帜、对勾、叉号、国家名称或其他显性的符号标签。

最终接受标准：仅当 Q1 + Q2 >= 3、Q3 = 2 且 Q4 = 1 时保留该图像对（公式 7）。该规则在过滤掉明显语义不匹配的同时，对图像对实施严格控制。未通过该规则但可以修正的图像对，会把人工审核反馈交给 Critic 进行修改，然后按同一评分细则重新检查：请把这些反馈写在“修改反馈”中。"""

INSTRUCTIONS_DE = """\
Um die Qualität der Kandidaten-Bildpaare zu beurteilen, verwenden wir ein Bewertungsschema aus vier Fragen, das an den drei Konstruktionskriterien ausgerichtet ist. Die semantische Übereinstimmung wird dabei in zwei gerichtete Prüfungen zerlegt: Match-A (Q1) bewertet, ob Bild I_A zur Frage und zur Optionsrichtung o_A passt, und Match-B (Q2) tut dasselbe für I_B und o_B. Bei Q1 und Q2 bedeutet der Wert 2 eine klare semantische Übereinstimmung, 1, dass die beabsichtigte Optionsrichtung visuell unterscheidbar, aber nur teilweise belegt ist, und 0 eine Nichtübereinstimmung oder eine unklare Richtung. Der minimale Kontrast wird mit PairMatch (Q3) erfasst: Diese Frage bewertet, ob die beiden Bilder außerhalb des beabsichtigten Kernkontrasts gut zueinander passen. Die Shortcut-Unterdrückung wird mit NoExplicitCue (Q4) erfasst: Diese Frage prüft auf explizite Hinweise wie sichtbaren Text, Elemente einer Benutzeroberfläche, Flaggen, Häkchen oder Kreuzsymbole.

Das Bewertungsschema für die Bildbeurteilung enthält vier Hauptfragen:
- Q1 (Semantische Übereinstimmung mit Option o_a). Q1 bewertet, ob Bild A angesichts der Umfragefrage semantisch näher an Option o_a liegt als an der alternativen Option o_b. Der Wert 2 bedeutet, dass Bild A sowohl unterscheidbar als auch semantisch vollständig ist: Es liegt näher an o_a und enthält ausreichende visuelle Belege für die Bedeutung von Frage und Option. Der Wert 1 bedeutet, dass Bild A von der alternativen Option unterscheidbar ist, die Belege aber lückenhaft, allgemein oder unvollständig sind. Der Wert 0 bedeutet, dass Bild A nicht unterscheidbar ist, zu beiden Optionen gleich gut passt oder besser zu o_b passt.
- Q2 (Semantische Übereinstimmung mit Option o_b). Q2 ist analog für Bild B und Option o_b definiert. Der Wert 2 bedeutet, dass Bild B klar und vollständig zu o_b passt; 1 bedeutet, dass es näher an o_b liegt, die beabsichtigte Bedeutung aber nur teilweise oder allgemein ausdrückt; und 0 bedeutet, dass es nicht unterscheidbar ist oder besser zu o_a passt.
- Q3 (Minimaler Kontrast). Q3 bewertet die Qualität des A/B-Paares als kontrolliertes Kontrastpaar, nicht die Semantik eines der beiden Bilder für sich. Der Wert 2 bedeutet, dass die beiden Bilder insgesamt gut zueinander passen und sich hauptsächlich im beabsichtigten semantischen Kontrast unterscheiden. Der Wert 1 bedeutet, dass das Paar nur teilweise zueinander passt und merkliche zusätzliche visuelle Unterschiede aufweist. Der Wert 0 bedeutet, dass sich die beiden Bilder in Szene, Personen, Bildaufbau oder Darstellung deutlich unterscheiden.
- Q4 (Shortcut-Unterdrückung). Q4 ist eine binäre Kontrollvariable für Shortcuts, die fragt, ob das Paar explizite, die Antwort verratende Hinweise vermeidet. Der Wert 1 bedeutet, dass kein offensichtlicher expliziter Hinweis vorhanden ist. Der Wert 0 bedeutet, dass das Paar direkte, die Antwort verratende Hinweise enthält, etwa lesbaren Text, Elemente einer Benutzeroberfläche, Flaggen, Häkchen, Kreuzsymbole, Ländernamen oder andere explizite symbolische Kennzeichnungen.

Endgültige Annahme: Ein Paar wird nur behalten, wenn Q1 + Q2 >= 3, Q3 = 2 und Q4 = 1 gilt (Gl. 7). Diese Regel filtert klare semantische Nichtübereinstimmungen heraus und erzwingt zugleich eine strenge Kontrolle auf Paarebene. Paare, die die Regel nicht erfüllen, aber korrigiert werden können, werden überarbeitet, indem das Feedback der menschlichen Prüfung an den Critic weitergegeben wird, und anschließend nach demselben Bewertungsschema erneut geprüft: Schreiben Sie dieses Feedback in „Überarbeitungshinweise“."""

TRANSLATIONS: dict[str, Any] = {
    "zh-hans": {
        "title": "ValueGround 图像对质量",
        "instructions": INSTRUCTIONS_ZH_HANS,
        "fields": {
            "question": "调查问题（q）",
            "option_a": "选项 A（o_A）",
            "option_b": "选项 B（o_B）",
            "image_a": "图像 A",
            "image_b": "图像 B",
            "question_id": "WVS 问题编号",
            "pipeline": "流程配置",
        },
        "acceptance": "公式 7：仅当 Q1 + Q2 >= 3、Q3 = 2 且 Q4 = 1 时保留该图像对。",
        "questions": {
            "q1": {
                "label": "Q1 Match-A（与选项 A 的语义一致性）",
                "prompt": "Q1（与选项 o_a 的语义一致性）。Q1 评估在给定调查问题的情况下，图像 A 在语义上是否更接近"
                "选项 o_a 而非另一个选项 o_b。选项 A：{option_a} / 选项 B：{option_b}",
                "options": {
                    "0": "图像 A 无法区分、与两个选项同样匹配，或更符合 o_b。",
                    "1": "图像 A 可以与另一个选项区分开，但证据是部分的、笼统的或不完整的。",
                    "2": "图像 A 既可区分又语义完整：它更接近 o_a，并包含足以表达该问题与选项含义的视觉证据。",
                },
            },
            "q2": {
                "label": "Q2 Match-B（与选项 B 的语义一致性）",
                "prompt": "Q2（与选项 o_b 的语义一致性）。Q2 对图像 B 和选项 o_b 作类似的定义。"
                "选项 B：{option_b} / 选项 A：{option_a}",
                "options": {
                    "0": "图像 B 无法区分，或更符合 o_a。",
                    "1": "图像 B 更接近 o_b，但只是部分地或笼统地表达了预期含义。",
                    "2": "图像 B 清楚且完整地符合 o_b。",
                },
            },
            "q3": {
                "label": "Q3 PairMatch（最小对比）",
                "prompt": "Q3（最小对比）。Q3 评估 A/B 图像对作为受控对比对的质量，而不是单独评估任一图像的语义。",
                "options": {
                    "0": "两张图像在场景、人物、构图或呈现方式上差异很大。",
                    "1": "图像对只部分匹配，存在明显的额外视觉差异。",
                    "2": "两张图像整体上高度匹配，主要区别在于预期的语义对比。",
                },
            },
            "q4": {
                "label": "Q4 NoExplicitCue（无显性提示）",
                "prompt": "Q4（捷径抑制）。Q4 是一个二元的捷径控制变量，询问该图像对是否避免了明显泄露答案的显性提示。",
                "options": {
                    "0": "图像对包含直接泄露答案的提示，例如可读的文字、界面元素、旗帜、对勾、叉号、国家名称或其他显性的符号标签。",
                    "1": "没有明显的显性提示。",
                },
            },
            "feedback": {
                "label": "修改反馈",
                "prompt": "给生成器的修改反馈（选填）：如果该图像对未通过接受标准但可以修正，请说明应当修改什么。",
            },
        },
    },
    "de": {
        "title": "ValueGround: Qualität der Bildpaare",
        "instructions": INSTRUCTIONS_DE,
        "fields": {
            "question": "Umfragefrage (q)",
            "option_a": "Antwortoption A (o_A)",
            "option_b": "Antwortoption B (o_B)",
            "image_a": "Bild A",
            "image_b": "Bild B",
            "question_id": "WVS-Fragen-ID",
            "pipeline": "Pipeline-Konfiguration",
        },
        "acceptance": "Gl. 7: Ein Paar wird nur behalten, wenn Q1 + Q2 >= 3, Q3 = 2 und Q4 = 1 gilt.",
        "questions": {
            "q1": {
                "label": "Q1 Match-A (Übereinstimmung mit Option A)",
                "prompt": "Q1 (Semantische Übereinstimmung mit Option o_a). Q1 bewertet, ob Bild A angesichts der "
                "Umfragefrage semantisch näher an Option o_a liegt als an der alternativen Option o_b. "
                "Option A: {option_a} / Option B: {option_b}",
                "options": {
                    "0": "Bild A ist nicht unterscheidbar, passt zu beiden Optionen gleich gut oder besser zu o_b.",
                    "1": "Bild A ist von der alternativen Option unterscheidbar, aber die Belege sind lückenhaft, "
                    "allgemein oder unvollständig.",
                    "2": "Bild A ist sowohl unterscheidbar als auch semantisch vollständig: Es liegt näher an o_a und "
                    "enthält ausreichende visuelle Belege für die Bedeutung von Frage und Option.",
                },
            },
            "q2": {
                "label": "Q2 Match-B (Übereinstimmung mit Option B)",
                "prompt": "Q2 (Semantische Übereinstimmung mit Option o_b). Q2 ist analog für Bild B und Option o_b "
                "definiert. Option B: {option_b} / Option A: {option_a}",
                "options": {
                    "0": "Bild B ist nicht unterscheidbar oder passt besser zu o_a.",
                    "1": "Bild B liegt näher an o_b, drückt die beabsichtigte Bedeutung aber nur teilweise oder "
                    "allgemein aus.",
                    "2": "Bild B passt klar und vollständig zu o_b.",
                },
            },
            "q3": {
                "label": "Q3 PairMatch (minimaler Kontrast)",
                "prompt": "Q3 (Minimaler Kontrast). Q3 bewertet die Qualität des A/B-Paares als kontrolliertes "
                "Kontrastpaar, nicht die Semantik eines der beiden Bilder für sich.",
                "options": {
                    "0": "Die beiden Bilder unterscheiden sich deutlich in Szene, Personen, Bildaufbau oder Darstellung.",
                    "1": "Das Paar passt nur teilweise zueinander, mit merklichen zusätzlichen visuellen Unterschieden.",
                    "2": "Die beiden Bilder passen insgesamt gut zueinander und unterscheiden sich hauptsächlich im "
                    "beabsichtigten semantischen Kontrast.",
                },
            },
            "q4": {
                "label": "Q4 NoExplicitCue (keine expliziten Hinweise)",
                "prompt": "Q4 (Shortcut-Unterdrückung). Q4 ist eine binäre Kontrollvariable für Shortcuts, die fragt, "
                "ob das Paar explizite, die Antwort verratende Hinweise vermeidet.",
                "options": {
                    "0": "Das Paar enthält direkte, die Antwort verratende Hinweise, etwa lesbaren Text, Elemente einer "
                    "Benutzeroberfläche, Flaggen, Häkchen, Kreuzsymbole, Ländernamen oder andere explizite "
                    "symbolische Kennzeichnungen.",
                    "1": "Kein offensichtlicher expliziter Hinweis ist vorhanden.",
                },
            },
            "feedback": {
                "label": "Überarbeitungshinweise",
                "prompt": "Überarbeitungshinweise für den Generator (optional): Wenn das Paar die Annahmeregel nicht "
                "erfüllt, aber korrigiert werden kann, beschreiben Sie, was geändert werden sollte.",
            },
        },
    },
}
