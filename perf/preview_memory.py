"""Peak memory of an annotation-import preview of a Label Studio JSON export, by file size
(issue 37, M3): ``annotation_import.preview_staged`` (what the page's inline preview and the
preview job run) in a fresh child process per file, its peak resident memory (``VmHWM``,
Django included: the ``baseline`` row is a child that only sets up; unlike ``ru_maxrss`` it is
the child's own, not the parent's at the fork). ``streamed``: the check as it is (the file read
from disk a chunk at a time for each pass, no rating and no row kept: ``check_annotations`` with
``keep_rows=False``); ``whole``: the same, but the Label Studio reader made to decline the
stream (``core.values.iter_array``), so it reads the file's whole text with ``json.loads``.
Run it on an older tree to measure the check before.

Each file: --sources annotators rating every one of N / --sources tasks (one choice each, a
lead time and timestamps: Label Studio's shape, ~197 bytes per annotation here, ~145 in the
145 MB 10^6-annotation export of the issue), against a Turing project holding those items.

  .venv/bin/python perf/preview_memory.py                               # 10^4 .. 10^6 annotations
  .venv/bin/python perf/preview_memory.py --annotations 10000,100000    # quick
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common


def peak_mib() -> float:
    """This process's peak resident memory (``VmHWM``: its own since its start, in MiB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def child(args: argparse.Namespace) -> None:
    import django

    django.setup()
    from annotation import annotation_import
    from annotation.models import Project

    if args.child == "baseline":
        print(json.dumps({"peak_mib": peak_mib()}))
        return
    mode, project_id, path = args.child.split(":", 2)
    if mode == "whole":
        from annotation.sources import labelstudio

        def declined(text, **kwargs):
            raise ValueError("not streamed")

        labelstudio.iter_array = declined
    report = annotation_import.preview_staged(
        project=Project.objects.get(pk=int(project_id)),
        path=Path(path),
        data_format="labelstudio",
        item_key="id",
        mapping={},
    )
    print(
        json.dumps(
            {
                "peak_mib": peak_mib(),
                "annotations": report.annotations_read,
                "errors": report.errors[:3],
            }
        )
    )


def write_export(path: Path, tasks: int, sources: int) -> None:
    with path.open("w") as fh:
        fh.write("[")
        for i in range(tasks):
            anns = ",".join(
                json.dumps(
                    {
                        "id": i * sources + r,
                        "completed_by": r + 1,
                        "lead_time": 4.2,
                        "created_at": "2024-05-01T10:00:00Z",
                        "result": [{"from_name": "human_written", "type": "choices", "value": {"choices": ["left"]}}],
                    }
                )
                for r in range(sources)
            )
            fh.write(("," if i else "") + f'{{"id": {i}, "data": {{"id": "t{i}"}}, "annotations": [{anns}]}}')
        fh.write("]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common.add_db_args(parser)
    parser.add_argument("--annotations", default="10000,100000,1000000")
    parser.add_argument("--sources", type=int, default=5)
    parser.add_argument("--modes", default="streamed,whole")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    info = _common.setup_django("sqlite", keep=args.keep)
    from django.contrib.auth import get_user_model
    from sqlite_stack_bench import insert_turing_items

    from annotation import projects

    owner = get_user_model().objects.create(username="owner")
    sizes = [int(s) for s in args.annotations.split(",")]
    project = projects.create_project(name="p", preset_key="cqbench.turing", created_by=owner, k_per_item=1)
    insert_turing_items(project, max(sizes) // args.sources)
    baseline = json.loads(_common.run_child([__file__, "--child", "baseline"]).stdout)
    print(f"machine {_common.machine()}")
    print(f"baseline child (Django set up): peak {baseline['peak_mib']:.0f} MiB")
    print(f"{'annotations':>12} {'MB file':>8} {'mode':>9} {'peak MiB':>9}")
    for n in sizes:
        path = Path(info["tmp"]) / f"ls-{n}.json"
        write_export(path, n // args.sources, args.sources)
        for mode in args.modes.split(","):
            res = _common.run_child([__file__, "--child", f"{mode}:{project.id}:{path}"])
            if res.returncode:
                print(res.stdout, res.stderr[-2000:])
                raise SystemExit(res.returncode)
            r = json.loads(res.stdout.strip().splitlines()[-1])
            assert not r["errors"] and r["annotations"] == n, r
            print(f"{n:>12,} {path.stat().st_size / 1e6:>8.1f} {mode:>9} {r['peak_mib']:>9.0f}", flush=True)
        path.unlink()


if __name__ == "__main__":
    main()
