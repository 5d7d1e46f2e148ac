"""The commands the README and the examples tell a user to run work as written, offline.

Every line of the ```bash blocks of README.md and of each ``examples/**/README.md`` is checked
without side effects: ``pip install`` names this checkout with extras it defines, or valid
requirements (nothing is installed); ``langgraph-episodic ...`` parses with the real parser;
``langgraph <command> --opts`` names options the installed CLI has; ``bash``/``python`` run a
file that exists and parses. The examples' own documented commands run for real:
``python examples/mcp_agent/agent.py`` (offline, its default), the server example's graph
imports, and the README's ``jupyter execute --output=...`` keeps the outputs it promises.
The ```python blocks run in ``test_readme.py``; links and anchors are checked in
``test_readme_statements.py``.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import InvalidRequirement, Requirement

from langgraph_episodic.cli.parser import build_parser
from tests.script_modules import script_module

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
EXAMPLE_READMES = sorted((ROOT / "examples").glob("**/README.md"))
BASH_BLOCK = re.compile(r"^```(?:bash|sh|shell)[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
           "TOKENIZERS_PARALLELISM": "false"}


def shell_commands(text: str) -> list[list[str]]:
    """Each simple command of the bash blocks of ``text``, as words (comments dropped, ``&&``
    chains split)."""
    commands = []
    for block in BASH_BLOCK.findall(text):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            command: list[str] = []
            for word in [*words, "&&"]:
                if word == "&&":
                    if command:
                        commands.append(command)
                    command = []
                else:
                    command.append(word)
    return commands


def test_shell_commands_split_as_bash_does() -> None:
    text = '```bash\npip install -e ".[dev]" && bash scripts/check   # all\nexport A="x y"\n```\n'
    assert shell_commands(text) == [["pip", "install", "-e", ".[dev]"],
                                    ["bash", "scripts/check"], ["export", "A=x y"]]


def _extras() -> set[str]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return set(tomllib.load(f)["project"]["optional-dependencies"])


def check_pip_install(args: list[str], where: Path) -> None:
    """Install targets as pip would read them: a folder with a pyproject.toml and extras the
    project defines, or a valid requirement; options (``-e``, ``--index-url URL``) pass."""
    skip_next = False
    for arg in args:
        if skip_next or arg in ("-e", "--editable", "-q", "-U", "--upgrade"):
            skip_next = False
            continue
        if arg in ("--index-url", "--extra-index-url", "-i", "-r", "-c"):
            skip_next = True
            continue
        if arg.startswith((".", "/")):
            path, _, extra = arg.partition("[")
            assert (where / path / "pyproject.toml").is_file(), f"pip install {arg}: no project"
            named = set(filter(None, extra.rstrip("]").split(",")))
            assert named <= _extras(), f"pip install {arg}: no extra {sorted(named - _extras())}"
        else:
            try:
                Requirement(arg)
            except InvalidRequirement as exc:
                raise AssertionError(f"pip install {arg}: not a requirement ({exc})") from exc


def check_command(words: list[str], where: Path) -> None:
    """What running ``words`` in ``where`` needs, checked without running it."""
    program, args = words[0], words[1:]
    if program == "pip" and args[:1] == ["install"]:
        check_pip_install(args[1:], where)
    elif program == "langgraph-episodic":
        try:
            build_parser().parse_args(args)
        except SystemExit as exc:
            raise AssertionError(f"langgraph-episodic {shlex.join(args)}: the parser refuses "
                                 "it") from exc
    elif program == "langgraph":
        helped = subprocess.run(["langgraph", args[0], "--help"], capture_output=True, text=True,
                                check=False, timeout=60)
        assert helped.returncode == 0, helped.stderr
        for option in (a for a in args if a.startswith("--")):
            assert option in helped.stdout, f"langgraph {args[0]} has no {option}"
    elif program == "bash":
        script = where / args[0]
        assert script.is_file(), f"bash {args[0]}: no such file"
        assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    elif program == "python":
        script = where / args[0]
        assert script.is_file(), f"python {args[0]}: no such file"
        ast.parse(script.read_text(encoding="utf-8"))
    elif program == "export":
        assert all(re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", a, re.DOTALL) for a in args), args
    else:
        raise AssertionError(f"{shlex.join(words)}: this test does not know how to check "
                             f"`{program}`; teach check_command")


@pytest.mark.parametrize("page", [README, *EXAMPLE_READMES],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shell_command_of_the_page_would_run(page: Path) -> None:
    commands = shell_commands(page.read_text(encoding="utf-8"))
    assert commands, f"{page.relative_to(ROOT)} shows how to install and run"
    where = ROOT if page == README else page.parent  # the example's commands run in its folder
    for words in commands:
        check_command(words, where)


def test_the_checker_refuses_what_would_fail() -> None:
    for words in (["pip", "install", "-e", ".[nosuchextra]"], ["pip", "install", "-e", "./nowhere"],
                  ["langgraph-episodic", "demo", "--url", "x"], ["bash", "scripts/nothing"],
                  ["make", "all"]):
        with pytest.raises(AssertionError):
            check_command(words, ROOT)


# --- the examples' own commands -----------------------------------------------------------

MCP_AGENT = ROOT / "examples" / "mcp_agent" / "agent.py"


def documented_command(script: Path) -> list[str]:
    """The ``python <script>`` line the script's docstring gives as its offline run."""
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    lines = [line.strip() for line in doc.splitlines()
             if line.strip().startswith(f"python {script.relative_to(ROOT)}") and "offline" in line]
    assert len(lines) == 1, f"{script.relative_to(ROOT)} documents one offline command: {lines}"
    return shlex.split(lines[0], comments=True)


@pytest.mark.model
@pytest.mark.timeout(240)
def test_the_mcp_agent_example_runs_offline_as_documented(tmp_path: Path) -> None:
    """``python examples/mcp_agent/agent.py``: no API key, the default (German and English)
    embedder; the fact told in the first conversation is recalled in the second."""
    words = documented_command(MCP_AGENT)
    env = {k: v for k, v in os.environ.items()
           if k != "EPISODIC_CHAT_MODEL" and not k.endswith("_API_KEY")}
    env |= OFFLINE | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / words[1]), *words[2:]], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=220, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    with script_module("mcp_agent_doc", MCP_AGENT) as agent:
        told, asked = agent.TURNS
        assert agent.stdio_connection("alice", "x")["args"][-1] == "auto"
    said = told.split(" und ")[-1].rstrip(".")  # "trinke keinen Kaffee, nur grünen Tee"
    answers = done.stdout.split(f"> {asked}\n", 1)
    assert len(answers) == 2 and said in answers[1], done.stdout
    assert (tmp_path / ".episodic").is_dir(), "the example's store is in ./.episodic"


def test_the_mcp_agent_example_takes_a_real_model_by_flag_or_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with script_module("mcp_agent_flags", MCP_AGENT) as agent:
        assert type(agent.chat_model("")).__name__ == "OfflineModel"
        monkeypatch.setenv("EPISODIC_CHAT_MODEL", "nosuchprovider:model")
        with pytest.raises(ValueError, match="nosuchprovider"):
            agent.main([])  # the environment's model is the one it tries to start


def test_the_server_example_graphs_load_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``langgraph.json`` names in ``examples/langgraph_server`` imports with no model."""
    monkeypatch.delenv("EPISODIC_CHAT_MODEL", raising=False)
    folder = ROOT / "examples" / "langgraph_server"
    with script_module("server_example_graph", folder / "graph.py") as graph:
        assert graph.model is None
        assert {"graph", "formation"} <= set(vars(graph))
        assert hasattr(graph.graph, "invoke") and hasattr(graph.formation, "invoke")


@pytest.mark.timeout(120)
def test_the_readmes_headless_notebook_command_keeps_the_outputs(tmp_path: Path) -> None:
    """``jupyter execute --output=<path> <notebook>`` as the README says: the executed copy
    holds what the cells printed."""
    match = re.search(r"`(jupyter execute --output=(\S+) (\S+\.ipynb))`", README.read_text("utf-8"))
    assert match, "the README gives the headless command with --output"
    assert (ROOT / match.group(3)).is_file(), match.group(3)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('from a cell')")])
    nbformat.write(notebook, tmp_path / "small.ipynb")
    out = tmp_path / "executed"
    words = shlex.split(match.group(1).replace(match.group(2), str(out))
                        .replace(match.group(3), str(tmp_path / "small.ipynb")))
    done = subprocess.run(words, capture_output=True, text=True, timeout=110, check=False,
                          env=os.environ | OFFLINE)
    assert done.returncode == 0, done.stderr
    executed = nbformat.read(out.with_suffix(".ipynb"), as_version=4)
    assert executed.cells[0].outputs[0]["text"] == "from a cell\n"


def test_ci_checks_the_wheel_before_the_readmes_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    wheel = [i for i, line in enumerate(ci) if "scripts/check_wheel.py" in line]
    tests = [i for i, line in enumerate(ci) if line == 'pip install -e ".[dev]" && bash scripts/check']
    assert wheel and tests and wheel[0] < tests[0]
    assert (ROOT / "scripts" / "check_wheel.py").is_file()


def test_every_data_file_of_the_package_is_packaged() -> None:
    """Each non-Python file under ``langgraph_episodic/`` matches a ``package-data`` pattern
    (``scripts/check_wheel.py`` checks the built wheel itself)."""
    from fnmatch import fnmatch

    with (ROOT / "pyproject.toml").open("rb") as f:
        patterns = tomllib.load(f)["tool"]["setuptools"]["package-data"]
    package = ROOT / "langgraph_episodic"
    files = [p for p in package.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")
             and "__pycache__" not in p.parts]
    assert any(p.name == "py.typed" for p in files), "the package says it is typed"
    for path in files:
        parts = path.relative_to(ROOT).parts
        packaged = any(
            fnmatch("/".join(parts[depth:]), pattern)
            for depth in range(1, len(parts))
            for pattern in patterns.get(".".join(parts[:depth]), [])
        )
        assert packaged, f"{path.relative_to(ROOT)} is not in [tool.setuptools.package-data]"
