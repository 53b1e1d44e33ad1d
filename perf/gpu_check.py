"""One GPU check of the in-process judges (issue 28): run it once on a GPU machine, offline, in
under 5 minutes, and paste its summary into docs/benchmarks.md ("GPU check (issue 28)").

Every model is built from a config with random weights (nothing is downloaded), so the figures
are speed and equality, not quality:

- ``text_equality``: a tiny Llama through the transformers backend in bf16 (fp32 on CPU): batched
  greedy replies equal one-by-one replies, with the static and with the dynamic KV cache, and the
  static cache's replies equal the dynamic cache's;
- ``vlm_equality``: the same for a tiny LLaVA with images;
- ``generation``: the 226.6M-parameter bench Llama (hidden 1024, 24 layers) at batch 1 / 32 / 64,
  static vs dynamic cache: tokens/s, ms per decode step, and the memory-bandwidth bound per step
  (``perf/judge_overhead.py``'s ``time_generation``: warmed up at the timed shape). Targets on an
  H100 / H200: batch 1 >= 300 tokens/s, batch 64 >= 12,000 tokens/s (``targets_met``);
- ``clip``: the CLIP filter judge's image embedding at CLIP-ViT-L/14 size, images/s in the
  backend's dtype choices, and the bf16 embeddings' cosine to the fp32 ones;
- ``ahead``: the AHEaD judge end to end on one item with a tiny LLaVA extractor (in-process) and
  the shipped MiniLM encoder: that it runs, and items/s.

A section that fails is written with its error and the others still run (exit status 1).

    python perf/gpu_check.py --out gpu_check.json                       # on the GPU machine
    python perf/gpu_check.py --quick --device cpu --out /tmp/check.json  # small sizes: a check of the script
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SECTIONS = ("text_equality", "vlm_equality", "generation", "clip", "ahead")
TARGET_TOKENS_PER_S = {1: 300.0, 64: 12000.0}  # the 226.6M bench model on an H100 / H200 (issue 28)


def setup() -> None:
    """Django settings for the judge modules (no database is touched) and quiet libraries."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("HV_DEMO", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is built here: never reach the hub
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import django

    django.setup()
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()


def transformers_spec(model: str, preset_key: str, **params: Any):
    from annotation.rubric import Rubric
    from benchmarks.registry import get_preset
    from judges.backends import JudgeSpec

    p = get_preset(preset_key)
    if preset_key == "counterfactuals.audit":
        from benchmarks.counterfactuals import CLASSIFIER

        template, parser, questions = CLASSIFIER, "choice", ("flags",)
    else:
        template, parser, questions = {"system": "", "user": "{story}"}, "json", ("naturalness",)
    return JudgeSpec(
        backend="transformers",
        model_id=model,
        prompt_template=template,
        parser=parser,
        questions=questions,
        params=params,
        rubric=Rubric.from_schema(p.rubric),
        item_fields=p.item_fields,
        preset_key=p.key,
    )


def equality(model: str, preset_key: str, requests: list, args, new_tokens: int) -> dict:
    """Batched vs one-by-one replies for each cache, and static vs dynamic."""
    from judges.registry import backend_for

    common = {"device": args.device, "max_new_tokens": new_tokens, **({"compile": False} if args.no_compile else {})}
    out: dict[str, Any] = {"requests": len(requests)}
    texts: dict[str, list] = {}
    for cache in ("static", "dynamic"):
        batched = backend_for(transformers_spec(model, preset_key, batch_size=len(requests), cache=cache, **common))
        single = backend_for(transformers_spec(model, preset_key, batch_size=1, cache=cache, **common))
        b = batched.generate(requests)
        s = [single.generate([r])[0] for r in requests]
        errors = [r.error for r in [*b, *s] if r.error]
        texts[cache] = [r.text for r in b]
        out[cache] = {
            "dtype": batched.dtype,
            "cache_used": batched.cache,
            "cache_note": batched.cache_note,
            "compiled": batched.compile,
            "batched_equals_one_by_one": not errors and [r.text for r in b] == [r.text for r in s],
            "errors": errors[:3],
        }
    out["static_equals_dynamic"] = texts["static"] == texts["dynamic"]
    return out


def text_equality(args, tmp: Path) -> dict:
    from judges.backends import ChatRequest
    from tests.judges.tiny_model import make_tiny_causal_lm

    model = str(make_tiny_causal_lm(tmp / "tiny-llama", hidden=64, layers=2, seed=7))
    prompts = [
        "score is",
        "the story is a value",
        "a",
        "yes no yes no the value is consistent natural story",
        "value is natural",
        "the the story story is consistent",
    ]
    return equality(model, "cqbench.story", [ChatRequest(system="", user=p, images=[]) for p in prompts], args, 12)


def vlm_equality(args, tmp: Path) -> dict:
    from PIL import Image

    from judges.backends import ChatRequest
    from tests.judges.tiny_vlm import make_tiny_vlm

    model = str(make_tiny_vlm(tmp / "tiny-llava", seed=7))
    images = []
    for i, (color, size) in enumerate(
        [((220, 30, 30), (40, 30)), ((30, 30, 220), (24, 24)), ((30, 200, 30), (64, 48))]
    ):
        images.append(tmp / f"img{i}.png")
        Image.new("RGB", size, color).save(images[-1])
    requests = [
        ChatRequest(system="", user="what is depicted", images=[images[0]]),
        ChatRequest(system="the story", user="what is depicted in this image ? Mosque India", images=images[1:]),
        ChatRequest(system="", user="a", images=[images[2], images[0], images[1]]),
    ]
    return equality(model, "counterfactuals.audit", requests, args, 10)


def generation(args, tmp: Path) -> dict:
    from judges.backends import ChatRequest
    from judges.registry import backend_for
    from perf.judge_overhead import card_bandwidth_gbs, generation_prompts, time_generation, weights_bytes
    from tests.judges.tiny_model import make_tiny_causal_lm

    hidden, layers = (64, 2) if args.quick else (1024, 24)
    batches = (1, 4, 8) if args.quick else (1, 32, 64)
    new_tokens = 8 if args.quick else 32
    model = str(make_tiny_causal_lm(tmp / "bench-llama", hidden=hidden, layers=layers))
    bandwidth, bandwidth_from = card_bandwidth_gbs(args.device, args.bandwidth_gbs)
    out: dict[str, Any] = {
        "hidden": hidden,
        "layers": layers,
        "new_tokens": new_tokens,
        "bandwidth_gbs": bandwidth,
        "bandwidth_from": bandwidth_from,
    }
    for cache in ("static", "dynamic"):
        for bs in batches:
            # batch 1 is timed over a few prompts (each is its own generate), the others over one full batch
            n = max(bs, 2 if args.quick else 8) if bs == 1 else bs
            requests = [ChatRequest(system="", user=t, images=[]) for t in generation_prompts(n)]
            params = {
                "device": args.device,
                "batch_size": bs,
                "max_new_tokens": new_tokens,
                "min_new_tokens": new_tokens,
                "cache": cache,
                **({"compile": False} if args.no_compile else {}),
            }
            backend = backend_for(transformers_spec(model, "cqbench.story", **params))
            out["parameters_m"] = round(sum(x.numel() for x in backend.model.parameters()) / 1e6, 1)
            out["weights_mb"] = round(weights_bytes(backend.model) / 1e6, 1)
            out["dtype"] = backend.dtype
            t0 = time.perf_counter()
            timed = time_generation(
                backend, requests, device=args.device, new_tokens=new_tokens, bandwidth_gbs=bandwidth
            )
            timed["seconds_with_warmup"] = round(time.perf_counter() - t0, 1)
            out[f"{cache}_batch{bs}"] = timed
    if not args.quick and args.device.startswith("cuda"):
        out["targets_met"] = {
            f"batch{bs}": out[f"static_batch{bs}"]["tokens_per_s"] >= target
            for bs, target in TARGET_TOKENS_PER_S.items()
        }
    return out


def clip(args, tmp: Path) -> dict:
    import numpy as np
    import torch
    from PIL import Image
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    from judges.backends.clip_similarity import image_embeddings

    if args.quick:
        size, patch = 32, 8
        vision = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2}
        text = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2}
        projection, n_images, batch = 8, 16, 8
    else:  # CLIP-ViT-L/14 (the paper's filter model), 224 px
        size, patch = 224, 14
        vision = {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24, "num_attention_heads": 16}
        text = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_attention_heads": 12}
        projection, n_images, batch = 768, 512, 64
    config = CLIPConfig(
        text_config={**text, "vocab_size": 49408, "max_position_embeddings": 77},
        vision_config={**vision, "image_size": size, "patch_size": patch},
        projection_dim=projection,
    )
    processor = CLIPImageProcessor(
        size={"shortest_edge": size},
        crop_size={"height": size, "width": size},
        image_mean=[0.48145466, 0.4578275, 0.40821073],
        image_std=[0.26862954, 0.26130258, 0.27577711],
    )
    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 255, (size + 16, size + 8, 3), dtype=np.uint8)) for _ in range(n_images)]
    torch.manual_seed(0)
    with torch.device(args.device):  # initialised where it runs: a CPU init of 428M weights is slow
        model = CLIPModel(config).eval()
    out: dict[str, Any] = {
        "parameters_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
        "images": n_images,
        "batch_size": batch,
    }
    dtypes = ("float32", "bfloat16") if args.device.startswith("cuda") or args.quick else ("float32",)
    embeddings = {}
    for dtype in dtypes:
        m = model.to(getattr(torch, dtype))
        image_embeddings(m, processor, images[:batch], batch)  # warm-up at the timed shape
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        embeddings[dtype] = image_embeddings(m, processor, images, batch)
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        out[f"images_per_s_{dtype}"] = round(n_images / (time.perf_counter() - t0), 1)
    if "bfloat16" in embeddings:
        cos = (embeddings["float32"] * embeddings["bfloat16"]).sum(axis=1)  # both L2-normalised
        out["bf16_vs_fp32_min_cosine"] = round(float(cos.min()), 5)
    return out


def ahead(args, tmp: Path) -> dict:
    from PIL import Image

    from annotation.rubric import Rubric
    from benchmarks.registry import get_preset
    from judges.backends import JudgeItem, JudgeSpec
    from judges.registry import backend_for
    from tests.judges.tiny_vlm import make_tiny_vlm

    model = str(make_tiny_vlm(tmp / "tiny-llava-ahead"))
    preset = get_preset("cultivate.faithfulness")
    spec = JudgeSpec(
        backend="ahead",
        model_id=model,
        prompt_template={},
        parser="none",
        questions=("hal",),
        params={"extractor": "transformers", "max_new_tokens": 6, "device": args.device},
        rubric=Rubric.from_schema(preset.rubric),
        item_fields=preset.item_fields,
        preset_key=preset.key,
    )
    backend = backend_for(spec)
    items = []
    for i in range(2 if args.quick else 8):
        path = tmp / f"ahead{i}.png"
        Image.new("RGB", (24, 20), (200, 30 * i % 255, 30)).save(path)
        items.append(
            JudgeItem(
                item_id=i,
                context={
                    "activity": "eating at home",
                    "country": "Iran",
                    "reference_descriptors": {"setting": ["open-air stage"], "objects": ["crowd holding beer cups"]},
                },
                images={"image": path},
            )
        )
    backend.judge(items[:1], [0])  # models loaded
    t0 = time.perf_counter()
    verdicts = backend.judge(items, [0])
    dt = time.perf_counter() - t0
    errors = [v.error for v in verdicts if v.error]
    return {
        "items": len(items),
        "items_per_s": round(len(items) / dt, 2),
        # a random extractor does not write the JSON asked for: parse failures are expected, others are not
        "unexpected_errors": [e for e in errors if not e.startswith("parse failed")][:3],
        "parse_failures": sum(1 for e in errors if e.startswith("parse failed")),
        "extractor_cache": backend.extractor().cache,
    }


def run(name: str, fn: Callable[[Any, Path], dict], args, tmp: Path) -> dict:
    t0 = time.perf_counter()
    try:
        out = fn(args, tmp)
    except Exception as exc:  # one failing section must not lose the others' figures
        out = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-2000:]}
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"[gpu_check] {name}: {out['seconds']} s{' ERROR ' + out['error'] if 'error' in out else ''}", flush=True)
    return out


def summary(report: dict) -> list[str]:
    lines = [f"device {report['device']} ({report['card']}), total {report['seconds']} s"]
    for name in ("text_equality", "vlm_equality"):
        r = report.get(name, {})
        if "error" in r or not r:
            continue
        lines.append(
            f"{name}: batched == one-by-one static {r['static']['batched_equals_one_by_one']}, "
            f"dynamic {r['dynamic']['batched_equals_one_by_one']}; static == dynamic {r['static_equals_dynamic']}"
        )
    g = report.get("generation", {})
    for key, v in g.items():
        if isinstance(v, dict) and "tokens_per_s" in v:
            bound = f", bound {v['bound_ms_per_step']} ms" if "bound_ms_per_step" in v else ""
            lines.append(f"generation {key}: {v['tokens_per_s']} tokens/s, {v['ms_per_step']} ms/step{bound}")
    if "targets_met" in g:
        lines.append(f"targets met: {g['targets_met']}")
    c = report.get("clip", {})
    lines += [f"clip {k}: {v}" for k, v in c.items() if k.startswith(("images_per_s", "bf16"))]
    a = report.get("ahead", {})
    if "items_per_s" in a:
        lines.append(f"ahead: {a['items_per_s']} items/s, unexpected errors {a['unexpected_errors']}")
    lines += [f"{name} FAILED: {report[name]['error']}" for name in SECTIONS if "error" in report.get(name, {})]
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="the JSON file to write")
    ap.add_argument("--device", default="", help="cpu, cuda or cuda:<n> (default: cuda when available)")
    ap.add_argument("--quick", action="store_true", help="small models and batches: a check of the script (CPU)")
    ap.add_argument("--only", default="", help=f"comma-separated sections of {', '.join(SECTIONS)}")
    ap.add_argument("--no-compile", action="store_true", help="the static cache without the compiled decode step")
    ap.add_argument("--bandwidth-gbs", type=float, default=0.0, help="the card's bandwidth (default: by name)")
    args = ap.parse_args()
    setup()
    import torch
    import transformers

    from perf._common import machine

    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    wanted = [s for s in (args.only.split(",") if args.only else SECTIONS) if s]
    unknown = set(wanted) - set(SECTIONS)
    if unknown:
        ap.error(f"unknown sections {sorted(unknown)}")
    t0 = time.perf_counter()
    report: dict[str, Any] = {
        "issue": 28,
        "quick": args.quick,
        "device": args.device,
        "card": torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else machine()["cpu"],
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    tmp = Path(tempfile.mkdtemp(prefix="hv-gpu-check-"))
    try:
        for name in wanted:
            report[name] = run(name, globals()[name], args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report["seconds"] = round(time.perf_counter() - t0, 1)
    report["under_5_minutes"] = report["seconds"] < 300
    Path(args.out).write_text(json.dumps(report, indent=2, default=str) + "\n")
    print("\n".join(summary(report)))
    return 1 if any("error" in report.get(name, {}) for name in wanted) else 0


if __name__ == "__main__":
    sys.exit(main())
