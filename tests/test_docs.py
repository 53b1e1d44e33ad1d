"""The README is an entry and the docs stay true to the tree.

- README.md has at most 200 lines (the manual lives in docs/);
- every relative markdown link in README.md and docs/*.md names a file that exists and, with
  `#anchor`, a heading of that file (GitHub's slugs);
- every repository path written in backticks (`hvstats/ppi.py`, `docs/`, `requirements.txt`)
  exists, so a moved or renamed module shows up here instead of in a reader's shell.

Each failure lists the file, the line and what is broken.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
DOC_FILES = [README, *DOCS]

README_MAX_LINES = 200

# The top-level rooms of the house (../shared/ARCHITECTURE.md), whether or not they exist yet,
# and whatever the repository holds at its top level: a backticked path starting with one of
# these is a claim about the tree.
ROOMS = {
    "config",
    "core",
    "hvstats",
    "benchmarks",
    "annotation",
    "accounts",
    "studies",
    "judges",
    "agreement",
    "curation",
    "annotate",
    "demo",
    "templates",
    "static",
    "tests",
    "perf",
    "docs",
    "scripts",
    "locale",
}
PATH_SUFFIXES = (".py", ".md", ".txt", ".lock", ".toml", ".yml", ".yaml", ".ini", ".js", ".css")
PLACEHOLDER_CHARS = set("<>*{}…$|")

LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"(`+)(?P<code>.+?)\1")
HEADING = re.compile(r"^(#{1,6})\s+(?P<title>.+?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def _top_level_names() -> set[str]:
    try:
        listed = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listed = [p.name for p in ROOT.iterdir()]
    return {name.split("/", 1)[0] for name in listed}


KNOWN_TOP = ROOMS | _top_level_names()


def _prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of the lines outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def github_slug(title: str) -> str:
    """The anchor GitHub gives a heading: rendered text, lower case, punctuation dropped."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", title)  # links render as their text
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"<[^>]+>", "", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for _, line in _prose_lines(path):
        match = HEADING.match(line)
        if not match:
            continue
        slug = github_slug(match["title"])
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _without_code_spans(line: str) -> str:
    return CODE_SPAN.sub("", line)


def broken_links(path: Path) -> list[str]:
    problems = []
    for number, line in _prose_lines(path):
        for match in LINK.finditer(_without_code_spans(line)):
            target = match["target"].strip("<>")
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            where = f"{_rel(path)}:{number}: [{match['text']}]({target})"
            if not linked.exists():
                problems.append(f"{where}: {file_part} does not exist")
                continue
            if anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                problems.append(f"{where}: no heading #{anchor} in {_rel(linked)}")
    return problems


def _clean(token: str) -> str:
    token = token.strip("\"'(")
    token = re.sub(r":\d+(-\d+)?$", "", token)  # file.py:12
    return token.rstrip(".,:;)!?\"'")


def repository_path(token: str) -> str | None:
    """The token as a repository path, or None when it does not claim one."""
    token = _clean(token)
    if not token or "://" in token or token.startswith(("/", "~", "-")):
        return None
    if PLACEHOLDER_CHARS & set(token) or "..." in token:
        return None
    if "/" not in token and not token.endswith(PATH_SUFFIXES):
        return None
    if token.split("/", 1)[0] not in KNOWN_TOP:
        return None
    return token


def broken_paths(path: Path) -> list[str]:
    problems = []
    for number, line in _prose_lines(path):
        for match in CODE_SPAN.finditer(line):
            for token in match["code"].split():
                claimed = repository_path(token)
                if claimed and not (ROOT / claimed).exists():
                    problems.append(f"{_rel(path)}:{number}: `{claimed}` does not exist")
    return problems


def test_readme_is_an_entry_not_a_manual():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines; at most {README_MAX_LINES}: move detail to docs/"
    )


@pytest.mark.parametrize("path", DOC_FILES, ids=_rel)
def test_relative_links_name_existing_files_and_headings(path):
    problems = broken_links(path)
    assert not problems, "broken links:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", DOC_FILES, ids=_rel)
def test_backticked_repository_paths_exist(path):
    problems = broken_paths(path)
    assert not problems, "paths that do not exist:\n" + "\n".join(problems)


def test_docs_pages_are_checked():
    names = {p.name for p in DOCS}
    assert {"architecture.md", "benchmarks.md"} <= names


def test_the_checks_catch_what_they_should():
    assert github_slug("Protocol presets (`benchmarks/`)") == "protocol-presets-benchmarks"
    assert github_slug("Runs, 2026-11-24 (the latest)") == "runs-2026-11-24-the-latest"
    assert repository_path("hvstats/ppi.py:") == "hvstats/ppi.py"
    assert repository_path("core/heartbeat.py:12") == "core/heartbeat.py"
    assert repository_path("annotate/hotpath.py,") == "annotate/hotpath.py"
    assert repository_path("requirements-gpu.lock") == "requirements-gpu.lock"
    assert repository_path("benchmarks/<protocol>.py") is None
    assert repository_path("/projects/<id>/design/") is None
    assert repository_path("/api/docs/") is None
    assert repository_path("locale/*/django.po") is None
    assert repository_path("https://download.pytorch.org/whl/cpu") is None
    assert repository_path("var/db.sqlite3") is None
    assert repository_path("benchmarks.base.Preset") is None


def test_broken_links_and_paths_are_listed_with_file_and_line(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other page\n\n## A `code` heading: here\n")
    page.write_text(
        "# Page\n"
        "[fine](other.md#a-code-heading-here) [fine too](#page) [web](https://example.org)\n"
        "[gone](missing.md) [no anchor](other.md#nowhere)\n"
        "`hvstats/` `hvstats/no_such_module.py`, `/api/projects/<id>/` `benchmarks/<paper>/`\n"
        "```\n`hvstats/ignored_in_code_block.py` [x](ignored.md)\n```\n"
    )
    assert broken_links(page) == [
        f"{page}:3: [gone](missing.md): missing.md does not exist",
        f"{page}:3: [no anchor](other.md#nowhere): no heading #nowhere in {tmp_path / 'other.md'}",
    ]
    assert broken_paths(page) == [f"{page}:4: `hvstats/no_such_module.py` does not exist"]


def room_map_problems(text: str) -> list[str]:
    """The files the room map of docs/architecture.md names: each entry of its code block starts
    with a folder (``core/``) and names that folder's files (``errors.py``, ``backends/``,
    ``exports/items.py``, ``management/commands/seed_demo.py``); each must exist under it."""
    block = text.split("## The rooms", 1)[1].split("```", 2)[1]
    problems, room = [], None
    for number, line in enumerate(block.splitlines(), 1):
        head = re.match(r"^([a-z_]+/)\s", line)
        if head:
            room = head.group(1)
        if room is None:
            continue
        for name in re.findall(r"[\w/]+\.(?:py|md)\b|\b[a-z_]+/(?=[\s,);:])", line[len(room) if head else 0 :]):
            found = (ROOT / room / name).exists() or any((ROOT / room).rglob(Path(name).name))
            if not found:
                problems.append(f"room map line {number}: {room}{name} does not exist")
    return problems


def test_the_room_map_names_existing_files():
    """Every file the map of the rooms names exists where it says (the map drifted before)."""
    problems = room_map_problems((ROOT / "docs" / "architecture.md").read_text())
    assert not problems, "\n".join(problems)


def test_the_room_map_check_catches_a_missing_file():
    text = "## The rooms\n\n```\ncore/         the one error (errors.py) and a ghost (ghost.py)\n```\n"
    assert room_map_problems(text) == ["room map line 2: core/ghost.py does not exist"]
