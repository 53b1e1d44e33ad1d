"""Numbers written as text, shown in the page's language (issue 35).

The statistics core and the paper tables format their numbers themselves (``0.82 [0.75, 0.88]``)
and the downloads keep that paper English. A page shows them the way its language writes
numbers: :func:`localize_numbers` swaps the decimal point for the language's separator
(Django's ``DECIMAL_SEPARATOR`` of the active language: ``0,82`` in German) and, where that
separator is a comma, separates an interval's bounds, and the numbers of a list, with a semicolon (``[0,75; 0,88]``),
as a comma between them would read as one more decimal comma."""

from __future__ import annotations

import re

from django.utils import formats

#: a decimal number standing alone: not a part of a name ("Qwen2.5", "gpt-4.1", a path), not a
#: version ("1.2.3"); callers pass numbers and values, not prose with "Sec. 4.2" in it
DECIMAL = re.compile(r"(?<![\w./-])([-−+]?\d+)\.(\d+)(?![\w.])")
#: the comma between an interval's two bounds once the decimals carry commas
BOUNDS = re.compile(r"([\[(][-−+]?\d[\d,]*%?), ([-−+]?\d[\d,]*%?[\])])")
#: the comma after a number with a decimal comma, before another number (a list: "0,35; 0,6")
LIST = re.compile(r"(\d,\d+%?), (?=[-−+]?\d)")


def decimal_separator() -> str:
    """The active language's decimal separator ("." in English and Chinese, "," in German)."""
    return str(formats.get_format("DECIMAL_SEPARATOR"))


def localize_numbers(text: str) -> str:
    """``text`` with its decimal numbers written as the active language writes them."""
    if not isinstance(text, str) or not text:
        return text
    separator = decimal_separator()
    if separator == ".":
        return text
    out = DECIMAL.sub(lambda m: f"{m.group(1)}{separator}{m.group(2)}", text)
    if separator == ",":
        out = LIST.sub(r"\1; ", BOUNDS.sub(r"\1; \2", out))
    return out
