"""Build the wheel and the sdist, install the wheel alone in a fresh virtual environment and
run what a user runs from it: the demo, the command line, the inspector and the MCP server.

    python scripts/check_wheel.py            # about a minute; exits 1 naming what failed

The environment is made with ``--system-site-packages`` and the wheel installed with
``--no-deps``, so the dependencies come from this machine and only ``langgraph_episodic``
comes from the wheel; everything runs in a temporary folder, so the checkout is not on
``sys.path``. The build runs ``--no-isolation`` (offline: setuptools from this environment).
Checks: the metadata a package index shows (summary, licence, classifiers, README), the data
files inside (templates, static files, ``py.typed``), and that each command works from the
installed copy.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from http.cookiejar import CookieJar
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "langgraph_episodic"
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False", "TOKENIZERS_PARALLELISM": "false", "MPLBACKEND": "Agg"}
METADATA_FIELDS = ("Summary", "License-Expression", "License-File", "Requires-Python",
                   "Classifier", "Keywords", "Description-Content-Type")
"""What a package index shows about the project; each must be in the wheel's METADATA."""

LIST_TOOLS = """
import asyncio, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    server = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        print(" ".join(sorted(t.name for t in (await session.list_tools()).tools)))

asyncio.run(main())
"""


def step(name: str, started: float) -> None:
    print(f"ok   {name} ({time.monotonic() - started:.1f} s)", flush=True)


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 120) -> str:
    """Run ``args``; its stdout, or SystemExit with its output when it fails."""
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        raise SystemExit(f"FAIL {' '.join(args)} exited {done.returncode}:\n"
                         f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return done.stdout


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"FAIL {message}")


def package_data() -> set[str]:
    """The non-Python files of the package in the checkout (what the wheel must carry)."""
    return {str(p.relative_to(ROOT)) for p in (ROOT / PACKAGE).rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts}


def build(out: Path, env: dict[str, str]) -> tuple[Path, Path]:
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        cwd=out.parent, env=env, timeout=300)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return wheel, sdist


def check_wheel_contents(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode("utf-8")
    missing = sorted(package_data() - names)
    expect(not missing, f"the wheel lacks the package's data files {missing}: add them to "
                        "[tool.setuptools.package-data] in pyproject.toml")
    expect(any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "no LICENSE in the wheel")
    headers = {line.split(":", 1)[0] for line in text.split("\n\n", 1)[0].splitlines()}
    absent = [f for f in METADATA_FIELDS if f not in headers]
    expect(not absent, f"the wheel's METADATA lacks {absent}")
    expect("# langgraph-episodic" in text, "the README is not the wheel's long description")


def install(wheel: Path, venv: Path, env: dict[str, str]) -> Path:
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], venv.parent, env)
    python = venv / "bin" / "python"
    run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         "--ignore-installed", str(wheel)], venv.parent, env)
    where = run([str(python), "-c", f"import {PACKAGE}, importlib.resources as r; "
                 f"print({PACKAGE}.__file__); "
                 f"print(r.files('{PACKAGE}').joinpath('py.typed').is_file())"],
                venv.parent, env).split()
    expect(where[0].startswith(str(venv)), f"{PACKAGE} was imported from {where[0]}, not the wheel")
    expect(where[1] == "True", "py.typed is not installed")
    return venv / "bin"


def check_ui(bin_dir: Path, store: Path, work: Path, env: dict[str, str]) -> None:
    """``ui`` starts, and its pages (templates), style sheet (static) and SVG curve load."""
    log = work / "ui.log"  # a file, not a pipe: a full pipe would block the server
    with log.open("w") as errors:
        server = subprocess.Popen(
            [str(bin_dir / "langgraph-episodic"), "ui", "--port", "0", "--path", str(store),
             "--embeddings", "hash", "--read-only"],
            cwd=work, env=env, stdout=subprocess.PIPE, stderr=errors, text=True)
    try:
        assert server.stdout is not None
        url = ""
        for line in server.stdout:
            if match := re.search(r"http://\S+token=\S+", line):
                url = match.group(0)
                break
        expect(bool(url), f"ui printed no URL: {log.read_text()}")
        opener = urllib.request.build_opener(  # no proxy for 127.0.0.1; the token's cookie
            urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(CookieJar()))
        base = url.split("/?", 1)[0]
        pages = {url: "<html", f"{base}/static/style.css": "{",
                 f"{base}/learning?user=demo": "<svg", f"{base}/learning/curve.svg?user=demo": "<svg"}
        for page, marker in pages.items():
            with opener.open(page, timeout=60) as answer:
                body = answer.read().decode("utf-8")
            expect(answer.status == 200 and marker in body,
                   f"ui: {page} answered {answer.status}; log: {log.read_text()[-2000:]}")
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> int:
    started = time.monotonic()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(OFFLINE)
    with tempfile.TemporaryDirectory(prefix="check-wheel-") as temp:
        tmp = Path(temp)
        work = tmp / "work"
        work.mkdir()
        (tmp / "dist").mkdir()
        t = time.monotonic()
        wheel, sdist = build(tmp / "dist", env)
        check_wheel_contents(wheel)
        step(f"build: {wheel.name}, {sdist.name}; metadata and data files", t)

        t = time.monotonic()
        bin_dir = install(wheel, tmp / "venv", env)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        step("installed in a fresh virtual environment, imported from the wheel", t)

        t = time.monotonic()
        cli = str(bin_dir / "langgraph-episodic")
        store = work / "store"
        run([cli, "demo", "--help"], work, env)
        out = run([cli, "demo", "--tasks", "8", "--embeddings", "hash", "--path", str(store),
                   "--plot", str(work / "curve.svg")], work, env)
        expect("8 episodes" in out and (work / "curve.svg").is_file(), f"demo: {out[-500:]}")
        step("demo (8 tasks, hash embedder) and its plot", t)

        t = time.monotonic()
        stats = json.loads(run([cli, "stats", "--path", str(store), "--json"], work, env))
        expect(bool(stats), "stats printed nothing")
        run([cli, "--version"], work, env)
        step("command line: --version, stats --json", t)

        t = time.monotonic()
        check_ui(bin_dir, store, work, env)
        step("inspector: page, static file, learning curve", t)

        t = time.monotonic()
        tools = run([str(bin_dir / "python"), "-c", LIST_TOOLS, cli, "mcp", "--user", "alice",
                     "--path", str(work / "mcp-store"), "--embeddings", "hash"], work, env)
        expect("memory_abrufen" in tools.split() and "memory_speichern" in tools.split(),
               f"mcp listed {tools!r}")
        step(f"MCP server over stdio lists {tools.strip()}", t)
    print(f"wheel check passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
