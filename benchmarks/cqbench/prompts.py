"""The CQ-Bench paper's wording, verbatim where the declaration says so: annotator instructions and
their translations, and the judge prompts. Kept apart so the declaration in ``__init__.py`` reads
on one screen."""

from __future__ import annotations

from typing import Any

STORY_INSTRUCTIONS = """\
CQ-Bench Annotation Guide (with Naturalness)

0) Goal (what you're judging)
We generate short, multi-speaker stories to reflect five target cultural values. Your job is to verify that the final story:
- reflects each value implicitly (not stated too bluntly),
- is consistent across speakers for each value,
- benefits from the model's obviousness-reducing rewrites, and
- reads like a natural human conversation.

You'll see some LLM "judge" outputs (consistency/reflection validations). Treat them as hints only\u2014your labels are the source of truth.

1) What each item contains
- Values \u2014 the five target values (V1\u2013V5) the story aims to reflect.
- Consistent story \u2014 the initial story drafted from the five values; only its flagged lines are shown, as BEFORE.
- Obvious rewrite \u2014 suggested rewrites to make flagged lines more subtle: each is shown as "Obvious rewrite n", with BEFORE (the line in Consistent story) and AFTER (the rewrite).
- Final story \u2014 the story after applying the rewrites. Use this for your official judgments.
- Consistency validation (multiple) / Reflection validation (multiple) \u2014 LLM passes, shown only if the project turns model hints on.

2) Your tasks (A\u2013D)

A) Rewrite improvement (subtlety)
What: For every proposed rewrite in Obvious rewrite, decide if it improves subtle/indirect expression compared to the original line in Consistent story.
- If not better, label 0.
- If better, rate 1\u20135 for how much better it is (1 = slightly; 5 = much better).
- If there are no rewrites for a story, nothing is asked (NA).
Judge only implicitness/subtlety (you may consider grammar if it affects subtlety). If a rewrite becomes more explicit or introduces contradiction, give 0 (or a low score).

B) Consistency per value (V1\u2013V5)
Question: In the Final story, do all characters align on each value?
- 1 = consistent (no character contradicts the value)
- 0 = inconsistent (at least one character contradicts/doesn't share it)
If a character never mentions a value and nothing implies the opposite, treat as consistent unless the story suggests disagreement.

C) Reflection per value (V1\u2013V5)
Question: In the Final story, is each value implicitly reflected (a careful reader could reasonably infer it without being spelled out)?
- 1 = reflected implicitly
- 0 = not reflected / not reasonably inferable
\u201cImplicit\u201d means no on-the-nose statements like \u201cI believe X because...\u201d. Look for actions, choices, tone, and dialogue cues.

D) Conversational naturalness
Question: Does the Final story read like a natural human conversation?
Consider:
- Turn-taking & flow: turns respond to prior content; no abrupt topic jumps.
- Persona consistency: speakers\u2019 tone/stance fit their roles throughout.
- Pragmatics: hedges (\u201cmaybe,\u201d \u201cI guess\u201d), acknowledgments (\u201cmm, makes sense\u201d), concise lines rather than mini-lectures.
- Non-redundancy: avoids copy-paste feel or slogan repetition.
- Readability: minor typos are fine; penalize only if clarity or human-likeness suffers.
Score (1\u20135): 1 = very unnatural, 2 = below average, 3 = acceptable, 4 = natural, 5 = very natural. Binary (0/1): 1 if natural (score \u2265 4), else 0 \u2014 computed for you."""


# --------------------------------------------------------------------------- model judges
# App. D "Incorporation check prompt" identity and task wording, with the rubric's per-value
# questions and a JSON answer so the same validator reads it (the user part is the generic
# rubric prompt's): one judge for A-D at once. The paper's own checks, with its output
# formats, are the named templates below.
STORY_JUDGE_SYSTEM = (
    "##Identity\nYou are an expert in culture understanding.\n\n##Task\nYou will be provided a story and values "
    "reflected in the story. Your task is to check if the story reflects values? The story does not mention the "
    "values directly. You will need some reasoning to analyze the story.\n\n{instructions}"
)

# The paper's two validation checks as it gives them (App. D, verbatim; {story} and {values}
# stand for its "story" and "values", the values written "statement-attitude" one per line as
# its "[culture]-[value]"), each with its own output contract, read by ``judges/formats.py``:
# the incorporation check answers C) reflection per value, the consistency check B).
INCORPORATION_CHECK = {
    "output_format": "values_reflected",
    "question": "reflection",
    "system": "##Identity\n\nYou are an expert in culture understanding.\n\n##Task\n\nYou will be provided a story "
    "and values reflected in the story. Your task is to check if the story reflects values? The story does not "
    "mention the values directly. You will need some reasoning to analyze the story.",
    "user": "##Input\n\nHere is the original story: {story}\n\nHere are the values to reflect in the story: "
    "{values}\n\n##Output\n\nFor each value, output if the value is reflected and provide reasoning. In the end, "
    "output the values not reflected without the reasoning. Only output the exact and comprehensive value "
    'including "-" within it, do not rephrase! If all the values are reflected, just leave it blank. Follow the '
    "format: [Value]:[Reasoning, Yes/No] Values not reflected: [Value]",
}
CONSISTENCY_CHECK = {
    "output_format": "value_contradictions",
    "question": "consistency",
    "system": "##Identity\nYou are an expert in culture understanding.\n##Task You will be provided a story and "
    "values reflected in the story. Your task: for each value, check if all the characters agree with the value. "
    "If there is characters who does not agree with the value, you should output the character's name and his "
    "speech, and why the speech does not align with the value.",
    "user": "##Input Here is the original story: {story}\nHere are the values to reflect in the story: {values}\n"
    "Now check the story and output if there is any contradiction. You can output reasoning to help you analyze. "
    "However, in the end, only output where is the contradiction one by one. If there isn't a contradiction, just "
    "reply NO. Otherwise, reply where is the contradiction.\n##Output Follow the format strictly, do not change "
    "the format, output exact values from the values provided, and do not rephrase:\n[Reasoning]:\n"
    "[Value-attitude]:[If all the speeches are aligned with the value]\n[Contradictions]:\n"
    "[Value-attitude]: [*character name*:speech]",
}

TURING_INSTRUCTIONS = """\
We present annotators with one human-written utterance and one model-generated utterance in random order. For each pair, annotators choose among three options: human, model, or tie.

Read both utterances and pick the one you think was written by a person (the other was generated by a language model). Choose "Tie" only if you cannot distinguish between the two sources. A tie choice is assigned a score of 0, indicating that the annotator cannot distinguish between the two sources."""

VALUE_EXTRACTION_INSTRUCTIONS = """\
You will be given two sets of texts: a set of predicted values and a ground truth set of values. Your task is to determine how many of the ground truth values are fully represented in the predicted values. A ground truth value is considered correct if all of its components are meaningfully discussed in the predicted value, even if there is no exact 1-to-1 match. It could be many-to-1 match i.e. many values to 1 ground truth value. If the ground truth value is fully presented, score 1, if it is partially presented, score 0.5, if it is not mentioned at all, score 0.

We define \u201cpartially presented\u201d as an output that mentions the same topic but lacks sufficient specificity."""

# App. D "LLM evaluation prompt", verbatim: its "pred" and "gt" are {predicted_values} (one per
# line) and {values} ("[Ground truth n]: statement-attitude", the names its answer uses).
VALUE_EXTRACTION_GRADER = {
    "output_format": "ground_truth_scores",
    "question": "value_extraction",
    "system": "##Identity\n\nYou are an expert in culture understanding.\n\n##Task\n\nYou will be given two sets "
    "of texts: a set of predicted values and a ground truth set of values. Your task is to determine how many of "
    "the ground truth values are fully represented in the predicted values. A ground truth value is considered "
    "correct if all of its components are meaningfully discussed in the predicted value, even if there is no "
    "exact 1-to-1 match. It could be many-to-1 match i.e. many values to 1 ground truth value. If the ground truth "
    "value is fully presented, score 1, if it is partially presented, score 0.5, if it is not mentioned at all, "
    "score 0. Additionally, provide a brief justification for your score, explaining which values were correctly "
    "or incorrectly represented, in the justification, you should explicitly mention which predicted values are "
    "related to the ground truth value.",
    "user": "##Input\n\nHere are the predictions:\n{predicted_values}\nand ground truth:\n{values}\nIn the "
    "reasoning, if the ground truth value is fully represented, you need to point out which predicted value is "
    "related to it.\n\n##Output\n\nReturn the results in this format: [Reasoning]:\n\n[Ground truth 1]: "
    "[reasoning]\n\n.....\n\n[Final answer]:\n\n[Ground truth 1]:1\n\n[Ground truth 2]:0.5\n\n.....",
}


# --------------------------------------------------------------------------- translations
# Translations of the rubrics for annotators who read Chinese or German. The English above is the
# paper's wording and stays canonical; judges and the stored rubric ids, values and rules read it
# alone. Prompts name the same {fields}. The guide's names of the item's parts (Final story,
# Consistent story, Obvious rewrite) are translated as the form's labels are, with the English
# name beside them in the instructions.
STORY_INSTRUCTIONS_ZH_HANS = """\
CQ-Bench 标注指南（含自然度）

0) 目标（你要评判什么）
我们生成简短的多人对话故事，以体现五个目标文化价值观。你的任务是核实最终故事：
- 隐含地体现每个价值观（不过于直白地说出来），
- 在每个价值观上，各说话人之间保持一致，
- 从模型降低显性程度的改写中获益，并且
- 读起来像自然的人类对话。

你会看到一些 LLM“评审”的输出（一致性/体现验证）。请只把它们当作提示\u2014\u2014你的标注才是依据。

1) 每个条目包含什么
- 价值观（Values）\u2014\u2014故事旨在体现的五个目标价值观（V1\u2013V5）。
- 一致性故事（Consistent story）\u2014\u2014根据五个价值观起草的初始故事；只显示其中被标记的句子，作为“改写前”（BEFORE）。
- 显性句改写（Obvious rewrite）\u2014\u2014为使被标记的句子更含蓄而建议的改写：每条显示为“显性句改写 n”，包括“改写前”（一致性故事中的原句）和“改写后”（AFTER，即改写）。
- 最终故事（Final story）\u2014\u2014应用改写后的故事。请以它作为你正式判断的依据。
- 一致性验证（多次）/ 体现验证（多次）\u2014\u2014LLM 的多轮检查，仅在项目开启模型提示时显示。

2) 你的任务（A\u2013D）

A) 改写改进（含蓄程度）
内容：对显性句改写中的每条建议改写，判断与一致性故事中的原句相比，它是否改进了含蓄/间接的表达。
- 如果没有更好，标 0。
- 如果更好，用 1\u20135 评价好了多少（1 = 略好；5 = 好得多）。
- 如果某个故事没有改写，则不提问（NA）。
只评判隐含性/含蓄程度（如果语法影响含蓄程度，可以考虑语法）。如果改写变得更直白或引入了矛盾，给 0（或低分）。

B) 每个价值观的一致性（V1\u2013V5）
问题：在最终故事中，所有角色在每个价值观上是否一致？
- 1 = 一致（没有角色与该价值观相矛盾）
- 0 = 不一致（至少有一个角色与之矛盾/不认同它）
如果某个角色从未提及某个价值观，且没有任何内容暗示相反的立场，则视为一致，除非故事暗示存在分歧。

C) 每个价值观的体现（V1\u2013V5）
问题：在最终故事中，每个价值观是否被隐含地体现（细心的读者无需明说也能合理地推断出来）？
- 1 = 隐含地体现
- 0 = 未体现/无法合理推断
“隐含”指没有“我相信 X，因为……”这类直截了当的陈述。请留意行为、选择、语气和对话中的线索。

D) 对话自然度
问题：最终故事读起来像自然的人类对话吗？
请考虑：
- 轮流与连贯：每轮发言都回应前面的内容；没有突兀的话题跳跃。
- 人设一致：说话人的语气/立场自始至终符合其角色。
- 语用：含糊其辞的说法（“也许”“我猜”）、附和（“嗯，有道理”）、简洁的句子而不是小型演讲。
- 不冗余：避免复制粘贴感或口号式的重复。
- 可读性：小的拼写错误没关系；只有在影响清晰度或像人程度时才扣分。
评分（1\u20135）：1 = 非常不自然，2 = 低于平均，3 = 可以接受，4 = 自然，5 = 非常自然。二元（0/1）：自然（评分 \u2265 4）为 1，否则为 0\u2014\u2014由系统为你计算。"""

STORY_INSTRUCTIONS_DE = """\
CQ-Bench-Annotationsleitfaden (mit Natürlichkeit)

0) Ziel (was Sie beurteilen)
Wir erzeugen kurze Geschichten mit mehreren Sprechenden, die fünf kulturelle Zielwerte widerspiegeln sollen. Ihre Aufgabe ist zu prüfen, ob die endgültige Geschichte:
- jeden Wert implizit widerspiegelt (nicht zu direkt ausgesprochen),
- bei jedem Wert über alle Sprechenden hinweg konsistent ist,
- von den Umformulierungen des Modells profitiert, die Offensichtliches abschwächen, und
- sich wie ein natürliches menschliches Gespräch liest.

Sie sehen einige Ausgaben von LLM-\u201eJudges\u201c (Validierungen der Konsistenz und der Widerspiegelung). Betrachten Sie sie nur als Hinweise \u2013 Ihre Labels sind maßgeblich.

1) Was jedes Item enthält
- Werte (Values) \u2013 die fünf Zielwerte (V1\u2013V5), die die Geschichte widerspiegeln soll.
- Konsistente Geschichte (Consistent story) \u2013 die erste, aus den fünf Werten entworfene Geschichte; nur ihre markierten Zeilen werden angezeigt, als VORHER (BEFORE).
- Umformulierung offensichtlicher Zeilen (Obvious rewrite) \u2013 vorgeschlagene Umformulierungen, die markierte Zeilen subtiler machen sollen: Jede wird als \u201eUmformulierung n\u201c angezeigt, mit VORHER (der Zeile in der konsistenten Geschichte) und NACHHER (AFTER, der Umformulierung).
- Endgültige Geschichte (Final story) \u2013 die Geschichte nach Anwendung der Umformulierungen. Verwenden Sie sie für Ihre offiziellen Urteile.
- Konsistenzvalidierung (mehrfach) / Validierung der Widerspiegelung (mehrfach) \u2013 LLM-Durchläufe, die nur angezeigt werden, wenn das Projekt Modellhinweise einschaltet.

2) Ihre Aufgaben (A\u2013D)

A) Verbesserung durch die Umformulierung (Subtilität)
Was: Entscheiden Sie für jede vorgeschlagene Umformulierung offensichtlicher Zeilen, ob sie den subtilen/indirekten Ausdruck gegenüber der ursprünglichen Zeile in der konsistenten Geschichte verbessert.
- Wenn sie nicht besser ist, vergeben Sie 0.
- Wenn sie besser ist, bewerten Sie mit 1\u20135, wie viel besser sie ist (1 = etwas besser; 5 = viel besser).
- Gibt es zu einer Geschichte keine Umformulierungen, wird nichts gefragt (NA).
Beurteilen Sie nur Implizitheit/Subtilität (Grammatik dürfen Sie berücksichtigen, wenn sie die Subtilität beeinflusst). Wird eine Umformulierung expliziter oder führt sie einen Widerspruch ein, vergeben Sie 0 (oder eine niedrige Bewertung).

B) Konsistenz pro Wert (V1\u2013V5)
Frage: Stimmen in der endgültigen Geschichte alle Figuren bei jedem Wert überein?
- 1 = konsistent (keine Figur widerspricht dem Wert)
- 0 = inkonsistent (mindestens eine Figur widerspricht ihm bzw. teilt ihn nicht)
Wenn eine Figur einen Wert nie erwähnt und nichts auf das Gegenteil hindeutet, gilt dies als konsistent, es sei denn, die Geschichte deutet auf eine Meinungsverschiedenheit hin.

C) Widerspiegelung pro Wert (V1\u2013V5)
Frage: Wird in der endgültigen Geschichte jeder Wert implizit widergespiegelt (eine aufmerksame Leserin oder ein aufmerksamer Leser könnte ihn vernünftigerweise erschließen, ohne dass er ausgesprochen wird)?
- 1 = implizit widergespiegelt
- 0 = nicht widergespiegelt / nicht vernünftigerweise erschließbar
\u201eImplizit\u201c bedeutet: keine plumpen Aussagen wie \u201eIch glaube X, weil \u2026\u201c. Achten Sie auf Handlungen, Entscheidungen, Tonfall und Hinweise im Dialog.

D) Natürlichkeit des Gesprächs
Frage: Liest sich die endgültige Geschichte wie ein natürliches menschliches Gespräch?
Berücksichtigen Sie:
- Sprecherwechsel & Fluss: Redebeiträge gehen auf das Vorherige ein; keine abrupten Themensprünge.
- Konsistenz der Personas: Tonfall/Haltung der Sprechenden passen durchgehend zu ihren Rollen.
- Pragmatik: Abschwächungen (\u201evielleicht\u201c, \u201eich schätze\u201c), Bestätigungen (\u201ehm, ergibt Sinn\u201c), knappe Zeilen statt kleiner Vorträge.
- Keine Redundanz: kein Eindruck von Copy-and-paste, keine Wiederholung von Parolen.
- Lesbarkeit: Kleine Tippfehler sind in Ordnung; ziehen Sie nur dann Punkte ab, wenn Klarheit oder Menschenähnlichkeit leiden.
Bewertung (1\u20135): 1 = sehr unnatürlich, 2 = unterdurchschnittlich, 3 = akzeptabel, 4 = natürlich, 5 = sehr natürlich. Binär (0/1): 1, wenn natürlich (Bewertung \u2265 4), sonst 0 \u2013 wird für Sie berechnet."""

STORY_TRANSLATIONS: dict[str, Any] = {
    "zh-hans": {
        "title": "CQ-Bench 故事验证",
        "instructions": STORY_INSTRUCTIONS_ZH_HANS,
        "fields": {
            "story": "最终故事",
            "values": "价值观（V1\u2013V5）",
            "rewrites": "显性句改写",
            "model_verdicts": "LLM 评审输出（仅供参考）",
        },
        "questions": {
            "rewrite_improvement": {
                "label": "A) 改写改进（含蓄程度）",
                "prompt": "对显性句改写中的每条建议改写，判断与一致性故事中的原句相比，它是否改进了含蓄/间接的表达。",
                "help": "只评判隐含性/含蓄程度（如果语法影响含蓄程度，可以考虑语法）。如果改写变得更直白或引入了矛盾，"
                "给 0（或低分）。",
                "options": {"0": "没有更好", "1": "1 = 略好", "2": "2", "3": "3", "4": "4", "5": "5 = 好得多"},
                "repeat_label": "显性句改写 {n}",
                "show": {"before": "改写前（一致性故事中的原句）", "after": "改写后（显性句改写）"},
            },
            "consistency": {
                "label": "B) 每个价值观的一致性",
                "prompt": "在最终故事中，所有角色在每个价值观上是否一致？",
                "help": "如果某个角色从未提及某个价值观，且没有任何内容暗示相反的立场，则视为一致，除非故事暗示存在分歧。",
                "options": {
                    "0": "不一致（至少有一个角色与之矛盾/不认同它）",
                    "1": "一致（没有角色与该价值观相矛盾）",
                },
                "repeat_label": "V{n}",
                "show": {"statement": "陈述", "attitude": "态度"},
            },
            "reflection": {
                "label": "C) 每个价值观的体现",
                "prompt": "在最终故事中，每个价值观是否被隐含地体现（细心的读者无需明说也能合理地推断出来）？",
                "help": "\u201c隐含\u201d指没有\u201c我相信 X，因为……\u201d这类直截了当的陈述。请留意行为、选择、语气和对话中的线索。",
                "options": {"0": "未体现/无法合理推断", "1": "隐含地体现"},
                "repeat_label": "V{n}",
                "show": {"statement": "陈述", "attitude": "态度"},
            },
            "naturalness": {
                "label": "D) 对话自然度",
                "prompt": "最终故事读起来像自然的人类对话吗？",
                "help": "请考虑轮流与连贯、人设一致、语用、不冗余和可读性（小的拼写错误没关系；只有在影响清晰度或像人"
                "程度时才扣分）。",
                "options": {"1": "非常不自然", "2": "低于平均", "3": "可以接受", "4": "自然", "5": "非常自然"},
            },
        },
    },
    "de": {
        "title": "CQ-Bench: Validierung der Geschichten",
        "instructions": STORY_INSTRUCTIONS_DE,
        "fields": {
            "story": "Endgültige Geschichte",
            "values": "Werte (V1\u2013V5)",
            "rewrites": "Umformulierung offensichtlicher Zeilen",
            "model_verdicts": "Ausgaben der LLM-Judges (nur Hinweise)",
        },
        "questions": {
            "rewrite_improvement": {
                "label": "A) Verbesserung durch die Umformulierung (Subtilität)",
                "prompt": "Entscheiden Sie für jede vorgeschlagene Umformulierung offensichtlicher Zeilen, ob sie den "
                "subtilen/indirekten Ausdruck gegenüber der ursprünglichen Zeile in der konsistenten Geschichte "
                "verbessert.",
                "help": "Beurteilen Sie nur Implizitheit/Subtilität (Grammatik dürfen Sie berücksichtigen, wenn sie die "
                "Subtilität beeinflusst). Wird eine Umformulierung expliziter oder führt sie einen Widerspruch ein, "
                "vergeben Sie 0 (oder eine niedrige Bewertung).",
                "options": {
                    "0": "Nicht besser",
                    "1": "1 = etwas besser",
                    "2": "2",
                    "3": "3",
                    "4": "4",
                    "5": "5 = viel besser",
                },
                "repeat_label": "Umformulierung {n}",
                "show": {
                    "before": "Vorher (Zeile in der konsistenten Geschichte)",
                    "after": "Nachher (Umformulierung)",
                },
            },
            "consistency": {
                "label": "B) Konsistenz pro Wert",
                "prompt": "Stimmen in der endgültigen Geschichte alle Figuren bei jedem Wert überein?",
                "help": "Wenn eine Figur einen Wert nie erwähnt und nichts auf das Gegenteil hindeutet, gilt dies als "
                "konsistent, es sei denn, die Geschichte deutet auf eine Meinungsverschiedenheit hin.",
                "options": {
                    "0": "inkonsistent (mindestens eine Figur widerspricht ihm bzw. teilt ihn nicht)",
                    "1": "konsistent (keine Figur widerspricht dem Wert)",
                },
                "repeat_label": "V{n}",
                "show": {"statement": "Aussage", "attitude": "Haltung"},
            },
            "reflection": {
                "label": "C) Widerspiegelung pro Wert",
                "prompt": "Wird in der endgültigen Geschichte jeder Wert implizit widergespiegelt (eine aufmerksame "
                "Leserin oder ein aufmerksamer Leser könnte ihn vernünftigerweise erschließen, ohne dass er "
                "ausgesprochen wird)?",
                "help": "\u201eImplizit\u201c bedeutet: keine plumpen Aussagen wie \u201eIch glaube X, weil \u2026\u201c. "
                "Achten Sie auf Handlungen, Entscheidungen, Tonfall und Hinweise im Dialog.",
                "options": {
                    "0": "nicht widergespiegelt / nicht vernünftigerweise erschließbar",
                    "1": "implizit widergespiegelt",
                },
                "repeat_label": "V{n}",
                "show": {"statement": "Aussage", "attitude": "Haltung"},
            },
            "naturalness": {
                "label": "D) Natürlichkeit des Gesprächs",
                "prompt": "Liest sich die endgültige Geschichte wie ein natürliches menschliches Gespräch?",
                "help": "Berücksichtigen Sie Sprecherwechsel & Fluss, Konsistenz der Personas, Pragmatik, "
                "Redundanzfreiheit und Lesbarkeit (kleine Tippfehler sind in Ordnung; ziehen Sie nur dann Punkte ab, "
                "wenn Klarheit oder Menschenähnlichkeit leiden).",
                "options": {
                    "1": "sehr unnatürlich",
                    "2": "unterdurchschnittlich",
                    "3": "akzeptabel",
                    "4": "natürlich",
                    "5": "sehr natürlich",
                },
            },
        },
    },
}

TURING_INSTRUCTIONS_ZH_HANS = """\
我们以随机顺序向标注者呈现一条人类撰写的话语和一条模型生成的话语。对每一对，标注者在三个选项中进行选择：人类、模型或平局。

阅读两条话语，选出你认为是人写的那一条（另一条由语言模型生成）。只有在你无法区分两者的来源时才选择“平局”。选择平局记 0 分，表示标注者无法区分这两种来源。"""

TURING_INSTRUCTIONS_DE = """\
Wir zeigen den Annotierenden eine von einem Menschen geschriebene und eine von einem Modell erzeugte Äußerung in zufälliger Reihenfolge. Für jedes Paar wählen die Annotierenden eine von drei Optionen: Mensch, Modell oder Gleichstand.

Lesen Sie beide Äußerungen und wählen Sie die, die Ihrer Meinung nach von einem Menschen geschrieben wurde (die andere wurde von einem Sprachmodell erzeugt). Wählen Sie \u201eGleichstand\u201c nur, wenn Sie die beiden Quellen nicht unterscheiden können. Die Wahl \u201eGleichstand\u201c erhält den Wert 0: Die annotierende Person kann die beiden Quellen nicht unterscheiden."""

TURING_TRANSLATIONS: dict[str, Any] = {
    "zh-hans": {
        "title": "CQ-Bench 图灵式话语对",
        "instructions": TURING_INSTRUCTIONS_ZH_HANS,
        "fields": {"context": "话题", "human_utterance": "话语", "model_utterance": "话语"},
        "questions": {
            "human_written": {
                "label": "哪条话语是人写的？",
                "prompt": "这两条话语中，一条由人撰写，另一条由模型生成。哪一条是人写的？如果你无法区分两者的来源，"
                "请选择平局。",
            },
        },
    },
    "de": {
        "title": "CQ-Bench: Turing-Test mit Äußerungspaaren",
        "instructions": TURING_INSTRUCTIONS_DE,
        "fields": {"context": "Thema", "human_utterance": "Äußerung", "model_utterance": "Äußerung"},
        "questions": {
            "human_written": {
                "label": "Welche Äußerung stammt von einem Menschen?",
                "prompt": "Eine dieser beiden Äußerungen wurde von einem Menschen geschrieben, die andere von einem "
                "Modell erzeugt. Welche stammt von einem Menschen? Wählen Sie \u201eGleichstand\u201c, wenn Sie die "
                "beiden Quellen nicht unterscheiden können.",
            },
        },
    },
}

VALUE_EXTRACTION_INSTRUCTIONS_ZH_HANS = """\
你将看到两组文本：一组预测的价值观和一组真值（ground truth）价值观。你的任务是判断有多少个真值价值观在预测的价值观中得到了完整体现。如果一个真值价值观的所有组成部分都在预测的价值观中得到了有意义的讨论，即使不存在精确的一一对应，也视为正确。它可以是多对一的对应，即多个价值观对应一个真值价值观。如果真值价值观被完整呈现，记 1 分；如果被部分呈现，记 0.5 分；如果完全没有提及，记 0 分。

我们将\u201c部分呈现\u201d定义为：输出提到了相同的主题，但缺乏足够的具体性。"""

VALUE_EXTRACTION_INSTRUCTIONS_DE = """\
Sie erhalten zwei Mengen von Texten: eine Menge vorhergesagter Werte und eine Ground-Truth-Menge von Werten. Ihre Aufgabe ist festzustellen, wie viele der Ground-Truth-Werte in den vorhergesagten Werten vollständig abgebildet sind. Ein Ground-Truth-Wert gilt als korrekt, wenn alle seine Bestandteile im vorhergesagten Wert sinnvoll behandelt werden, auch wenn es keine exakte 1-zu-1-Entsprechung gibt. Es kann eine n-zu-1-Entsprechung sein, d. h. mehrere Werte zu einem Ground-Truth-Wert. Ist der Ground-Truth-Wert vollständig dargestellt, vergeben Sie 1, ist er teilweise dargestellt, 0,5, wird er überhaupt nicht erwähnt, 0.

\u201eTeilweise dargestellt\u201c definieren wir als eine Ausgabe, die dasselbe Thema anspricht, aber nicht spezifisch genug ist."""

VALUE_EXTRACTION_TRANSLATIONS: dict[str, Any] = {
    "zh-hans": {
        "title": "CQ-Bench 价值观抽取评分",
        "instructions": VALUE_EXTRACTION_INSTRUCTIONS_ZH_HANS,
        "fields": {"values": "真值价值观", "predicted_values": "预测的价值观"},
        "questions": {
            "value_extraction": {
                "label": "预测的价值观中的真值价值观",
                "prompt": "这个真值价值观是否在预测的价值观中得到呈现？如果一个真值价值观的所有组成部分都在预测的价值观"
                "中得到了有意义的讨论，即使不存在精确的一一对应，也视为正确。它可以是多对一的对应，即多个价值观对应"
                "一个真值价值观。",
                "help": "\u201c部分呈现\u201d：输出提到了相同的主题，但缺乏足够的具体性。",
                "options": {"1": "1 = 完整呈现", "0.5": "0.5 = 部分呈现", "0": "0 = 完全没有提及"},
                "repeat_label": "真值 {n}",
                "show": {"statement": "陈述", "attitude": "态度"},
            },
        },
    },
    "de": {
        "title": "CQ-Bench: Bewertung der Werteextraktion",
        "instructions": VALUE_EXTRACTION_INSTRUCTIONS_DE,
        "fields": {"values": "Ground-Truth-Werte", "predicted_values": "Vorhergesagte Werte"},
        "questions": {
            "value_extraction": {
                "label": "Ground-Truth-Wert in den vorhergesagten Werten",
                "prompt": "Ist dieser Ground-Truth-Wert in den vorhergesagten Werten dargestellt? Ein Ground-Truth-Wert "
                "gilt als korrekt, wenn alle seine Bestandteile im vorhergesagten Wert sinnvoll behandelt werden, auch "
                "wenn es keine exakte 1-zu-1-Entsprechung gibt. Es kann eine n-zu-1-Entsprechung sein, d. h. mehrere "
                "Werte zu einem Ground-Truth-Wert.",
                "help": "\u201eTeilweise dargestellt\u201c: eine Ausgabe, die dasselbe Thema anspricht, aber nicht "
                "spezifisch genug ist.",
                "options": {
                    "1": "1 = vollständig dargestellt",
                    "0.5": "0,5 = teilweise dargestellt",
                    "0": "0 = überhaupt nicht erwähnt",
                },
                "repeat_label": "Ground-Truth-Wert {n}",
                "show": {"statement": "Aussage", "attitude": "Haltung"},
            },
        },
    },
}
