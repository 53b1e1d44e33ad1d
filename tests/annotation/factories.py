"""Small factories for the human side: users, projects from presets, imported items."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from PIL import Image

from annotation import projects
from annotation.models import Project
from demo.management.commands.seed_demo import researchers_group


def make_user(username: str, *, researcher: bool = False, superuser: bool = False):
    user = get_user_model().objects.create_user(username=username, password="pw-" + username)
    if superuser:
        user.is_superuser = user.is_staff = True
        user.save()
    if researcher:
        user.groups.add(researchers_group())
    return user


def make_project(preset_key: str, *, owner, annotators=(), k: int | None = None, name: str = "P") -> Project:
    project = projects.create_project(name=name, preset_key=preset_key, created_by=owner, k_per_item=k)
    for a in annotators:
        projects.add_member(project=project, user=a, role="annotator")
    return project


def png_bytes(color=(200, 30, 30), size=(32, 24), fmt="PNG") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format=fmt)
    return out.getvalue()


def jsonl(records: list[Any]) -> str:
    return "\n".join(json.dumps(r) for r in records) + "\n"


def turing_records(n: int, start: int = 0) -> list[dict]:
    return [
        {
            "id": f"t{i}",
            "human_utterance": f"human says {i}",
            "model_utterance": f"model says {i}",
            "country": "Japan" if i % 2 else "Germany",
        }
        for i in range(start, start + n)
    ]


def valueground_records(folder: Path, n: int = 2) -> list[dict]:
    records = []
    for i in range(n):
        (folder / f"a{i}.png").write_bytes(png_bytes((10 * i, 100, 100)))
        (folder / f"b{i}.png").write_bytes(png_bytes((100, 10 * i, 100)))
        records.append(
            {
                "id": f"vg{i}",
                "question": "How important is family?",
                "option_a": "Very",
                "option_b": "Not at all",
                "image_a": f"a{i}.png",
                "image_b": f"b{i}.png",
                "generator": "gpt" if i % 2 else "gemini",
                "country": "China",
            }
        )
    return records


def zip_of(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, content in files.items():
            zf.writestr(name, content)
    return out.getvalue()
