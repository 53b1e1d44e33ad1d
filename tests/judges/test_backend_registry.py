"""One way to extend (issue 32): a judge backend is one class plus one registry entry
(``judges/registry.py``). A toy backend registered here, in the test alone, is offered by the
judge form and the API, has its parameters as fields and checked, is made, runs on its class's
queue and stores its answers as a rater's; once its entry is removed nothing offers it.

If any reader kept its own list of backends (the form's choices, the model's choices, the
form's fields, the queues, the builders), a step below would fail for the toy backend."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.models import Annotation
from annotation.rubric import Rubric
from benchmarks.registry import get_preset
from core.errors import DomainError
from judges import configuration
from judges import forms as param_forms
from judges import params as judge_params
from judges.backends import embedding, local_transformers
from judges.backends.base import (
    DIRECT,
    ENSEMBLE,
    BackendEntry,
    BackendUnavailable,
    JudgeBackend,
    JudgeItem,
    JudgeSpec,
    Verdict,
)
from judges.models import JudgeConfig
from judges.registry import BACKENDS, backend_choices, backend_for, get_backend

from .helpers import project_with_demo
from .test_judge_runs import run_all, start

pytestmark = pytest.mark.django_db

PRESET = "cultivate.faithfulness"
QUESTIONS = ("faith", "hal", "exag")
TOY_MODES = {"constant": QUESTIONS}


class ConstantBackend(JudgeBackend):
    """Gives every item ``params.score`` on each question it answers: a judge that needs no
    model, so the test shows the platform's side of a backend and nothing else."""

    queue = "api"  # not the default queue: a run must take it from the class

    def __init__(self, spec) -> None:
        super().__init__(spec)
        self.mode = spec.direct_mode("constant", TOY_MODES)
        self.score = int(spec.params.get("score", 3))

    def judge(self, items: Sequence[JudgeItem], passes: Sequence[int]) -> list[Verdict]:
        answers = dict.fromkeys(self.spec.questions, self.score)
        return [
            Verdict(item.item_id, p, json.dumps({"score": self.score}), dict(answers)) for item in items for p in passes
        ]


#: the one registry entry (a real backend's sits beside its class, listed in judges/registry.py)
TOY = BackendEntry(
    key="toy_constant",
    label="Toy constant judge",
    model_help="Model id: empty for %(model)s.",
    family=DIRECT,
    runner=ConstantBackend,
    params=(judge_params.Param("score", judge_params.INT, "The score every item gets.", default=3, min=1, max=5),),
    modes=TOY_MODES,
    default_model="toy-v1",
)


def form_data(**fields: str) -> dict:
    data = {
        "name": "toy",
        "backend": TOY.key,
        "questions": ", ".join(QUESTIONS),
        "passes": 1,
        "combine": "mean",
        "params": "{}",
        param_forms.field_name(TOY.key, "mode"): "constant",
    }
    data.update({param_forms.field_name(TOY.key, k): v for k, v in fields.items()})
    return data


def test_a_backend_added_by_one_registry_entry_works_end_to_end_and_leaves_nothing_when_removed(
    client, researcher, tmp_path, django_capture_on_commit_callbacks
):
    project = project_with_demo(PRESET, researcher, tmp_path)
    client.force_login(researcher)
    page = reverse("judges", args=[project.id])
    assert TOY.key not in BACKENDS
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(BACKENDS, TOY.key, TOY)

        # the judge form offers it, with its section: what it answers, its model help, its fields
        html = client.get(page).content.decode()
        assert f'<option value="{TOY.key}">Toy constant judge</option>' in html
        assert f'data-testid="backend-{TOY.key}"' in html and "Model id: empty for toy-v1." in html
        assert f'name="{param_forms.field_name(TOY.key, "score")}"' in html
        assert '<option value="constant">' in html and "mode constant" in html

        # its declared parameters are checked on their field; nothing is made
        resp = client.post(page, form_data(score="9"))
        assert resp.status_code == 400
        assert "between 1 and 5" in " ".join(resp.context["form"].errors[param_forms.field_name(TOY.key, "score")])
        assert not JudgeConfig.objects.filter(project=project).exists()

        # made from the form: the registry's builder for its family, its default model recorded
        assert client.post(page, form_data(score="4")).status_code == 302
        config = JudgeConfig.objects.get(project=project, name="toy")
        assert (config.backend, config.params, config.questions) == (
            TOY.key,
            {"mode": "constant", "score": 4},
            list(QUESTIONS),
        )
        assert (config.rater.backend, config.rater.model_id, config.model_id) == (TOY.key, "toy-v1", "toy-v1")
        config.clean()  # the model's validation reads the registry too
        assert config.get_backend_display() == "Toy constant judge"

        # and from the API (the serializer's choices are the model field's)
        api = reverse("api_judges", args=[project.id])
        body = {"name": "toy-api", "backend": TOY.key, "questions": list(QUESTIONS), "params": {"mode": "constant"}}
        resp = client.post(api, body, content_type="application/json")
        assert resp.status_code == 201, resp.content

        # a run goes to its class's queue and stores the answers as the judge rater's annotations
        run = start(config, django_capture_on_commit_callbacks)
        assert run.queue == "api"
        run = run_all(run)
        assert run.status == "done", run.message
        n = project.items.count()
        answers = list(Annotation.objects.filter(rater=config.rater).values_list("answers", flat=True))
        assert len(answers) == n and all(a == {"faith": 4, "hal": 4, "exag": 4} for a in answers)

        # its page lists its parameters as declared
        detail = client.get(reverse("judge_detail", args=[project.id, config.id])).content.decode()
        assert "The score every item gets." in detail

    # removed: nothing offers it any more, and nothing makes or validates a judge of it
    assert TOY.key not in BACKENDS and TOY.key not in dict(backend_choices())
    html = client.get(page).content.decode()
    assert f'value="{TOY.key}"' not in html and f"backend-{TOY.key}" not in html and f"p-{TOY.key}-" not in html
    assert f"<td>{TOY.key}</td>" in html  # the judge made of it is still listed, by its key
    resp = client.post(page, form_data(score="4") | {"name": "again"})
    assert resp.status_code == 400 and "backend" in resp.context["form"].errors
    with pytest.raises(DomainError, match="unknown backend 'toy_constant'"):
        configuration.create_judge_config(project=project, name="again", backend=TOY.key, questions=list(QUESTIONS))
    with pytest.raises(ValidationError):
        config.clean()
    resp = client.post(api, {**body, "name": "again"}, content_type="application/json")
    assert resp.status_code == 400 and "backend" in resp.json()
    assert client.get(reverse("judge_detail", args=[project.id, config.id])).status_code == 200  # its judge still shows


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"key": "k" * 21}, "1 to 20 characters"),
        ({"family": "oracle"}, "family is one of"),
        ({"modes": {}}, "declares its modes"),
        ({"family": ENSEMBLE, "modes": {}}, "names the class that runs it"),
    ],
)
def test_an_entry_the_platform_cannot_store_or_run_is_refused_when_written(changes, message):
    fields = {
        "key": TOY.key,
        "label": TOY.label,
        "model_help": TOY.model_help,
        "family": DIRECT,
        "runner": ConstantBackend,
        "modes": TOY_MODES,
    }
    with pytest.raises(ValueError, match=message):
        BackendEntry(**(fields | changes))


def test_every_registered_backend_is_offered_and_runs_on_its_class_queue():
    """The registry is the one list: the model's and the form's choices are its keys, in its
    order, and each entry's queue is its class's (the queue names users and workers know)."""
    keys = list(BACKENDS)
    assert [k for k, _ in JudgeConfig._meta.get_field("backend").choices] == keys
    assert keys == [
        "openai_chat",
        "transformers",
        "embedding",
        "image_similarity",
        "clip_similarity",
        "ahead",
        "ensemble",
    ]
    queues = {k: get_backend(k).queue for k in keys}
    assert queues == {
        "openai_chat": "api",
        "transformers": "gpu",
        "embedding": "default",
        "image_similarity": "default",
        "clip_similarity": "gpu",
        "ahead": "gpu",
        "ensemble": "default",
    }
    with pytest.raises(KeyError, match="known backends: openai_chat"):
        get_backend("nope")
    spec = JudgeSpec("nope", "", {}, "none", (), {}, Rubric.from_schema(get_preset(PRESET).rubric))
    with pytest.raises(BackendUnavailable, match="unknown judge backend 'nope'"):
        backend_for(spec)  # a judge kept after its backend left the registry: its run fails, saying so


@pytest.mark.parametrize(
    ("module", "load"),
    [
        ("sentence_transformers", lambda: embedding.load_encoder("a-folder-not-loaded-before")),
        ("torch", lambda: local_transformers._torch()),
    ],
)
def test_a_model_judge_on_a_worker_without_the_judges_set_names_the_file_to_install(monkeypatch, module, load):
    """`make run` installs only the runtime set (no torch): a model judge run on that worker fails
    with the reason and what to install, not an ImportError."""
    monkeypatch.setitem(sys.modules, module, None)  # import of it raises ImportError
    with pytest.raises(BackendUnavailable) as caught:
        load()
    assert "requirements-judges.txt" in str(caught.value)
    assert "HV_MODEL_JUDGES=1" in str(caught.value)
