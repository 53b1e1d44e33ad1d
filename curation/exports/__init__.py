"""Export writers: items (accepted or all) and annotations in long format, in any format of the
registry (``curation.export_formats``: JSONL, CSV, Parquet, a Hugging Face ``datasets`` folder),
plus the needs-revision items with feedback.

One module per content: :mod:`.items` (item rows, the element filter applied), :mod:`.annotations`
(long format), :mod:`.revisions`; one table class per format in :mod:`.tables` (JSONL, CSV,
Parquet) and :mod:`.huggingface` (the ``datasets`` folder and its card); :mod:`.common` holds
what they share and :mod:`.runner` the job itself.

Streaming throughout: rows come from ``values_list(...).iterator(chunk_size=...)`` (annotations)
or keyset chunks of items, are written batch by batch (Parquet: one row group per batch) to a
temporary file in the export's folder, hashed, and renamed into place. Memory stays flat in the
number of rows. Rater identities are pseudonymised with HMAC-SHA256 of the rater id under a
random per-export salt that is never stored: consistent within one export, unlinkable across.
"""

from .common import export_root, remove_partial_files
from .runner import content_type, file_path, main_file, run_export_job

__all__ = ["content_type", "export_root", "file_path", "main_file", "remove_partial_files", "run_export_job"]
