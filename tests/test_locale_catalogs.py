"""The UI's translation catalogs (issue 14) are complete and shipped compiled:

- every message of every language in ``settings.LANGUAGES`` is translated, none fuzzy, and a
  translation uses the same ``%(name)s`` placeholders as its message;
- the committed ``.mo`` files hold exactly what the ``.po`` files say (running needs no gettext,
  so a stale ``.mo`` would silently show old words);
- the catalogs list exactly the messages the code and templates mark: ``makemessages`` run
  over a scratch copy finds nothing new and nothing gone (a newly marked string without a
  translation would otherwise show in English)."""

from __future__ import annotations

import ast
import gettext
import os
import re
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils.translation import to_locale

from tests.test_architecture import ROOMS

ROOT = Path(__file__).resolve().parent.parent
LOCALES = [to_locale(code) for code, _name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
#: what makemessages reads: every room of the order (tests/test_architecture.py) and the templates
#: (not tests, scripts or vendored static files)
SOURCES = [room for layer in ROOMS for room in layer] + ["templates"]
PLACEHOLDER = re.compile(r"%(?:\((\w+)\))?[-#0 +]*\d*(?:\.\d+)?[sdifr%]")


def read_po(path: Path) -> list[dict]:
    """The entries of a .po file: msgctxt, msgid, msgid_plural, msgstr (index -> text), flags."""
    entries, cur, field = [], None, None
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if not line.strip():
            if cur is not None:
                entries.append(cur)
            cur = None
            continue
        if cur is None:
            cur = {"msgctxt": None, "msgid": "", "msgid_plural": None, "msgstr": {}, "flags": set()}
        if line.startswith("#,"):
            cur["flags"] |= {f.strip() for f in line[2:].split(",")}
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            text = ast.literal_eval(line)
            if isinstance(field, int):
                cur["msgstr"][field] += text
            else:
                cur[field] = (cur[field] or "") + text
        else:
            keyword, rest = line.split(" ", 1)
            text = ast.literal_eval(rest)
            if keyword.startswith("msgstr["):
                field = int(keyword[7:-1])
                cur["msgstr"][field] = text
            elif keyword == "msgstr":
                field = 0
                cur["msgstr"][0] = text
            else:
                field = keyword
                cur[field] = text
    return entries


def po_path(locale: str) -> Path:
    return ROOT / "locale" / locale / "LC_MESSAGES" / "django.po"


def key(entry: dict) -> tuple:
    return entry["msgctxt"], entry["msgid"], entry["msgid_plural"]


def placeholders(text: str) -> set[str]:
    return {m.group(0) for m in PLACEHOLDER.finditer(text)}


@pytest.mark.parametrize("locale", LOCALES)
def test_every_message_is_translated_and_none_is_fuzzy(locale):
    entries = read_po(po_path(locale))
    header, messages = entries[0], entries[1:]
    assert header["msgid"] == "" and "charset=UTF-8" in header["msgstr"][0]
    assert len(messages) > 300
    for e in messages:
        assert "fuzzy" not in e["flags"], e["msgid"]
        assert e["msgstr"] and all(t.strip() for t in e["msgstr"].values()), f"untranslated: {e['msgid']!r}"
        if "python-format" in e["flags"]:
            wanted = placeholders(e["msgid"]) | placeholders(e["msgid_plural"] or "")
            for t in e["msgstr"].values():
                assert placeholders(t) == wanted, (e["msgid"], t)


def test_every_language_has_the_same_messages():
    sets = {locale: {key(e) for e in read_po(po_path(locale))} for locale in LOCALES}
    first = sets[LOCALES[0]]
    for locale, found in sets.items():
        assert found == first, (locale, found ^ first)


@pytest.mark.parametrize("locale", LOCALES)
def test_the_compiled_catalog_is_the_po_file(locale):
    """The .mo file as gettext reads it equals the .po file: same messages, same translations."""
    with (po_path(locale).with_suffix(".mo")).open("rb") as f:
        compiled = gettext.GNUTranslations(f)._catalog  # the catalog gettext serves from
    expected = {}
    for e in read_po(po_path(locale)):
        msgid = e["msgid"] if e["msgctxt"] is None else f"{e['msgctxt']}\x04{e['msgid']}"
        if msgid == "":  # the header: msgfmt leaves out the template's creation date
            expected[msgid] = "".join(
                line for line in e["msgstr"][0].splitlines(keepends=True) if not line.startswith("POT-Creation-Date:")
            )
        elif e["msgid_plural"] is None:
            expected[msgid] = e["msgstr"][0]
        else:
            for n, text in e["msgstr"].items():
                expected[(msgid, n)] = text
    assert compiled == expected


@pytest.mark.slow  # makemessages runs xgettext over every source file and template
def test_the_catalogs_list_exactly_the_marked_messages(tmp_path, settings):
    """``makemessages`` over a scratch tree (links to the sources, a copy of the catalogs) adds
    and removes nothing: every marked string has its translation, and none is left over."""
    if shutil.which("xgettext") is None:
        pytest.fail("xgettext (Debian's gettext) is needed to extract the messages: apt-get install gettext")
    for name in SOURCES:
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    shutil.copytree(ROOT / "locale", tmp_path / "locale")
    settings.LOCALE_PATHS = [tmp_path / "locale"]
    cwd = os.getcwd()
    os.chdir(tmp_path)  # makemessages walks the current folder
    try:
        call_command("makemessages", locale=LOCALES, symlinks=True, no_obsolete=True, verbosity=0)
    finally:
        os.chdir(cwd)
    for locale in LOCALES:
        extracted = {key(e) for e in read_po(tmp_path / "locale" / locale / "LC_MESSAGES" / "django.po")}
        committed = {key(e) for e in read_po(po_path(locale))}
        assert extracted - committed == set(), f"marked but not in locale/{locale}: run makemessages and translate"
        assert committed - extracted == set(), f"in locale/{locale} but no longer marked: run makemessages"


#: a translation call inside an f-string's braces: xgettext does not look there, so its message
#: never reaches the catalogs and the page shows English
CALL_IN_FSTRING = re.compile(r"""\bf(["'])[^"'\n]*\{\s*(?:_|gettext|ngettext|pgettext|gettext_lazy)\(""")


def test_no_message_is_marked_inside_an_f_string():
    root = Path(__file__).resolve().parent.parent
    found = [
        f"{path.relative_to(root)}:{n}"
        for room in SOURCES
        for path in sorted((root / room).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if CALL_IN_FSTRING.search(line)
    ]
    assert not found, "translate outside the f-string (xgettext misses these): " + ", ".join(found)


def test_the_f_string_check_catches_a_call():
    assert CALL_IN_FSTRING.search("""    what = f"{what}, {_('or null')}" """)
    assert not CALL_IN_FSTRING.search("""    what = _("%(what)s, or null") % {"what": what}""")
