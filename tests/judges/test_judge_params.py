"""Judge parameters as forms (issue 14, point 3): every backend's parameters are declared once
(``judges/params.py``), and the declaration is what the form shows, what the service and the
backends check, and what the judge page lists.

- every parameter a backend reads (found in its source) is declared, and every declared one is
  read; the declared defaults are the ones the backends fall back to;
- the judge form shows each backend's fields and what it can answer in the project; posting the
  fields makes the same judge as posting the JSON; bad values are field errors and make nothing;
- the judge page shows the parameters as a table (secrets hidden) and what the judge decides;
- only the project's researchers see or post any of it."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import Rater
from benchmarks.registry import PRESETS
from core.errors import DomainError
from judges import capabilities, configuration, endpoints, runs
from judges import forms as param_forms
from judges import params as judge_params
from judges.backends.base import FILTER_FLAGS
from judges.models import JudgeConfig
from judges.registry import BACKENDS, get_backend
from tests.annotation.factories import make_project, make_user

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
#: the backends that declare parameters (all but the ensemble), and the prompt-less ones' modes
ALL = tuple(key for key, entry in BACKENDS.items() if entry.params is not None)
DIRECT_MODES = {key: entry.modes for key, entry in BACKENDS.items() if entry.modes}


def schema(backend: str) -> tuple[judge_params.Param, ...]:
    return get_backend(backend).schema()


def declared(backend: str, name: str) -> judge_params.Param | None:
    return get_backend(backend).declared(name)


GENERATIVE = ("openai_chat", "transformers")

# which backends read the parameters a source file reads (an AHEaD judge hands every parameter
# it does not read itself to its extractor, an OpenAI-compatible or a transformers backend)
FILE_BACKENDS: dict[str, tuple[str, ...]] = {
    "judges/backends/openai_chat.py": ("openai_chat", "ahead"),
    "judges/backends/local_transformers.py": ("transformers", "ahead"),
    "judges/backends/embedding.py": ("embedding",),
    "judges/backends/image_similarity.py": ("image_similarity",),
    "judges/backends/clip_similarity.py": ("clip_similarity",),
    "judges/backends/ahead.py": ("ahead",),
    "judges/ahead.py": ("ahead",),
    "judges/endpoints.py": ("openai_chat", "ahead"),
}
# in the shared files, by function
FUNCTION_BACKENDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("judges/backends/base.py", "image_fields"): ALL,  # JudgeSpec.image_fields: the images sent
    ("judges/backends/base.py", "judge"): GENERATIVE,  # GenerativeBackend.judge: the seed
    ("judges/backends/base.py", "filter_thresholds"): ("image_similarity", "clip_similarity"),
    ("judges/backends/base.py", "direct_mode"): tuple(DIRECT_MODES),  # JudgeSpec.direct_mode: params.mode
    ("judges/runs.py", "start_judge_run"): ALL,
    ("judges/execution.py", "_execute_chunk"): ALL,
    ("judges/configuration.py", "direct_mode"): tuple(DIRECT_MODES),
}
# reads through a variable named like the parameters that are not a judge's parameters
NOT_PARAMS = {
    ("judges/backends/openai_chat.py", "_content"),  # a reply's content part
    ("judges/execution.py", "combine_labels"),  # one pass's classifier labels
}


def _receiver(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id in ("p", "params")) or (
        isinstance(node, ast.Attribute) and node.attr == "params"
    )


class Reads(ast.NodeVisitor):
    """``p.get("x", default)``, ``p["x"]``, ``"x" in p`` and ``{k: p[k] for k in (...) if k in p}``
    on ``p``, ``params`` or ``<anything>.params``, by enclosing function."""

    def __init__(self, module) -> None:
        self.module = module
        self.stack: list[str] = []
        self.found: list[tuple[str, str, ast.AST | None]] = []  # (function, name, default expression)
        self.unresolved: list[tuple[str, str]] = []
        self.comprehension_names: set[str] = set()

    def visit_FunctionDef(self, node) -> None:
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    def visit_AsyncFunctionDef(self, node) -> None:
        self.visit_FunctionDef(node)

    def _add(self, key: ast.AST, default: ast.AST | None = None) -> None:
        function = self.stack[-1] if self.stack else "<module>"
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            self.found.append((function, key.value, default))
        elif isinstance(key, ast.Name) and isinstance(getattr(self.module, key.id, None), str):
            self.found.append((function, getattr(self.module, key.id), default))  # a module constant
        elif not (isinstance(key, ast.Name) and key.id in self.comprehension_names):
            self.unresolved.append((function, ast.unparse(key)))

    def visit_DictComp(self, node) -> None:
        for gen in node.generators:
            over_params = any(isinstance(c, ast.Compare) and _receiver(c.comparators[0]) for c in gen.ifs)
            if isinstance(gen.iter, ast.Tuple) and isinstance(gen.target, ast.Name) and over_params:
                self.comprehension_names.add(gen.target.id)
                for element in gen.iter.elts:
                    self._add(element)
        self.generic_visit(node)

    def visit_Call(self, node) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and _receiver(func.value) and node.args:
            self._add(node.args[0], node.args[1] if len(node.args) > 1 else None)
        self.generic_visit(node)

    def visit_Subscript(self, node) -> None:
        if _receiver(node.value):
            self._add(node.slice)
        self.generic_visit(node)

    def visit_Compare(self, node) -> None:
        if len(node.ops) == 1 and isinstance(node.ops[0], ast.In) and _receiver(node.comparators[0]):
            self._add(node.left)
        self.generic_visit(node)


def backend_reads() -> dict[str, dict[str, list[tuple[str, ast.AST | None]]]]:
    """backend -> parameter -> [(where, default expression)] as the sources read them."""
    out: dict[str, dict[str, list]] = {b: {} for b in ALL}
    files = {*FILE_BACKENDS, *(f for f, _ in FUNCTION_BACKENDS)}
    for path in sorted(files):
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        reads = Reads(module)
        reads.visit(ast.parse((ROOT / path).read_text()))
        for function, name in reads.unresolved:
            if (path, function) in NOT_PARAMS:
                continue
            # filter_thresholds reads each threshold of the filter's table by its key
            assert (path, function, name) == ("judges/backends/base.py", "filter_thresholds", "key"), (
                f"{path}:{function} reads a parameter this test cannot name: {name}"
            )
        for function, name, default in reads.found:
            if (path, function) in NOT_PARAMS:
                continue
            backends = FUNCTION_BACKENDS.get((path, function)) or FILE_BACKENDS.get(path)
            assert backends, f"{path}:{function} reads params.{name}: say which backends read it (FUNCTION_BACKENDS)"
            for b in backends:
                out[b].setdefault(name, []).append((f"{path}:{function}", default))
    for key in (key for _, key in FILTER_FLAGS.values()):
        for b in FUNCTION_BACKENDS[("judges/backends/base.py", "filter_thresholds")]:
            out[b].setdefault(key, []).append(("judges/backends/base.py:filter_thresholds", None))
    return out


READS = backend_reads()


def test_the_scan_sees_the_reads():
    """Guard against a scan that finds nothing: known reads must be seen."""
    assert "q3_thresholds" in READS["image_similarity"]
    assert {"temperature", "top_p", "stop", "timeout_s"} <= set(READS["openai_chat"])  # the comprehension too
    assert {"api_key_env", "base_url"} <= set(READS["openai_chat"])  # through endpoints.KEY_ENV_PARAM
    assert {"context_min", "person_min", "batch_size"} <= set(READS["clip_similarity"])
    assert "_real_images" in READS["ahead"] and "chunk_size" in READS["embedding"]


@pytest.mark.parametrize("backend", ALL)
def test_every_parameter_a_backend_reads_is_declared(backend):
    declared = {p.name for p in schema(backend)} | set(get_backend(backend).internal_params)
    missing = {name: where for name, where in READS[backend].items() if name not in declared}
    assert not missing, f"declare these in judges/params.py: {missing}"


@pytest.mark.parametrize("backend", ALL)
def test_every_declared_parameter_is_read(backend):
    unread = [p.name for p in schema(backend) if p.name not in READS[backend]]
    assert not unread, f"{backend} declares parameters nothing reads: {unread}"


def _literal(expr: ast.AST, module_path: str):
    if isinstance(expr, ast.Name):
        module = importlib.import_module(module_path.split(":")[0].removesuffix(".py").replace("/", "."))
        return getattr(module, expr.id)
    return ast.literal_eval(expr)


@pytest.mark.parametrize("backend", ALL)
def test_declared_defaults_are_what_the_backends_fall_back_to(backend):
    checked = 0
    for p in schema(backend):
        for where, default in READS[backend].get(p.name, []):
            if default is None or p.default_text:
                continue  # no literal fallback, or one that depends on something (said in words)
            try:
                value = _literal(default, where)
            except (ValueError, AttributeError):
                continue  # an expression (e.g. the run's chunk size): declared in words
            if backend == "ahead" and p.extractors:
                continue  # the AHEaD judge sets its extractor's own defaults (checked below)
            assert p.default == value, f"{backend}.{p.name}: declared {p.default!r}, {where} uses {value!r}"
            checked += 1
    assert checked  # every backend has literal fallbacks: the comparison ran


def test_declared_constants_match_the_backends():
    from judges.backends import ahead, clip_similarity, image_similarity

    for backend, module in (("image_similarity", image_similarity), ("clip_similarity", clip_similarity)):
        for key, value in module.FILTER_DEFAULTS.items():
            assert declared(backend, key).default == value
    assert declared("clip_similarity", "dtype").choices == clip_similarity.DTYPES
    assert declared("ahead", "extractor").choices == ahead.EXTRACTORS
    assert declared("ahead", "tau").default == ahead.DEFAULT_TAU
    assert declared("ahead", "real_generator").default == ahead.DEFAULT_REAL_GENERATOR
    own = {p.name for p in schema("ahead") if not p.extractors}
    assert set(ahead.OWN_PARAMS) - own == {ahead.REAL_IMAGES_PARAM}  # the rest goes to the extractor
    assert (judge_params.DEFAULT_CHUNK, judge_params.MAX_CHUNK) == (runs.DEFAULT_CHUNK, runs.MAX_CHUNK)
    assert declared("openai_chat", "api_key_env").default == endpoints.DEFAULT_KEY_ENV
    for backend, modes in DIRECT_MODES.items():
        assert declared(backend, "mode").choices == tuple(modes)
    # the AHEaD judge's extractor defaults (App. A.4: temperature 0; room for a JSON list)
    source = (ROOT / "judges/backends/ahead.py").read_text()
    for name in ("temperature", "max_tokens", "max_new_tokens"):
        value = declared("ahead", name).default
        assert f'inner.setdefault("{name}", {value})' in source


# ------------------------------------------------------------------------------ checks
@pytest.mark.parametrize(
    ("backend", "params", "field", "message"),
    [
        ("openai_chat", {"temperature": "hot"}, "temperature", "params.temperature must be a number at least 0"),
        ("openai_chat", {"concurrency": 0}, "concurrency", "must be a whole number between 1 and 64"),
        ("openai_chat", {"temperature": 10**400}, "temperature", "must be a number"),  # no float holds it
        ("openai_chat", {"response_format": "xml"}, "response_format", "one of json_schema, json_object, none"),
        ("openai_chat", {"base_url": "http://evil.example.com/v1"}, "base_url", "not allowed"),
        ("openai_chat", {"api_key_env": "SECRET_KEY"}, "api_key_env", "not allowed"),
        ("transformers", {"memory_fraction": 0}, "memory_fraction", "above 0 and at most 1"),
        ("transformers", {"do_sample": "yes"}, "do_sample", "true or false"),
        ("transformers", {"device": "tpu"}, "device", "cpu, cuda or cuda:<n>"),
        ("embedding", {"rewrite_step": 0}, "rewrite_step", "above 0"),
        ("image_similarity", {"q3_thresholds": [0.7, 0.2]}, "q3_thresholds", "the first at most the second"),
        ("image_similarity", {"q3_thresholds": 0.5}, "q3_thresholds", "two numbers"),
        ("image_similarity", {"image_fields": ["image_c"]}, "image_fields", "no image field of this preset"),
        ("clip_similarity", {"context_min": 1.5}, "context_min", "or null"),
        ("ahead", {"exag_candidates": 101}, "exag_candidates", "between 1 and 100"),
        ("ahead", {"_real_images": {}}, "_real_images", "set by the platform"),
        ("openai_chat", {"chunk_size": 5000}, "chunk_size", "between 1 and 1000"),
    ],
)
def test_check_names_the_parameter_and_what_it_must_be(backend, params, field, message):
    with pytest.raises(judge_params.ParamError) as exc:
        get_backend(backend).check_declared(params, image_fields=["image_a", "image_b"])
    assert list(exc.value.errors) == [field] and message in exc.value.errors[field]


def test_good_values_and_undeclared_keys_pass():
    clip, chat = get_backend("clip_similarity"), get_backend("openai_chat")
    clip.check_declared({"context_min": 0.7, "person_min": None, "batch_size": 4, "dtype": "float32"})
    chat.check_declared({"base_url": "http://127.0.0.1:8000/v1", "stop": ["\n"], "temperature": 0})
    chat.check_declared({"my_own_key": [1, 2]})  # not declared: kept as given
    assert chat.undeclared({"my_own_key": 1, "temperature": 0}) == ["my_own_key"]


# ------------------------------------------------------------------------------ pages
@pytest.fixture
def projects(researcher):
    return {
        key: make_project(key, owner=researcher, name=key)
        for key in ("valueground.pair_quality", "cultivate.faithfulness", "counterfactuals.audit", "cqbench.story")
    }


def form_data(backend: str, name: str, fields: dict | None = None, params: str = "{}", **extra) -> dict:
    data = {"name": name, "backend": backend, "passes": 1, "combine": "mean", "params": params, **extra}
    for key, value in (fields or {}).items():
        data[param_forms.field_name(backend, key)] = value
    return data


def test_the_form_shows_every_backends_fields(client, researcher, projects, settings, monkeypatch):
    settings.HV_JUDGE_ALLOWED_HOSTS = ["127.0.0.1:8000", "gpu-box:8001", ".corp.example"]
    settings.HV_JUDGE_API_KEYS = ["HV_JUDGE_API_KEY", "HV_JUDGE_KEY_*", "TEAM_KEY"]
    monkeypatch.setenv("HV_JUDGE_KEY_LAB", "sk-the-value-itself")
    client.force_login(researcher)
    project = projects["counterfactuals.audit"]
    html = client.get(reverse("judges", args=[project.id])).content.decode()
    for backend in ALL:
        assert f'data-testid="backend-{backend}"' in html
        for p in schema(backend):
            assert f'name="{param_forms.field_name(backend, p.name)}' in html, (backend, p.name)
    # nullable thresholds have their "undecided" box; choices are offered, defaults said
    assert 'name="p-clip_similarity-person_min-null"' in html
    assert re.search(r'name="p-ahead-extractor"[^>]*>\s*<option value="" selected>default: openai_chat when', html)
    # endpoints from the allowed hosts, key names from the allowed list (names only, never values)
    assert '<option value="http://127.0.0.1:8000/v1">' in html and '<option value="http://gpu-box:8001/v1">' in html
    assert ".corp.example" in html  # a suffix entry is named, not offered as a URL
    for name in ("HV_JUDGE_API_KEY", "TEAM_KEY", "HV_JUDGE_KEY_LAB"):
        assert f'<option value="{name}">' in html
    assert "sk-the-value-itself" not in html
    # the preset's own templates first
    assert html.index("Cultural Counterfactuals Table 3 classifiers") < html.index("CQ-Bench incorporation check")


# what the fields post, and the same as JSON: the same judge
SAME = [
    (
        "cultivate.faithfulness",
        "openai_chat",
        {"model_id": "gpt-4o", "questions": "faith"},
        {
            "base_url": "http://127.0.0.1:8000/v1",
            "api_key_env": "HV_JUDGE_API_KEY",
            "temperature": 0,
            "max_tokens": 300,
            "seed": 7,
            "concurrency": 2,
            "timeout_s": 30,
            "response_format": "json_object",
            "stop": "###",
        },
    ),
    (
        "cultivate.faithfulness",
        "transformers",
        {"model_id": "/models/qwen"},
        {"kind": "image-text", "max_new_tokens": 128, "do_sample": True, "temperature": 0.7, "device": "cpu"},
    ),
    ("valueground.pair_quality", "image_similarity", {}, {"mode": "valueground_q3", "q3_thresholds": [0.8, 0.87]}),
    ("counterfactuals.audit", "image_similarity", {}, {"context_min": 0.4, "person_min": 0.2}),
    ("counterfactuals.audit", "clip_similarity", {}, {"context_min": 0.7, "person_min": None, "batch_size": 4}),
    (
        "cultivate.faithfulness",
        "ahead",
        {"model_id": "OpenGVLab/InternVL3-14B"},
        {"extractor": "openai_chat", "base_url": "http://127.0.0.1:9/v1", "tau": 0.67, "ita_model": "/models/clip"},
    ),
    ("cqbench.story", "embedding", {}, {"reflect_tau": 0.4, "rewrite_step": 0.1, "chunk_size": 8}),
]


def as_fields(backend: str, params: dict) -> dict:
    out = {}
    for key, value in params.items():
        name = param_forms.field_name(backend, key)
        if value is None:
            out[name + param_forms.NULL_SUFFIX] = "on"
        elif isinstance(value, list):
            out[name + "_0"], out[name + "_1"] = value
        elif value is True:
            out[name] = "on"
        else:
            out[name] = value
    return out


@pytest.mark.parametrize(("preset", "backend", "extra", "params"), SAME, ids=[f"{b}-{p}" for p, b, _, _ in SAME])
def test_the_fields_make_the_same_judge_as_the_json(client, researcher, projects, preset, backend, extra, params):
    project = projects[preset]
    client.force_login(researcher)
    url = reverse("judges", args=[project.id])
    by_fields = client.post(url, {**form_data(backend, "fields", **extra), **as_fields(backend, params)})
    assert by_fields.status_code == 302, by_fields.content.decode()[-3000:]
    by_json = client.post(url, form_data(backend, "json", params=json.dumps(params), **extra))
    assert by_json.status_code == 302
    a, b = (JudgeConfig.objects.get(project=project, name=n) for n in ("fields", "json"))
    assert a.params == b.params == params
    for field in ("backend", "model_id", "parser", "questions", "prompt_template", "passes", "combine"):
        assert getattr(a, field) == getattr(b, field)
    ra, rb = a.rater.parameters, b.rater.parameters
    assert ra == rb and a.rater.prompt_hash == b.rater.prompt_hash


def test_fields_and_json_merge_and_a_conflict_is_an_error(client, researcher, projects):
    project = projects["cqbench.story"]
    client.force_login(researcher)
    url = reverse("judges", args=[project.id])
    resp = client.post(url, form_data("embedding", "merged", {"reflect_tau": "0.4"}, params='{"rewrite_step": 0.1}'))
    assert resp.status_code == 302
    assert JudgeConfig.objects.get(name="merged").params == {"reflect_tau": 0.4, "rewrite_step": 0.1}
    resp = client.post(url, form_data("embedding", "clash", {"reflect_tau": "0.4"}, params='{"reflect_tau": 0.5}'))
    assert resp.status_code == 400
    assert "params.reflect_tau is set in its field (0.4) and in the JSON (0.5): keep one" in errors_of(resp, "params")
    assert not JudgeConfig.objects.filter(name="clash").exists()


def errors_of(resp, field: str) -> str:
    form = resp.context["form"]
    return " ".join(form.errors.get(field, []))


@pytest.mark.parametrize(
    ("preset", "backend", "post", "field", "message"),
    [
        ("counterfactuals.audit", "clip_similarity", {"context_min": "1.5"}, "context_min", "between -1 and 1"),
        ("cultivate.faithfulness", "ahead", {"tau": "2", "ita_model": "/m"}, "tau", "params.tau must be"),
        (
            "cultivate.faithfulness",
            "openai_chat",
            {"base_url": "http://evil.example.com/v1"},
            "base_url",
            "not allowed",
        ),
        ("cultivate.faithfulness", "openai_chat", {"api_key_env": "SECRET_KEY"}, "api_key_env", "not allowed"),
        ("cultivate.faithfulness", "openai_chat", {"temperature": "-1"}, "temperature", "at least 0"),
        ("cultivate.faithfulness", "openai_chat", {"max_tokens": "many"}, "max_tokens", "whole number"),
        ("valueground.pair_quality", "image_similarity", {"q3_thresholds_0": "0.5"}, "q3_thresholds", "both"),
        (
            "valueground.pair_quality",
            "image_similarity",
            {"q3_thresholds_0": "0.9", "q3_thresholds_1": "0.1"},
            "q3_thresholds",
            "the first at most the second",
        ),
        (
            "counterfactuals.audit",
            "image_similarity",
            {"person_min": "0.2", "person_min-null": "on"},
            "person_min",
            "not both",
        ),
    ],
)
def test_bad_values_are_field_errors_and_make_nothing(
    client, researcher, projects, preset, backend, post, field, message
):
    project = projects[preset]
    client.force_login(researcher)
    data = form_data(backend, "bad", model_id="m")
    for key, value in post.items():
        data[param_forms.field_name(backend, key)] = value
    before = (JudgeConfig.objects.count(), Rater.objects.count())
    resp = client.post(reverse("judges", args=[project.id]), data)
    assert resp.status_code == 400
    assert message in errors_of(resp, param_forms.field_name(backend, field)), resp.context["form"].errors
    assert (JudgeConfig.objects.count(), Rater.objects.count()) == before
    assert message in resp.content.decode().replace("&lt;", "<").replace("&#x27;", "'")  # shown on the page


def test_bad_json_and_rules_across_parameters_are_clear(client, researcher, projects):
    project = projects["counterfactuals.audit"]
    client.force_login(researcher)
    url = reverse("judges", args=[project.id])
    resp = client.post(url, form_data("clip_similarity", "j", params='{"context_min": 0.7,}'))
    assert resp.status_code == 400 and "not JSON: Expecting property name" in errors_of(resp, "params")
    resp = client.post(url, form_data("clip_similarity", "j", params="[1]"))
    assert "params must be a JSON object" in errors_of(resp, "params")
    resp = client.post(url, form_data("clip_similarity", "j", params='{"context_min": 7}'))
    assert "params.context_min must be a number between -1 and 1" in errors_of(resp, "params")  # on the JSON
    both_null = {"context_min-null": "on", "person_min-null": "on"}
    resp = client.post(url, form_data("clip_similarity", "j", both_null))
    assert resp.status_code == 400 and "would decide no flag" in " ".join(resp.context["form"].non_field_errors())
    assert not JudgeConfig.objects.filter(project=project).exists()


def test_another_backends_fields_are_ignored(client, researcher, projects):
    project = projects["cqbench.story"]
    client.force_login(researcher)
    data = form_data("embedding", "minilm", {"reflect_tau": "0.3"})
    data["p-openai_chat-temperature"] = "hot"  # typed in a section not chosen
    data["p-clip_similarity-context_min"] = "0.6"
    assert client.post(reverse("judges", args=[project.id]), data).status_code == 302
    assert JudgeConfig.objects.get(name="minilm").params == {"reflect_tau": 0.3}


def test_an_undeclared_json_key_is_kept_with_a_warning(client, researcher, projects):
    project = projects["cqbench.story"]
    client.force_login(researcher)
    resp = client.post(
        reverse("judges", args=[project.id]),
        form_data("embedding", "typo", params='{"reflect_taus": 0.3}'),
        follow=True,
    )
    assert JudgeConfig.objects.get(name="typo").params == {"reflect_taus": 0.3}
    assert "Not read by the embedding backend, so without effect: reflect_taus." in resp.content.decode()


def test_the_api_still_takes_json_params_with_clearer_messages(client, researcher, projects):
    project = projects["counterfactuals.audit"]
    client.force_login(researcher)
    url = reverse("api_judges", args=[project.id])
    body = {"name": "clip", "backend": "clip_similarity", "params": {"context_min": 0.7, "person_min": None}}
    resp = client.post(url, body, content_type="application/json")
    assert resp.status_code == 201 and resp.json()["params"] == {"context_min": 0.7, "person_min": None}
    resp = client.post(url, {**body, "name": "x", "params": {"batch_size": "big"}}, content_type="application/json")
    assert (
        resp.status_code == 400
        and "params.batch_size must be a whole number at least 1, not 'big'" in resp.content.decode()
    )
    with pytest.raises(DomainError) as exc:
        configuration.create_judge_config(
            project=project, name="x", backend="image_similarity", params={"person_min": 5}
        )
    assert list(exc.value.errors) == ["person_min"] and "params.person_min must be a number" in exc.value.message
    assert list(JudgeConfig.objects.filter(project=project).values_list("name", flat=True)) == ["clip"]


# ------------------------------------------------------------------------------ what it can answer
def ways(caps, backend):
    return {w.how: w for w in caps[backend].ways}


def ids(named):
    return [n.id for n in named]


def test_what_an_ahead_judge_can_answer_on_cultivate(projects, client, researcher):
    project = projects["cultivate.faithfulness"]
    caps = capabilities.backend_capabilities(project)
    [mode] = caps["ahead"].ways
    assert mode.how == "mode cultivate" and mode.default
    assert ids(mode.answers) == ["faith", "exag", "hal"] and ids(mode.missing) == ["realism", "rationale"]
    assert caps["clip_similarity"].ways == () and "no question of this project's rubric" in caps["clip_similarity"].note
    paper = ways(caps, "openai_chat")["the preset's paper prompt (parser score_is)"]
    assert paper.default and ids(paper.answers) == ["faith", "exag", "hal"]
    client.force_login(researcher)
    html = client.get(reverse("judges", args=[project.id])).content.decode()
    box = html[html.index('data-testid="answers-ahead"') :]
    box = box[: box.index("</div>")]
    assert re.search(
        r'answers <span data-testid="answered"><code[^>]*>faith</code>, <code[^>]*>exag</code>, '
        r"<code[^>]*>hal</code></span>",
        box,
    )
    assert "realism" in box[box.index('data-testid="missing"') :]


def test_what_a_counterfactual_ssim_judge_decides_is_only_its_flags(projects, client, researcher):
    project = projects["counterfactuals.audit"]
    caps = capabilities.backend_capabilities(project)
    [ssim] = caps["image_similarity"].ways  # the ValueGround Q3 mode has no question here
    assert ssim.how == "mode counterfactual_filter" and ids(ssim.answers) == ["flags"]
    [flags] = ssim.flags
    assert ids(flags.decided) == ["context_missing"]  # person_min is null by default: flag 4 undecided
    assert ids(flags.undecided) == [
        "context_source",
        "context_counterfactual",
        "orientation",
        "person_missing",
        "attributes",
    ]
    [clip] = caps["clip_similarity"].ways
    assert ids(clip.flags[0].decided) == ["person_missing", "context_missing"]
    classifiers = ways(caps, "openai_chat")["the preset's paper prompt (parser choice)"]
    assert ids(classifiers.flags[0].decided) == ["context_source", "context_counterfactual", "attributes"]
    refusal = ways(caps, "openai_chat")["template refusal"]
    assert refusal.answers == () and "refused" in refusal.note
    client.force_login(researcher)
    html = client.get(reverse("judges", args=[project.id])).content.decode()
    box = html[html.index('data-testid="answers-image_similarity"') :]
    box = box[: box.index("</div>")]
    decided = box[box.index('data-testid="decided"') : box.index('data-testid="undecided"')]
    assert "context_missing" in decided and "person_missing" not in decided


def test_what_a_valueground_judge_can_answer(projects):
    caps = capabilities.backend_capabilities(projects["valueground.pair_quality"])
    [q3] = caps["image_similarity"].ways
    assert q3.how == "mode valueground_q3" and q3.default
    assert ids(q3.answers) == ["q3"] and ids(q3.missing) == ["q1", "q2", "q4", "feedback"] and q3.flags == ()
    json_way = ways(caps, "openai_chat")["any rubric prompt, parser json"]
    assert ids(json_way.answers) == ["q1", "q2", "q3", "q4"] and ids(json_way.missing) == ["feedback"]
    assert ids(ways(caps, "transformers")["any rubric prompt, parser score_is"].answers) == ["q1", "q2", "q3", "q4"]
    assert caps["ensemble"].ways == () and caps["ensemble"].note


def test_questions_and_flags_are_named_in_the_ui_language(projects):
    """The judge form and page name questions and flags as the rubric reads in the UI's language
    (``Rubric.localized``, as the annotate page shows it); what a judge answers is unchanged."""
    for key in ("valueground.pair_quality", "counterfactuals.audit"):
        project = projects[key]
        rubric = project.rubric_version.parsed()
        german = rubric.localized(rubric.pick_locale("de"))
        english, de = capabilities.backend_capabilities(project, "en"), capabilities.backend_capabilities(project, "de")
        assert [[ids(w.answers) for w in c.ways] for c in english.values()] == [
            [ids(w.answers) for w in c.ways] for c in de.values()
        ]
        questions = {q.id: q.label for q in german.questions}
        options = {(q.id, str(o.value)): o.label for q in german.questions for o in q.options}
        for cap in de.values():
            for w in cap.ways:
                assert all(n.label == questions[n.id] for n in (*w.answers, *w.missing))
                for f in w.flags:
                    assert all(n.label == options[(f.question, n.id)] for n in (*f.decided, *f.undecided))
    # the ValueGround rubric translates its feedback question's label
    rubric = projects["valueground.pair_quality"].rubric_version.parsed()
    assert rubric.localized("de").question("feedback").label != rubric.question("feedback").label


def test_every_parameter_and_choice_has_words():
    """Each parameter has a label (shown beside its key) and each choice of a choice parameter
    its words (shown beside its value): nothing in the form is a bare identifier."""
    for backend in ALL:
        for p in schema(backend):
            assert p.name in judge_params.LABELS, (backend, p.name)
            assert all(c in judge_params.CHOICE_LABELS for c in p.choices), (backend, p.name)


# ------------------------------------------------------------------------------ judge page
def test_the_judge_page_shows_its_parameters_and_what_it_decides(client, researcher, projects):
    project = projects["counterfactuals.audit"]
    config = configuration.create_judge_config(
        project=project, name="ssim", backend="image_similarity", params={"context_min": 0.4, "api_key_env": "X"}
    )
    # a literal key stored before they were refused is never shown
    JudgeConfig.objects.filter(pk=config.pk).update(params={**config.params, "api_key": "sk-live-LEAK"})
    client.force_login(researcher)
    html = client.get(reverse("judge_detail", args=[project.id, config.id])).content.decode()
    assert "sk-live-LEAK" not in html
    table = html[html.index('data-testid="judge-params"') : html.index("</table>", html.index("judge-params"))]
    rows = dict(re.findall(r'<tr data-param="([^"]+)">(.*?)</tr>', table, re.S))
    assert "<strong>0.4</strong>" in rows["context_min"] and "Flag 6 context_missing" in rows["context_min"]
    assert "(default)" in rows["person_min"] and "null: the flag is not decided" in rows["person_min"]
    assert "q3_thresholds" not in rows  # read in the other mode only
    assert "(hidden)" in rows["api_key"] and "not read by this backend" in rows["api_key"]
    assert "not read by this backend" in rows["api_key_env"]  # the SSIM judge has no key
    decides = html[html.index('data-testid="judge-decides"') :]
    decides = decides[: decides.index("</p>")]
    assert "context_missing" in decides[decides.index('"decided"') : decides.index('"undecided"')]
    assert "person_missing" in decides[decides.index('"undecided"') :]


# ------------------------------------------------------------------------------ permissions
def test_only_the_projects_researchers_see_or_post_the_form(client, researcher, projects):
    project = projects["cqbench.story"]
    config = configuration.create_judge_config(project=project, name="minilm", backend="embedding")
    annotator = make_user("ann-params")
    outsider = make_user("other-researcher", researcher=True)
    from annotation import projects as project_services

    project_services.add_member(project=project, user=annotator, role="annotator")
    data = form_data("embedding", "sneaky", {"reflect_tau": "0.4"})
    # an annotator of the project is refused; a researcher outside it is not told it exists
    for user, status in ((annotator, 403), (outsider, 404)):
        client.force_login(user)
        assert client.get(reverse("judges", args=[project.id])).status_code == status
        assert client.post(reverse("judges", args=[project.id]), data).status_code == status
        assert client.get(reverse("judge_detail", args=[project.id, config.id])).status_code == status
    client.logout()
    resp = client.post(reverse("judges", args=[project.id]), data)
    assert resp.status_code == 302 and "/login" in resp["Location"]
    assert not JudgeConfig.objects.filter(name="sneaky").exists()
    client.force_login(researcher)
    assert client.get(reverse("judges", args=[project.id])).status_code == 200


def test_every_preset_renders_the_form(client, researcher):
    """Every preset's project shows the form, whatever its images and modes."""
    client.force_login(researcher)
    for key in PRESETS:
        project = make_project(key, owner=researcher, name=f"all-{key}")
        resp = client.get(reverse("judges", args=[project.id]))
        assert resp.status_code == 200 and 'data-testid="judge-form"' in resp.content.decode()
