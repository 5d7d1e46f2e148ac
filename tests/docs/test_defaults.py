"""The defaults, limits and commands the README and the docs state are the code's.

Each value is read from the code (a signature, a constant, a constructed store) and looked up
in the text as the page writes it, so a changed default fails here until the page says so.
"""

from __future__ import annotations

import inspect
import re
from datetime import datetime
from pathlib import Path

from langgraph_episodic import ChromaStore
from langgraph_episodic.bilingual import BILINGUAL_DIMS, BilingualEmbeddings
from langgraph_episodic.cli.parser import DEFAULT_FOLDER
from langgraph_episodic.embeddings import MODEL_DIMS
from langgraph_episodic.graph.threads import DEFAULT_CHECKPOINT_PATH, open_checkpointer
from langgraph_episodic.graph.working_memory import CustomerHistory, OutputLog
from langgraph_episodic.multilingual import MULTILINGUAL_DIMS

ROOT = Path(__file__).resolve().parents[2]


def text(name: str) -> str:
    """``README.md`` or ``docs/<name>``, whitespace collapsed (a sentence may wrap anywhere)."""
    path = ROOT / name if name == "README.md" else ROOT / "docs" / name
    return " ".join(path.read_text(encoding="utf-8").split())


def default(fn: object, name: str) -> object:
    return inspect.signature(fn).parameters[name].default  # type: ignore[arg-type]


def human_size(n: int) -> str:
    """1048576 -> "1 MiB", 65536 -> "64 KiB", as the pages write sizes."""
    for unit, size in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


def test_the_default_embedder_is_the_two_language_one_with_the_stated_dimensions() -> None:
    with ChromaStore.ephemeral() as store:
        config = store.index_config
        assert config is not None
        assert config["dims"] == BILINGUAL_DIMS
        assert isinstance(config["embed"], BilingualEmbeddings)
        fields = config.get("fields")
    store_page = text("store.md")
    assert f"{BILINGUAL_DIMS} dimensions: the packaged all-MiniLM-L6-v2's {MODEL_DIMS}" in store_page
    assert f"Universal Sentence Encoder Multilingual v3's {MULTILINGUAL_DIMS}" in store_page
    assert "the two-language embedder by default" in store_page
    assert f"{BILINGUAL_DIMS}-d" in text("README.md")
    assert f'default `fields={fields!r}`'.replace("'", '"') in text("privacy.md")


def test_the_size_limits_are_the_constructors_defaults() -> None:
    value = default(ChromaStore, "max_value_bytes")
    indexed = default(ChromaStore, "max_indexed_bytes")
    assert isinstance(value, int) and isinstance(indexed, int)
    stated = (f"a value over {human_size(value)} (JSON) or an item's indexed text over "
              f"{human_size(indexed)} is refused")
    assert stated in text("store.md")
    privacy = text("privacy.md")
    assert f"over {human_size(value)} as compact JSON (`max_value_bytes`)" in privacy
    assert f"over {human_size(indexed)} (`max_indexed_bytes`" in privacy


def test_the_cache_sizes_are_stated_as_the_code_sizes_them() -> None:
    from langgraph_episodic.chroma import memory_budget as mb

    store = text("store.md")
    assert (
        f"by default {mb.ITEM_CACHE_SHARE:.0%} of the available memory, between "
        f"{mb.MIN_CACHED_ITEMS:,} and {mb.MAX_CACHED_ITEMS:,} records" in store
    )
    assert (
        f"by default {mb.VECTOR_CACHE_SHARE:.0%} of the memory available and at most "
        f"{mb.MAX_CACHED_VECTORS:,} vectors" in store
    )
    assert default(ChromaStore, "item_cache_size") is None  # None: the machine decides


def test_the_default_paths_are_the_codes() -> None:
    folder = default(ChromaStore.persistent, "path")
    assert Path(str(folder)) == Path(DEFAULT_FOLDER) == DEFAULT_CHECKPOINT_PATH.parent
    checkpoints = f"./{DEFAULT_CHECKPOINT_PATH.as_posix()}"
    readme = text("README.md")
    assert f'ChromaStore.persistent("./{DEFAULT_FOLDER}")' in readme
    assert f"SQLite in {checkpoints}" in readme
    assert str(DEFAULT_CHECKPOINT_PATH) in (open_checkpointer.__doc__ or "").replace(
        ":data:`DEFAULT_CHECKPOINT_PATH`", str(DEFAULT_CHECKPOINT_PATH))
    assert f"`./{DEFAULT_FOLDER}`" in text("privacy.md")
    assert f"`EPISODIC_STORE_PATH` (default `./{DEFAULT_FOLDER}`" in text("server.md")


def test_the_default_search_mode_is_hybrid_as_the_store_page_says() -> None:
    mode = default(ChromaStore, "search_mode")
    assert f'`search_mode=`: `"{mode}"` (default' in text("store.md")
    assert f"`ChromaStore`, {mode} (default)" in text("README.md")


def test_working_memory_expiry_and_the_output_logs_bounds_are_the_codes() -> None:
    days = default(CustomerHistory, "ttl_days")
    assert f"(`CustomerHistory`: {days:g} days by default)" in text("privacy.md")
    keep, most = default(OutputLog, "keep_days"), default(OutputLog, "max_items")
    assert isinstance(keep, float) and isinstance(most, int)
    assert f"the log keeps at most the last {keep:g} days and {most} items" in text("nodes.md")


def test_the_readme_commands_are_those_ci_runs() -> None:
    """The README's first block holds the two commands; ``.ci/run`` runs the test command
    verbatim, and the fast tier the README names exists and deselects the slow tests."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", readme, re.DOTALL)
    assert block, "the README opens with a bash block of its commands"
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines()]
    assert commands[:2] == ["pip install -e . && langgraph-episodic demo",
                            'pip install -e ".[dev]" && bash scripts/check']
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[1] in ci, ".ci/run runs the README's test command verbatim"
    fast = (ROOT / "scripts" / "check-fast").read_text(encoding="utf-8")
    assert "bash scripts/check-fast" in readme and '-m "not slow"' in fast


def test_the_writers_context_is_documented_as_the_code_writes_it() -> None:
    from langgraph_episodic import memory_context

    paths = ", ".join(f'"{p}"' for p in ("text", *memory_context.CONTEXT_PATHS))
    for page in ("tools.md", "retrieval.md"):
        assert f"index=[{paths}]" in text(page), page
    option = f'config["configurable"]["{memory_context.OPTION}"] = False'
    assert option in text("tools.md") and option in text("README.md")
    assert memory_context.day_text(datetime(2023, 5, 8)) in text("README.md")
