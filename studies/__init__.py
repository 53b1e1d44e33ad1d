"""Study design, one room: which items are rated (stratified samples), by whom (assignment plans:
eligibility and balance rules, caps, pre-assignment or a pool with leases), how well (quality
control) and by which crowd (Prolific entry), plus the progress dashboard and the choice of an
annotator's next item (``next_item.py``, with ``next_item.md`` beside it).

The tables stay in ``annotation.models`` (Sample, SampleItem, AssignmentPlan, PoolSlot,
CrowdStudy, CrowdParticipant and the QC columns of Assignment and Membership): these modules
are the code that reads and writes them."""
