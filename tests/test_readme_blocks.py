"""Every code block of README.md and of the user guide (docs/guide/*.md) runs, as a new user would run it: in a
fresh venv holding only the wheel built from this checkout and the extras the README's Install section names for
what the block uses (issue 15; the guide, issue 37). One wheel and one venv per set of extras serve every block.

Rules (kept explicit so that the skip list stays tiny):

* ```python blocks run each in its own subprocess of the block's venv, from an empty temporary directory.
* ```bash blocks run under ``bash -e -o pipefail`` with the venv's ``bin`` first on ``PATH``. A line whose
  command is ``kafkawire broker`` (it runs until Ctrl-C) is started in the background from that venv, and the
  ``export KAFKAWIRE_BOOTSTRAP=...`` line it prints is applied to the rest of the block.
* Not run: blocks whose first command is ``pip``, ``./dev`` or ``.venv/...`` (installing kafkawire or working
  on the checkout, which this test does itself) and blocks preceded by ``<!-- readme-test: skip (reason) -->``.
* The extras of a block come from what it uses (:data:`EXTRA_TRIGGERS`), and every extra used must be one the
  README's Install block names: a block needing a package no named extra installs fails here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide"


#: Guide pages without a runnable example: the index, and the contributors' page (its blocks are ./dev set-up).
_NO_EXAMPLE = {"index", "development"}


def documents() -> list[Path]:
    """The pages whose blocks run: the README, then the guide's pages in name order."""
    return [README, *sorted(GUIDE.glob("*.md"))]


def doc_name(path: Path) -> str:
    return str(path.relative_to(ROOT))

_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.S | re.M)
_SKIP = re.compile(r"<!--\s*readme-test:\s*skip\s*\((.+?)\)\s*-->\s*$")
#: Commands that install kafkawire or work on the checkout: this test builds the wheel and venvs itself.
_SETUP_COMMANDS = ("pip", "./dev", ".venv/")

#: (pattern in a block, extra of kafkawire that provides it): what the Install section promises per extra.
EXTRA_TRIGGERS: tuple[tuple[str, str], ...] = (
    (r"start_broker\(|start_schema_registry\(|^kafkawire broker", "brokers"),
    (r"to_arrow\(|import pyarrow", "arrow"),
    (r"to_pandas\(", "pandas"),
    (r"--format parquet", "cli"),
    (r"kafkawire\.spark|format\(\"kafkawire\"\)", "spark"),
    (r"^import kafka\b|kafkawire\.compat\.kafka_python", "kafka-python"),
    (r"kafkawire\.compat\.aiokafka\b|^import aiokafka", "aiokafka"),
)


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    skip_reason: str | None

    @property
    def first_command(self) -> str:
        for line in self.code.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                return line.strip()
        return ""

    def extras(self) -> frozenset[str]:
        # pandas brings pyarrow: a block using both needs only [pandas]
        found = {extra for pattern, extra in EXTRA_TRIGGERS if re.search(pattern, self.code, re.M)}
        if "pandas" in found or "spark" in found or "cli" in found:
            found.discard("arrow")
        return frozenset(found)


def readme_blocks(text: str) -> list[Block]:
    blocks = []
    for m in _BLOCK.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = _SKIP.search(before)
        blocks.append(Block(line, m.group(1), m.group(2), skip.group(1) if skip else None))
    return blocks


def named_extras(text: str) -> set[str]:
    """The extras of the Install section's ``pip install ".[x]"`` lines."""
    install = text.split("## Install", 1)[1].split("\n## ", 1)[0]
    return {e.strip() for m in re.finditer(r'pip install "\.\[([^\]]+)\]"', install) for e in m.group(1).split(",")}


def to_run(block: Block) -> str | None:
    """Why ``block`` is not run, or None when it is."""
    if block.skip_reason:
        return f"marked: {block.skip_reason}"
    if block.lang not in ("python", "bash"):
        return f"{block.lang} block"
    if block.lang == "bash" and block.first_command.startswith(_SETUP_COMMANDS):
        return f"set-up block ({block.first_command.split()[0]})"
    return None


def test_readme_block_rules() -> None:
    """The rules above applied to the README and the guide as they are: what runs, what does not, and which
    extras it gets."""
    named = named_extras(README.read_text())
    assert {"arrow", "pandas", "cli", "spark", "brokers", "kafka-python"} <= named, named
    assert len(documents()) > 10, "the guide's pages are found"
    marked = []
    for path in documents():
        blocks = readme_blocks(path.read_text())
        if path.stem not in _NO_EXAMPLE:  # a page for a task shows it in a block that runs
            assert any(to_run(b) is None for b in blocks), f"{doc_name(path)}: no block of it runs"
        for block in blocks:
            if to_run(block) is None:
                assert block.extras() <= named, (
                    f"{doc_name(path)} line {block.line} needs extras the README's Install section lacks"
                )
        marked += [b for b in blocks if b.skip_reason]
    # Marked skips are few (each needs a cluster the reader has and the test has not) and carry a reason.
    assert len(marked) <= 3 and all(len(b.skip_reason or "") > 20 for b in marked)


def _build_wheel(out: Path) -> Path:
    # As tests/test_packaging.py: the test venv has the build requirements, so no isolation (and no download).
    # Built from a clean copy of the sources: the checkout's build/ directory may hold objects another job
    # compiled differently (the fuzz build is instrumented with ASan), and setuptools would reuse them. In
    # one full CI run the wheel built in place could not import its compiled core.
    src = out.parent / "src"
    shutil.copytree(
        ROOT, src,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "dist", "*.egg-info", "*.so", "_codec.c", "__pycache__"
        ),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-build-isolation", "--no-deps", "-w", str(out)],
        capture_output=True, text=True, timeout=900, check=False,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    (wheel,) = out.glob("kafkawire-*.whl")
    return wheel


def _clean_env() -> dict[str, str]:
    """The environment without anything that points Python at the checkout or the test venv."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("KAFKAWIRE_", "PYTHON", "VIRTUAL_ENV"))}


def _make_venv(path: Path, wheel: Path, extras: frozenset[str]) -> Path:
    venv.create(path, with_pip=True)  # no system site packages: only what pip installs below
    python = path / ("Scripts" if os.name == "nt" else "bin") / "python"
    spec = f"kafkawire[{','.join(sorted(extras))}] @ {wheel.as_uri()}" if extras else str(wheel)
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", spec],
        capture_output=True, text=True, timeout=900, check=False,
        # A clean environment: kafkawire.spark.session() puts the checkout on PYTHONPATH for its workers, and
        # a pip that inherits it finds kafkawire "already satisfied" and installs nothing (a full CI run).
        env=_clean_env(),
    )
    assert proc.returncode == 0, f"pip install {spec}:\n{(proc.stdout + proc.stderr)[-4000:]}"
    return python


def _run_bash(block: Block, python: Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    lines = block.code.splitlines()
    broker = None
    script = []
    for line in lines:
        if line.strip().startswith("kafkawire broker"):
            command = line.split("#", 1)[0].split()
            command[0] = str(python.parent / command[0])  # the venv's console script, not one on PATH
            broker = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True)
            assert broker.stdout is not None
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                out = broker.stdout.readline()
                m = re.search(r"export KAFKAWIRE_BOOTSTRAP=(\S+)", out)
                if m:
                    env = dict(env, KAFKAWIRE_BOOTSTRAP=m.group(1))
                    # Keep reading its output so that a full pipe never stalls the broker.
                    threading.Thread(target=broker.stdout.read, daemon=True).start()
                    break
                assert out or broker.poll() is None, "kafkawire broker exited without printing its export line"
            else:
                raise AssertionError("kafkawire broker printed no export line within 60 s")
        else:
            script.append(line)
    try:
        return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", "\n".join(script)], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=300, check=False)
    finally:
        if broker is not None:
            broker.terminate()
            try:
                broker.wait(20)
            except subprocess.TimeoutExpired:
                broker.kill()
                broker.wait()


@pytest.mark.slow
@pytest.mark.broker
@pytest.mark.timeout(3600)
def test_every_readme_block_runs(tmp_path: Path) -> None:
    """Every block of the README and of the guide (counted in the output: ``-s`` shows it)."""
    runnable: list[tuple[str, Block]] = []
    for path in documents():
        for block in readme_blocks(path.read_text()):
            reason = to_run(block)
            where = f"{doc_name(path)} line {block.line}"
            print(f"{where} ({block.lang}): " + (f"not run, {reason}" if reason else "runs"))
            if reason is None:
                runnable.append((where, block))
    print(f"{len(runnable)} blocks run")
    wheel = _build_wheel(tmp_path / "dist")
    venvs: dict[frozenset[str], Path] = {}
    failures = []
    for number, (where, block) in enumerate(runnable):
        extras = block.extras()
        if extras not in venvs:
            venvs[extras] = _make_venv(tmp_path / f"venv-{len(venvs)}", wheel, extras)
        python = venvs[extras]
        cwd = tmp_path / f"block-{number}"
        cwd.mkdir()
        env = _clean_env()
        env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
        env["KAFKAWIRE_REQUIRE_COMPILED"] = "1"
        started = time.monotonic()
        if block.lang == "python":
            proc = subprocess.run([str(python), "-c", block.code], cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=600, check=False)
        else:
            try:
                proc = _run_bash(block, python, cwd, env)
            except OSError as e:  # report it with the other blocks' output instead of hiding theirs
                failures.append(f"{where} (bash, extras {sorted(extras)}): {e!r}")
                continue
        print(f"{where}: extras {sorted(extras)}, exit {proc.returncode}, {time.monotonic() - started:.1f} s")
        if proc.returncode != 0:
            failures.append(f"{where} ({block.lang}, extras {sorted(extras)}):\n"
                            f"{(proc.stdout + proc.stderr)[-3000:]}")
    assert not failures, "\n\n".join(failures)
