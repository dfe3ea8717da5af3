"""Reading the group members' logs (tests/faults/group_member.py's format) and judging a chaos run.

:func:`read_log` parses one member's log. :func:`judge_records` replays every member's processing and
commits and counts, per sequence number, how often it was processed; a duplicate is *allowed* when every
processing of that record before the last one was left uncommitted by its member (the member was killed,
or gave the partition up, before a commit covering it succeeded: the at-least-once window), and *outside
the window* otherwise (someone processed a record again after its processing had been committed). A
record is *lost* when no processing of it was committed (never processed, or processed only by members
that died before committing it while nobody processed it again).
:func:`owners_at` / :func:`moves` / :func:`minimum_moves` measure rebalances.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class Processed:
    """One poll's records of one partition, processed by ``member``."""

    member: str
    ms: int
    partition: int
    first: int
    last: int
    values: np.ndarray
    committed: bool = False
    cause: str = ""  # why it stayed uncommitted: killed / revoked / lost / closed


@dataclass
class MemberLog:
    name: str
    path: Path
    processed: list[Processed] = field(default_factory=list)
    #: (ms, kind A/V/L, partitions, owned after)
    assignment: list[tuple[int, str, set[int], set[int]]] = field(default_factory=list)
    commits: int = 0
    commit_failures: Counter[str] = field(default_factory=Counter)
    started_ms: int | None = None
    closed_ms: int | None = None

    def owned_at(self, ms: int) -> set[int]:
        """What the member owned at wall time ``ms`` (empty before it started or after it closed)."""
        owned: set[int] = set()
        for t, _, _, after in self.assignment:
            if t > ms:
                break
            owned = after
        if self.closed_ms is not None and self.closed_ms <= ms:
            return set()
        return owned


def _ints(s: str) -> list[int]:
    return [] if s == "-" else [int(x) for x in s.split(",")]


def read_log(path: Path, killed: bool = False, records: bool = True) -> MemberLog:
    """Parse a member's log; mark what it processed as committed or not (see the module docstring).

    ``killed``: the process was SIGKILLed, so its last line may be cut short (it is ignored).
    ``records=False`` reads only the assignment changes (fast).
    """
    m = MemberLog(name=path.stem, path=path)
    pending: dict[int, list[Processed]] = {}
    lines = path.read_text().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif killed and lines:
        lines.pop()  # written in part when the process died
    for line in lines:
        if not records and line[0] in "RCF":
            continue
        kind, ms_s, *rest = line.split(" ")
        ms = int(ms_s)
        if kind == "S":
            m.name, m.started_ms = rest[0], ms
        elif kind == "R":
            pr = Processed(m.name, ms, int(rest[0]), int(rest[1]), int(rest[2]), np.array(_ints(rest[3]), np.int64))
            m.processed.append(pr)
            pending.setdefault(pr.partition, []).append(pr)
        elif kind == "C":
            m.commits += 1
            for item in rest[0].split(","):
                p, off = (int(x) for x in item.split(":"))
                still = []
                for pr in pending.get(p, []):
                    if pr.last < off:
                        pr.committed = True
                    else:
                        still.append(pr)
                pending[p] = still
        elif kind == "F":
            m.commit_failures[rest[1] if len(rest) > 1 else "?"] += 1
        elif kind in ("A", "V", "L"):
            parts, after = set(_ints(rest[0])), set(_ints(rest[2]))
            m.assignment.append((ms, kind, parts, after))
            if kind in ("V", "L"):
                for p in parts:
                    for pr in pending.pop(p, []):
                        pr.cause = "revoked" if kind == "V" else "lost"
        elif kind == "E":
            m.closed_ms = ms
    for prs in pending.values():
        for pr in prs:
            pr.cause = "killed" if m.closed_ms is None else "closed"
    return m


@dataclass
class RecordsReport:
    sent: int
    read_back: int  # distinct sequence numbers processed
    lost: int  # no committed processing
    uncommitted_only: int  # of ``lost``: processed, but only by members that never committed it
    duplicated: int  # processings beyond the first, over all records
    duplicated_allowed: int
    outside_window: int
    misplaced: int  # a record whose value is not the one produced at its (partition, offset)
    allowed_by_cause: dict[str, int]

    def __str__(self) -> str:
        return (
            f"sent={self.sent} read_back={self.read_back} lost={self.lost} (processed but never committed: "
            f"{self.uncommitted_only}) duplicated={self.duplicated} "
            f"(allowed {self.duplicated_allowed}: {self.allowed_by_cause}; outside the window "
            f"{self.outside_window}) misplaced={self.misplaced}"
        )


def judge_records(logs: list[MemberLog], sent: int, partitions: int) -> RecordsReport:
    """Counts over every member's processing; record ``i`` was produced to partition ``i % partitions``
    at offset ``i // partitions``."""
    seen = np.zeros(sent, dtype=np.int64)
    done = np.zeros(sent, dtype=bool)  # some processing of it was committed
    per_partition = -(-sent // partitions)
    misplaced = 0
    outside = 0
    by_cause: Counter[str] = Counter()
    everything = sorted((pr for m in logs for pr in m.processed), key=lambda pr: pr.ms)
    committed_before = np.zeros((partitions, per_partition), dtype=bool)
    uncommitted_cause: dict[tuple[int, int], str] = {}
    times = np.zeros((partitions, per_partition), dtype=np.int64)
    for pr in everything:
        offsets = np.arange(pr.first, pr.last + 1)
        expected = offsets * partitions + pr.partition
        if len(pr.values) != len(offsets) or not np.array_equal(pr.values, expected):
            misplaced += 1
            continue
        seen[pr.values] += 1
        if pr.committed:
            done[pr.values] = True
        window = slice(pr.first, pr.last + 1)
        again = times[pr.partition, window] > 0
        outside += int(np.count_nonzero(committed_before[pr.partition, window]))
        # Allowed duplicates, attributed to why the earlier processing was not committed.
        for o in offsets[again & ~committed_before[pr.partition, window]]:
            by_cause[uncommitted_cause.get((pr.partition, int(o)), "?")] += 1
        times[pr.partition, window] = pr.ms
        if pr.committed:
            committed_before[pr.partition, window] = True
        else:
            for o in offsets:
                uncommitted_cause[(pr.partition, int(o))] = f"{pr.cause} ({pr.member})"
    dup = int(np.clip(seen - 1, 0, None).sum())
    return RecordsReport(
        sent=sent,
        read_back=int(np.count_nonzero(seen)),
        lost=int(np.count_nonzero(~done)),
        uncommitted_only=int(np.count_nonzero(~done & (seen > 0))),
        duplicated=dup,
        duplicated_allowed=dup - outside,
        outside_window=outside,
        misplaced=misplaced,
        allowed_by_cause=dict(by_cause),
    )


def owners_at(logs: list[MemberLog], ms: int) -> dict[int, str]:
    """Partition -> owning member at wall time ``ms`` (a partition two members claim maps to both, joined
    by '+', which :func:`stable` rejects)."""
    out: dict[int, str] = {}
    for m in logs:
        for p in m.owned_at(ms):
            out[p] = f"{out[p]}+{m.name}" if p in out else m.name
    return out


def stable(owners: dict[int, str], members: set[str], partitions: int) -> bool:
    """Every partition owned by exactly one of ``members``, every member owning some, balanced (±1)."""
    if set(owners) != set(range(partitions)) or any(o not in members for o in owners.values()):
        return False
    counts = Counter(owners.values())
    if set(counts) != members:
        return False
    return max(counts.values()) - min(counts.values()) <= 1


def moves(before: dict[int, str], after: dict[int, str]) -> int:
    """Partitions whose owner changed."""
    return sum(1 for p, o in after.items() if before.get(p) != o)


def minimum_moves(before: dict[int, str], members: set[str], partitions: int) -> int:
    """The fewest partitions that must change owner to go from ``before`` to a balanced assignment over
    ``members`` (each gets ``P // M`` or ``P // M + 1``): those of departed members move, and a member
    keeps at most its share; the larger shares go to the members holding the most."""
    q, r = divmod(partitions, len(members))
    held = sorted((sum(1 for o in before.values() if o == m) for m in members), reverse=True)
    kept = sum(min(h, q + 1 if i < r else q) for i, h in enumerate(held))
    return partitions - kept


def revoked_between(log: MemberLog, start_ms: int, end_ms: int) -> tuple[set[int], int]:
    """Partitions ``log``'s member revoked (or lost) in ``(start_ms, end_ms]``, and how many events."""
    out: set[int] = set()
    n = 0
    for t, kind, parts, _ in log.assignment:
        if start_ms < t <= end_ms and kind in ("V", "L") and parts:
            out |= parts
            n += 1
    return out, n
