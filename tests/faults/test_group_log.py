"""The group chaos judge (:mod:`faults.group_log`) on hand-written member logs: it must catch what the chaos
tests assert never happens (a duplicate after a committed processing, a record nobody committed, a record
read from the wrong place), not only pass clean runs."""

from __future__ import annotations

from pathlib import Path

from .group_log import judge_records, minimum_moves, moves, owners_at, read_log, stable

P = 2  # record i lives in partition i % 2 at offset i // 2


def _log(tmp_path: Path, name: str, *lines: str, closed: bool = True) -> Path:
    path = tmp_path / f"{name}.log"
    body = [f"S 1 {name}", *lines] + (["E 999"] if closed else [])
    path.write_text("\n".join(body) + "\n")
    return path


def test_a_duplicate_after_a_commit_is_outside_the_window(tmp_path: Path) -> None:
    a = _log(tmp_path, "a", "A 2 0,1 | 0,1", "R 3 0 0 1 0,2", "C 4 0:2", "R 5 1 0 1 1,3", "C 6 1:2", "V 7 0 | 1")
    b = _log(tmp_path, "b", "A 8 0 | 0", "R 9 0 0 1 0,2", "C 10 0:2")
    report = judge_records([read_log(a), read_log(b)], 4, P)
    assert (report.lost, report.duplicated, report.outside_window) == (0, 2, 2), str(report)


def test_a_duplicate_of_what_a_killed_member_never_committed_is_allowed(tmp_path: Path) -> None:
    a = _log(tmp_path, "a", "A 2 0,1 | 0,1", "R 3 1 0 1 1,3", "C 4 1:2", "R 5 0 0 1 0,2", closed=False)
    with open(a, "a") as f:
        f.write("R 6 0 2 3 4,")  # the line being written when SIGKILL came
    b = _log(tmp_path, "b", "A 8 0 | 0", "R 9 0 0 1 0,2", "C 10 0:2")
    report = judge_records([read_log(a, killed=True), read_log(b)], 4, P)
    assert (report.lost, report.duplicated, report.outside_window) == (0, 2, 0), str(report)
    assert report.allowed_by_cause == {"killed (a)": 2}


def test_a_partition_revoked_before_its_commit_allows_its_duplicates(tmp_path: Path) -> None:
    a = _log(tmp_path, "a", "A 2 0 | 0", "R 3 0 0 0 0", "F 4 0:1 RebalanceInProgressError", "V 5 0 | -")
    b = _log(tmp_path, "b", "A 6 0 | 0", "R 7 0 0 1 0,2", "C 8 0:2", "A 9 1 | 0,1", "R 10 1 0 1 1,3", "C 11 1:2")
    report = judge_records([read_log(a), read_log(b)], 4, P)
    assert (report.lost, report.duplicated, report.outside_window) == (0, 1, 0), str(report)
    assert report.allowed_by_cause == {"revoked (a)": 1}


def test_processed_but_never_committed_is_lost_and_misplaced_values_are_caught(tmp_path: Path) -> None:
    a = _log(tmp_path, "a", "A 2 0,1 | 0,1", "R 3 0 0 1 0,2", "C 4 0:2", "R 5 1 0 1 1,3", closed=False)
    report = judge_records([read_log(a, killed=True)], 4, P)
    assert (report.read_back, report.lost, report.uncommitted_only) == (4, 2, 2), str(report)
    b = _log(tmp_path, "b", "A 2 0 | 0", "R 3 0 0 1 0,3", "C 4 0:2")  # 3 is partition 1's
    assert judge_records([read_log(b)], 4, P).misplaced == 1


def test_moves_and_the_fewest_a_balanced_assignment_needs(tmp_path: Path) -> None:
    before = {p: "abc"[p // 4] for p in range(12)}
    assert minimum_moves(before, {"a", "b", "c", "d"}, 12) == 3  # a joiner takes 12 / 4
    assert minimum_moves(before, {"a", "b"}, 12) == 4  # c's four move, nothing else
    eager = {p: "abcd"[p % 4] for p in range(12)}  # everything reshuffled
    assert moves(before, eager) == 9 and stable(eager, {"a", "b", "c", "d"}, 12)
    assert not stable({**eager, 0: "a+b"}, {"a", "b", "c", "d"}, 12)
    a = _log(tmp_path, "a", "A 5 0,1 | 0,1", "V 9 1 | 0")
    b = _log(tmp_path, "b", "A 10 1 | 1")
    logs = [read_log(a), read_log(b)]
    assert owners_at(logs, 6) == {0: "a", 1: "a"} and owners_at(logs, 10) == {0: "a", 1: "b"}
