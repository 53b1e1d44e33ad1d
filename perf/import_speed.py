"""Import speed through ``annotation.importing.import_items`` (the same call the web upload, the
API upload and the worker make), on SQLite and PostgreSQL in one run.

Two imports per database, each into a fresh project with --annotators annotators (default 3)
and k=3, so every item also gets its k assignment rows inside the import's transaction:

  text:   --text-items (default 100,000) CQ-Bench Turing pairs (cqbench.turing), distinct ids
          and texts, as a JSONL file in memory;
  images: --image-items (default 2,000) ValueGround pairs (valueground.pair_quality), each
          with TWO distinct 480x360 PNGs (4,000 images) in a folder, so hashing, Pillow
          validation, storing and the WebP thumbnail are all paid per image.

Phases (timed by wrapping the service's collaborators, app code unchanged):
  read+validate  JSON parsing, check_record per line, check_image per image, id checks;
  assets         store_assets: write files + thumbnails + Asset rows;
  items          Item bulk_create (+ item<->asset links);
  assign         assign_all_annotators (k rows per item);
  commit/other   what remains (transaction commit, ...).

  .venv/bin/python perf/import_speed.py                                  # SQLite only
  perf/run_with_postgres.sh .venv/bin/python perf/import_speed.py        # SQLite and PostgreSQL
  ... --backends postgres --text-items 20000                             # subsets
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common

WORDS = [
    "family",
    "work",
    "trust",
    "religion",
    "honestly",
    "grandma",
    "dinner",
    "tractor",
    "library",
    "petition",
    "village",
    "bakery",
    "bike",
    "wallet",
    "train",
    "workshop",
    "neighbours",
    "garden",
    "market",
    "summer",
    "winter",
    "school",
    "festival",
    "river",
    "church",
    "mosque",
    "temple",
    "doctor",
    "nurse",
    "teacher",
    "farmer",
    "election",
    "taxes",
    "music",
    "football",
]


def turing_jsonl(n: int) -> bytes:
    rng = random.Random(7)
    out = []
    cats = ["social values", "religious values", "migration", "security", "political values"]
    for i in range(n):
        h = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(12, 40)))
        m = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(12, 40)))
        out.append(
            json.dumps(
                {
                    "id": f"cq-turing-{i:06d}",
                    "context": f"Topic {i % 97}: how important is {rng.choice(WORDS)} in your life?",
                    "human_utterance": f"{h} ({i})",
                    "model_utterance": f"{m} [{i}]",
                    "category": cats[i % len(cats)],
                    "country": ("China", "Germany", "India", "Brazil")[i % 4],
                }
            )
        )
    return ("\n".join(out) + "\n").encode()


def make_images(folder: Path, n: int) -> None:
    from PIL import Image, ImageDraw

    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        rng = random.Random(1000 + i)
        img = Image.new("RGB", (480, 360), tuple(rng.randrange(256) for _ in range(3)))
        draw = ImageDraw.Draw(img)
        for _ in range(25):
            x0, y0 = rng.randrange(480), rng.randrange(360)
            shape = draw.ellipse if rng.random() < 0.5 else draw.rectangle
            shape(
                [x0, y0, x0 + rng.randrange(5, 250), y0 + rng.randrange(5, 200)],
                fill=tuple(rng.randrange(256) for _ in range(3)),
            )
        draw.text((10, 10), f"image {i}", fill=(255, 255, 255))
        img.save(folder / f"img_{i:05d}.png", compress_level=1)


def valueground_jsonl(n: int) -> bytes:
    out = []
    for i in range(n):
        out.append(
            json.dumps(
                {
                    "id": f"vg-{i:05d}",
                    "question": f"Survey question {i % 290}: how important is this value in your life?",
                    "option_a": f"It is very important ({i}).",
                    "option_b": f"It is not at all important ({i}).",
                    "image_a": f"img_{2 * i:05d}.png",
                    "image_b": f"img_{2 * i + 1:05d}.png",
                    "question_id": f"Q{i % 290}",
                    "generator": ("gpt", "gemini")[i % 2],
                    "country": ("China", "Germany")[i % 2],
                }
            )
        )
    return ("\n".join(out) + "\n").encode()


class PhaseTimer:
    """Wraps the import service's collaborators to time its phases without changing it."""

    def __init__(self) -> None:
        from annotation import importing as services

        self.services = services
        self.t = {"check_record": 0.0, "check_image": 0.0}
        self.marks: dict[str, float] = {}
        self.saved = {}
        for name in ("check_record", "check_image"):
            orig = getattr(services, name)
            self.saved[name] = orig
            setattr(services, name, self._accumulate(name, orig))
        for name in ("store_assets", "reserve_ids", "assign_new_items"):
            orig = getattr(services, name)
            self.saved[name] = orig
            setattr(services, name, self._span(name, orig))

    def _accumulate(self, name, fn):
        perf = time.perf_counter

        def wrapper(*a, **kw):
            t0 = perf()
            try:
                return fn(*a, **kw)
            finally:
                self.t[name] += perf() - t0

        return wrapper

    def _span(self, name, fn):
        def wrapper(*a, **kw):
            self.marks.setdefault(name + ":start", time.perf_counter())
            try:
                return fn(*a, **kw)
            finally:
                self.marks[name + ":end"] = time.perf_counter()

        return wrapper

    def restore(self) -> None:
        for name, fn in self.saved.items():
            setattr(self.services, name, fn)

    def phases(self, t0: float, t_end: float) -> dict[str, float]:
        m = self.marks
        write_start = m.get("store_assets:start", m.get("reserve_ids:start", t_end))
        out = {"read+validate": write_start - t0}
        if "store_assets:start" in m:
            out["assets"] = m["store_assets:end"] - m["store_assets:start"]
        if "reserve_ids:start" in m:
            items_end = m.get("assign_new_items:start", m["reserve_ids:end"])
            out["items(+links)"] = items_end - m["reserve_ids:start"]
        if "assign_new_items:start" in m:
            out["assign"] = m["assign_new_items:end"] - m["assign_new_items:start"]
        out["commit/other"] = (t_end - t0) - sum(out.values())
        out["  of which check_record"] = self.t["check_record"]
        out["  of which check_image"] = self.t["check_image"]
        return out


def child(args) -> None:
    """One database: both imports, printing one JSON line."""
    info = _common.setup_django(args.database_url if args.backend == "postgres" else "sqlite", keep=args.keep)
    from django.contrib.auth import get_user_model

    from annotation import importing, projects

    User = get_user_model()
    researcher = User.objects.create(username="researcher", is_staff=True)
    annotators = User.objects.bulk_create([User(username=f"ann{i}", password="!") for i in range(args.annotators)])
    results = {"backend": info["backend"], "server_version": info["server_version"], "runs": []}

    def run(label, preset, data, images, n_images):
        project = projects.create_project(
            name=f"perf {label}", preset_key=preset, created_by=researcher, k_per_item=args.k
        )
        for u in annotators:
            projects.add_member(project=project, user=u, role="annotator")
        timer = PhaseTimer()
        t0 = time.perf_counter()
        try:
            report = importing.import_items(project=project, data=data, data_format="jsonl", images=images)
        finally:
            t_end = time.perf_counter()
            timer.restore()
        if not report.ok:
            raise SystemExit(f"{label}: import failed: {report.errors[:5]}")
        total = t_end - t0
        results["runs"].append(
            {
                "label": label,
                "preset": preset,
                "items": report.items_created,
                "images": report.images_stored,
                "assignments": report.assignments_created,
                "seconds": total,
                "items_per_s": report.items_created / total,
                "phases": timer.phases(t0, t_end),
                "bytes": len(data),
                "n_images_expected": n_images,
            }
        )

    if args.text_items:
        run("text", "cqbench.turing", turing_jsonl(args.text_items), None, 0)
    if args.image_items:
        run(
            "images",
            "valueground.pair_quality",
            valueground_jsonl(args.image_items),
            Path(args.images_dir),
            2 * args.image_items,
        )
    results["max_rss_mib"] = _common.max_rss_mib()
    print("RESULT " + json.dumps(results))


def parent(args) -> None:
    import django  # noqa: F401  (machine() reads its version)

    print(f"[import_speed] {_common.machine()}")
    print(f"[import_speed] load average: {os.getloadavg()}")
    backends = args.backends.split(",")
    if "postgres" in backends and not args.database_url.startswith(("postgres://", "postgresql://")):
        print(
            "[import_speed] no PostgreSQL URL (--database-url / DATABASE_URL): SQLite only; "
            "wrap with perf/run_with_postgres.sh for both"
        )
        backends = [b for b in backends if b != "postgres"]
    tmp = Path(tempfile.mkdtemp(prefix="hv-perf-img-"))
    try:
        if args.image_items:
            t0 = time.perf_counter()
            make_images(tmp, 2 * args.image_items)
            size = sum(p.stat().st_size for p in tmp.iterdir())
            print(
                f"[import_speed] generated {2 * args.image_items} distinct PNGs 480x360 "
                f"({size / 2 / args.image_items / 1024:.0f} KiB avg) in {time.perf_counter() - t0:.1f} s (not timed)"
            )
        all_results = []
        for backend in backends:
            argv = [
                str(Path(__file__)),
                "--child",
                "--backend",
                backend,
                "--database-url",
                args.database_url,
                "--text-items",
                str(args.text_items),
                "--image-items",
                str(args.image_items),
                "--annotators",
                str(args.annotators),
                "-k",
                str(args.k),
                "--images-dir",
                str(tmp),
            ]
            proc = _common.run_child(argv)
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
            if proc.returncode != 0 or line is None:
                print(proc.stdout[-3000:], proc.stderr[-3000:])
                raise SystemExit(f"{backend} run failed ({proc.returncode})")
            res = json.loads(line[len("RESULT ") :])
            all_results.append(res)
            print(f"\n[import_speed] {res['backend']} {res['server_version']} (max RSS {res['max_rss_mib']:.0f} MiB)")
            for run in res["runs"]:
                extra = (
                    f", {run['images']} images ({run['images'] / run['seconds']:.0f} images/s)" if run["images"] else ""
                )
                print(
                    f"  {run['label']:<6} {run['preset']:<26} {run['items']:>7} items{extra}, "
                    f"{run['assignments']} assignments (k={args.k}, {args.annotators} annotators): "
                    f"{run['seconds']:.2f} s = {run['items_per_s']:,.0f} items/s"
                )
                print("         phases: " + ", ".join(f"{k.strip()} {v:.2f} s" for k, v in run["phases"].items()))
        if len(all_results) == 2:
            print(
                "\n[import_speed] PostgreSQL / SQLite time ratio: "
                + ", ".join(
                    f"{a['label']} {b['seconds'] / a['seconds']:.2f}"
                    for a, b in zip(all_results[0]["runs"], all_results[1]["runs"], strict=True)
                )
            )
        print(f"[import_speed] goal: >= 20,000 text items/s; load average at end: {os.getloadavg()}")
        if args.json:
            Path(args.json).write_text(json.dumps({"machine": _common.machine(), "results": all_results}, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_db_args(parser)
    parser.add_argument("--backends", default="sqlite,postgres", help="comma list: sqlite,postgres")
    parser.add_argument("--text-items", type=int, default=100_000)
    parser.add_argument("--image-items", type=int, default=2_000)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("-k", type=int, default=3)
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--backend", help=argparse.SUPPRESS)
    parser.add_argument("--images-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
    else:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        parent(args)


if __name__ == "__main__":
    main()
