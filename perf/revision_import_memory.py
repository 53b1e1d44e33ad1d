"""Issue 12, finding 6: peak memory of a large revision import.

Setup: one Turing project with --items items (imported through ``import_items``), then a
revision file (JSONL, the import format) revising every item with a --kb KB utterance, so the
file is about items x kb KB. Each measured import runs in a fresh child process (same database,
same MEDIA_ROOT) and reports its ``ru_maxrss`` (peak resident memory, Django included: the
``baseline`` row is a child that only sets up) and seconds:

  * ``stream``  ``curation.services.import_revisions(data=<path>)``: what the page and the API
    do now (the upload is staged to disk chunk by chunk, then read as a stream, twice);
  * ``whole``   the file read into memory first (``data=path.read_bytes()``), as the page and the
    API did before (``data.read()`` of the upload).

Every child adds one version to every item (revisions of revisions), so the rows are measured in
the order given. ``--importing FILE`` loads another ``annotation/importing.py`` (e.g. an older
one) in the children, to compare code versions on the same data.

  .venv/bin/python perf/revision_import_memory.py                          # SQLite, ~100 MB
  perf/run_with_postgres.sh .venv/bin/python perf/revision_import_memory.py --items 3000 --kb 100
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common


def child(args: argparse.Namespace) -> None:
    import resource

    import django

    django.setup()
    if args.importing:
        import importlib.util

        import annotation

        spec = importlib.util.spec_from_file_location("annotation.importing", args.importing)
        module = importlib.util.module_from_spec(spec)
        sys.modules["annotation.importing"] = module
        spec.loader.exec_module(module)
        annotation.importing = module
    from annotation.models import Project
    from curation import services

    if args.child == "baseline":
        print(json.dumps({"peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "seconds": 0}))
        return
    project = Project.objects.get(pk=args.project)
    path = Path(args.file)
    t0 = time.perf_counter()
    data = path if args.child == "stream" else path.read_bytes()
    report = services.import_revisions(project=project, data=data)
    seconds = time.perf_counter() - t0
    assert report.ok, report.errors[:3]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"peak_mib": peak, "seconds": seconds, "items": report.items_created}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_db_args(parser)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--kb", type=int, default=95, help="KB of text per revised item (at most ~97)")
    parser.add_argument("--modes", default="stream,whole")
    parser.add_argument("--importing", default="", help="an annotation/importing.py to load in the children")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--project", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    info = _common.setup_django(args.database_url, keep=args.keep)
    from annotation import importing, projects
    from annotation.models import Item
    from tests.annotation.factories import make_user

    owner = make_user("perf-researcher", researcher=True)
    project = projects.create_project(name="revisions", preset_key="cqbench.turing", created_by=owner)
    records = [{"id": f"t{i}", "human_utterance": f"h{i}", "model_utterance": f"m{i}"} for i in range(args.items)]
    report = importing.import_items(
        project=project, data="".join(json.dumps(r) + "\n" for r in records), data_format="jsonl"
    )
    assert report.ok, report.errors[:3]
    path = Path(info["tmp"]) / "revisions.jsonl"
    text = "r" * (args.kb * 1000)
    with open(path, "w") as fh:
        for r in records:
            fh.write(json.dumps({**r, "human_utterance": text + r["id"], "_revision": {"of_version": 1}}) + "\n")
    size_mib = path.stat().st_size / 2**20
    from django.db import connections

    connections.close_all()
    env = {**os.environ}
    m = _common.machine()
    print(f"# {m['cpu']} x{m['nproc']}, {m['memory']}, Python {m['python']}, load {os.getloadavg()[0]:.1f}")
    print(f"# {info['backend']} {info['server_version']}, {args.items} items, revision file {size_mib:.1f} MiB")
    print(f"{'mode':<10} {'peak MiB':>9} {'over baseline':>14} {'seconds':>8}")
    baseline = None
    for mode in ["baseline", *args.modes.split(",")]:
        cmd = [sys.executable, __file__, "--child", mode, "--project", str(project.id), "--file", str(path)]
        if args.importing:
            cmd += ["--importing", args.importing]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if out.returncode:
            print(out.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"child {mode} failed")
        row = json.loads(out.stdout.strip().splitlines()[-1])
        baseline = row["peak_mib"] if baseline is None else baseline
        print(f"{mode:<10} {row['peak_mib']:>9.0f} {row['peak_mib'] - baseline:>14.0f} {row['seconds']:>8.1f}")
    versions = Item.objects.filter(project=project).values_list("version", flat=True).distinct()
    print(f"# versions now: {sorted(versions)}")


if __name__ == "__main__":
    main()
