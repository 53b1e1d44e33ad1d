"""The wording of the pairwise-preference protocol of Zheng et al. (NeurIPS 2023 Datasets and
Benchmarks), "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena": the annotators'
instructions (ours, after Sec. 2.3 and 4.1: a question, two anonymous answers, "A better / B
better / tie") with their translations, and the paper's pairwise judge prompt (Fig. 5, the
"pair-v2" prompt of its code), verbatim."""

from __future__ import annotations

from typing import Any

PREFERENCE_INSTRUCTIONS = """\
You see a user's question and the answers of two AI assistants. The assistants are anonymous and their order is random: do not guess which model wrote which answer.

Choose the answer that follows the user's instructions and answers the question better. Consider helpfulness, relevance, accuracy, depth, creativity and level of detail. Do not let the length of an answer or the order in which the answers are shown influence you. Choose "Tie" if both answers are equally good or equally bad.

You may say in a sentence why you chose as you did."""

# Fig. 5 ("The default prompt for pairwise comparison"), verbatim: "[[A]]", "[[B]]" or "[[C]]"
# (a tie) ends the reply; judges/parsers.py reads it (parse_pair_verdict). Assistant A is the
# answer shown first, so the position-bias check (PairOrder) swaps the two answers.
PAIR_JUDGE_SYSTEM = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by two AI assistants to "
    "the user question displayed below. You should choose the assistant that follows the user's instructions and "
    "answers the user's question better. Your evaluation should consider factors such as the helpfulness, "
    "relevance, accuracy, depth, creativity, and level of detail of their responses. Begin your evaluation by "
    "comparing the two responses and provide a short explanation. Avoid any position biases and ensure that the "
    "order in which the responses were presented does not influence your decision. Do not allow the length of the "
    "responses to influence your evaluation. Do not favor certain names of the assistants. Be as objective as "
    "possible. After providing your explanation, output your final verdict by strictly following this format: "
    '"[[A]]" if assistant A is better, "[[B]]" if assistant B is better, and "[[C]]" for a tie.'
)
PAIR_JUDGE_USER = (
    "[User Question]\n{prompt}\n\n[The Start of Assistant A's Answer]\n{response_a}\n[The End of Assistant A's "
    "Answer]\n\n[The Start of Assistant B's Answer]\n{response_b}\n[The End of Assistant B's Answer]"
)

PREFERENCE_INSTRUCTIONS_ZH_HANS = """\
你会看到一位用户的问题和两个 AI 助手的回答。助手是匿名的，顺序是随机的：请不要猜测哪个模型写了哪个回答。

请选择更好地遵循用户指示、更好地回答问题的那个回答。请考虑有用性、相关性、准确性、深度、创造性和详细程度。不要让回答的长度或回答的展示顺序影响你的判断。如果两个回答同样好或同样差，请选择“平局”。

你可以用一句话说明你为什么这样选择。"""

PREFERENCE_INSTRUCTIONS_DE = """\
Sie sehen die Frage einer Nutzerin oder eines Nutzers und die Antworten zweier KI-Assistenten. Die Assistenten sind anonym und ihre Reihenfolge ist zufällig: Raten Sie nicht, welches Modell welche Antwort geschrieben hat.

Wählen Sie die Antwort, die den Anweisungen besser folgt und die Frage besser beantwortet. Berücksichtigen Sie Hilfsbereitschaft, Relevanz, Richtigkeit, Tiefe, Kreativität und Detailgrad. Lassen Sie sich weder von der Länge einer Antwort noch von der Reihenfolge, in der die Antworten gezeigt werden, beeinflussen. Wählen Sie \u201eGleichstand\u201c, wenn beide Antworten gleich gut oder gleich schlecht sind.

Sie können in einem Satz sagen, warum Sie so gewählt haben."""

PREFERENCE_TRANSLATIONS: dict[str, Any] = {
    "zh-hans": {
        "title": "成对偏好（Chatbot Arena / MT-Bench）",
        "instructions": PREFERENCE_INSTRUCTIONS_ZH_HANS,
        "fields": {
            "prompt": "用户问题",
            "response_a": "回答",
            "response_b": "回答",
        },
        "questions": {
            "preference": {
                "label": "哪个回答更好？",
                "prompt": "哪个回答更好地遵循了用户的指示并回答了问题？如果两者同样好或同样差，请选择平局。",
            },
            "reason": {
                "label": "理由（可选）",
                "prompt": "用一句话说明你为什么这样选择。",
            },
        },
    },
    "de": {
        "title": "Paarweise Präferenz (Chatbot Arena / MT-Bench)",
        "instructions": PREFERENCE_INSTRUCTIONS_DE,
        "fields": {
            "prompt": "Frage der Nutzerin / des Nutzers",
            "response_a": "Antwort",
            "response_b": "Antwort",
        },
        "questions": {
            "preference": {
                "label": "Welche Antwort ist besser?",
                "prompt": "Welche Antwort folgt den Anweisungen besser und beantwortet die Frage besser? Wählen Sie "
                "\u201eGleichstand\u201c, wenn beide gleich gut oder gleich schlecht sind.",
            },
            "reason": {
                "label": "Begründung (optional)",
                "prompt": "Sagen Sie in einem Satz, warum Sie so gewählt haben.",
            },
        },
    },
}
