"""What the inspector's pages show and what its actions do, through HTTP."""

from __future__ import annotations

import html
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore
from langgraph_episodic.admin.transfer import parse_lines
from langgraph_episodic.ui.data import PAGE_SIZE, user_id_of
from langgraph_episodic.ui.security import CSRF_FIELD

from .conftest import INDEX, PENDING_TEXT, Inspector, Served, python_env, seed, serve, stop

KEY = re.compile(r'class="key" href="[^"]*key=([^"&]+)"')


def test_users_then_namespaces_then_items(inspector: Inspector) -> None:
    inspector.login()
    home = inspector.client.get("/").text
    links = re.findall(r'class="user" href="([^"]+)\?id=([^"]+)"', home)
    assert links == [(f"{inspector.secrets.path}/user", u) for u in ("alice", "alice2", "bob", "dana")]
    assert "notes" in home  # a namespace of no user
    user = inspector.client.get("/user?id=alice").text
    assert "episodes/alice" in user and "memories/alice" in user and "alice2" not in user
    page = inspector.client.get("/namespace?ns=memories&ns=alice").text
    assert sorted(KEY.findall(page)) == sorted(
        ["coffee", "editor", "xss-script", "xss-img", "xss-link"]
    )


def test_a_page_that_names_no_user_says_which_parameter_names_one(inspector: Inspector) -> None:
    inspector.login()
    for path, param in [("/user", "id"), ("/facts", "user"), ("/threads", "user"),
                        ("/episodes", "user"), ("/learning", "user"), ("/export", "user"),
                        ("/forget", "user")]:
        response = inspector.client.get(path)
        assert response.status_code == 400, path
        assert html.escape(f"Name the user: ?{param}=<user label>") in response.text, path


def test_a_namespace_is_paged(inspector: Inspector) -> None:
    inspector.login()
    keys = {f"k{i:03d}" for i in range(PAGE_SIZE * 2 + 7)}
    inspector.store.batch([PutOp(("memories", "dave"), k, {"text": f"note {k}"}) for k in keys])
    seen: list[str] = []
    offset, pages = 0, 0
    while True:
        page = inspector.client.get(f"/namespace?ns=memories&ns=dave&offset={offset}").text
        found = KEY.findall(page)
        seen.extend(found)
        pages += 1
        if "next →" not in page:
            break
        assert len(found) == PAGE_SIZE
        offset += PAGE_SIZE
    assert pages == 3 and len(seen) == len(keys) and set(seen) == keys


def test_an_item_shows_its_value_times_and_expiry(inspector: Inspector) -> None:
    inspector.login()
    page = inspector.client.get("/item?ns=memories&ns=alice&key=editor").text
    item = inspector.store.get(("memories", "alice"), "editor")
    assert "Neovim" in page and item.created_at.isoformat() in page
    assert "TTL 600" in page and "never" not in page.split("expires")[1].split("</dd>")[0]
    missing = inspector.client.get("/item?ns=memories&ns=alice&key=nope")
    assert missing.status_code == 404 and "nope" in missing.text


def test_search_finds_and_the_floor_drops(inspector: Inspector) -> None:
    inspector.login()
    page = inspector.client.get("/search?q=espresso+sugar&limit=3&user=alice").text
    assert "Searched each namespace of memory of user alice" in page
    assert KEY.findall(page)[0] == "coffee"
    scores = [float(s) for s in re.findall(r'class="score">([\d.]+)<', page)]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True)
    floor = (scores[0] + scores[1]) / 2
    page = inspector.client.get(f"/search?q=espresso+sugar&limit=3&user=alice&floor={floor}").text
    assert KEY.findall(page) == ["coffee"]
    # each hit's score parts, and the hits the floor removed with theirs
    assert page.count('class="breakdown"') == 3
    assert "lexical share" in page and "shared-field lift" in page
    under = page.split("Under the floor")[1]
    assert len(re.findall(r'class="under" href=', under)) == 2
    of_bob = inspector.client.get("/search?q=espresso+cat&user=bob").text
    assert KEY.findall(of_bob) == ["pet"]
    assert inspector.client.get("/search?q=x&limit=0").status_code == 400


def test_a_search_of_all_users_ranks_by_meaning_and_says_so(inspector: Inspector) -> None:
    """All users: one search of the whole store by the cosine (Chroma's vector index), the
    page saying so; its hits and scores are those of a dense search of the whole store."""
    inspector.login()
    page = inspector.client.get("/search?q=espresso+sugar&limit=4").text
    assert "Searched all users' memories at once by meaning only" in html.unescape(page)
    assert "search mode: <code>dense</code>" in page
    expected = inspector.store.explain((), query="espresso sugar", limit=4, mode="dense").hits
    assert KEY.findall(page) == [h.item.key for h in expected]
    scores = [float(s) for s in re.findall(r'class="score">([\d.]+)<', page)]
    assert scores == [round(h.score, 3) for h in expected if h.score is not None]
    assert "lexical share" not in page.split("</form>")[1]  # no hybrid parts it did not compute
    assert KEY.findall(page)[0] == "coffee"


def test_pending_formation_is_shown_apart_from_memory(inspector: Inspector) -> None:
    """The deferred-formation queue ``("_pending", user, thread)`` is not memory: the users
    page counts it apart, the user's page lists it under its own heading, search never
    returns it; export and the forget preview still include it (it is the user's data)."""
    inspector.login()
    home = inspector.client.get("/").text
    at = inspector.secrets.path
    dana = home.split(f'href="{at}/user?id=dana">dana</a>')[1].split("</tr>")[0]
    cells = re.findall(r'<td class="num[^"]*">([^<]*)</td>', dana)
    assert cells == ["4", "1 thread"]  # episodes, memories, user_profiles, entities; a queue
    bob = home.split(f'href="{at}/user?id=bob">bob</a>')[1].split("</tr>")[0]
    assert re.findall(r'<td class="num[^"]*">([^<]*)</td>', bob) == ["1", ""]
    user = inspector.client.get("/user?id=dana").text.split("<main>")[1]
    memory, pending = user.split("Not memory yet: pending formation")
    assert "_pending" not in memory and "episodes/dana" in memory
    assert (f'class="internal-namespace" href="{at}/namespace?ns=_pending&amp;ns=dana&amp;ns=debug"'
            in pending)
    assert re.search(r"thread <span class=\"label\">debug</span>.*?<td class=\"num\">2</td>", pending, re.S)
    queue = inspector.client.get("/namespace?ns=_pending&ns=dana&ns=debug").text
    assert "Not memory: the library's pending formation queue" in queue
    assert PENDING_TEXT in queue
    for query in ("/search?q=csv+parser+quoted+commas&limit=100",
                  "/search?q=csv+parser+quoted+commas&limit=100&user=dana"):
        found = inspector.client.get(query).text.split("<main>")[1]
        assert KEY.findall(found), query  # the search ran and found memories
        assert "_pending" not in found and PENDING_TEXT not in found, query
    exported = parse_lines(inspector.client.get("/export?user=dana").text.splitlines())
    assert sum(r.namespace[0] == "_pending" for r in exported) == 2
    assert "_pending/dana/debug" in inspector.client.get("/forget?user=dana").text


def test_the_learning_curve_is_drawn_from_the_episodes(inspector: Inspector) -> None:
    """SVG drawn from the episodes on each request: inlined in the learning page and served
    alone; the same history gives the same picture, a new episode changes it."""
    from langgraph_episodic.episodic.memory import EpisodicMemory
    from langgraph_episodic.episodic.records import (
        Episode,
        Feedback,
        OutcomeStatus,
        TaskCategory,
        TaskDescription,
    )

    inspector.login()
    first = inspector.client.get("/learning/curve.svg?user=dana")
    assert first.status_code == 200 and first.headers["content-type"].startswith("image/svg+xml")
    assert first.text == inspector.client.get("/learning/curve.svg?user=dana").text
    page = inspector.client.get("/learning?user=dana").text
    assert first.text.strip() in page  # the page shows the same picture inline
    lines = re.findall(r'<polyline class="line" points="([^"]+)"', first.text)
    assert len(lines) == 2 and "13 episodes" in first.text  # rate, reward

    EpisodicMemory(inspector.store, ("episodes", "dana")).record(Episode.new(
        TaskDescription("fix the csv parser again", TaskCategory.DEBUGGING), "done",
        Feedback(reward=1.0), OutcomeStatus.SUCCESS, strategy_used="iterative",
        timestamp=1_700_200_000, episode_id="ep-new",
    ))
    second = inspector.client.get("/learning/curve.svg?user=dana").text
    assert second != first.text and "14 episodes" in second
    reward = re.findall(r'<polyline class="line" points="([^"]+)"', second)[1].split()
    assert len(reward) == len(lines[1].split()) + 1
    assert inspector.client.get("/learning/curve.svg?user=nobody").status_code == 404


def _post(inspector: Inspector, path: str, **form: object) -> httpx.Response:
    return inspector.client.post(path, data={**form, CSRF_FIELD: inspector.secrets.csrf_for(None)})


def test_an_edit_is_embedded_again_and_keeps_created_at(inspector: Inspector) -> None:
    inspector.login()
    before = inspector.store.get(("memories", "alice"), "editor")
    response = _post(inspector, "/item/edit", ns=["memories", "alice"], key="editor",
                     text="Alice switched to Helix keybindings",
                     seen=before.updated_at.isoformat())
    assert response.status_code == 200 and "embedded again" in response.text
    after = inspector.store.get(("memories", "alice"), "editor")
    assert after.value["text"] == "Alice switched to Helix keybindings"
    assert after.created_at == before.created_at and after.updated_at > before.updated_at
    page = inspector.client.get("/search?q=helix+keybindings&limit=1").text
    assert KEY.findall(page) == ["editor"]
    assert "TTL 600" in inspector.client.get("/item?ns=memories&ns=alice&key=editor").text


def test_an_edit_of_a_stale_page_is_refused(inspector: Inspector) -> None:
    """The agent updated the memory after the page was opened: the edit would overwrite it."""
    inspector.login()
    page = inspector.client.get("/item?ns=memories&ns=alice&key=coffee").text
    seen = re.search(r'name="seen" value="([^"]+)"', page)
    assert seen
    inspector.store.put(("memories", "alice"), "coffee", {"text": "Alice now drinks tea"})
    response = _post(inspector, "/item/edit", ns=["memories", "alice"], key="coffee",
                     text="Alice drinks ristretto", seen=html.unescape(seen.group(1)))
    assert response.status_code == 409 and "changed since" in response.text
    assert inspector.store.get(("memories", "alice"), "coffee").value["text"] == "Alice now drinks tea"


def test_delete_removes_the_item_only(inspector: Inspector) -> None:
    inspector.login()
    response = _post(inspector, "/item/delete", ns=["memories", "alice"], key="coffee")
    assert response.status_code == 200 and "Deleted the item" in response.text
    assert inspector.store.get(("memories", "alice"), "coffee") is None
    assert inspector.store.get(("memories", "alice"), "editor") is not None


def test_export_is_the_users_items_in_the_export_format(inspector: Inspector) -> None:
    inspector.login()
    response = inspector.client.get("/export?user=alice")
    assert response.headers["content-disposition"] == 'attachment; filename="export-alice.jsonl"'
    records = parse_lines(response.text.splitlines())
    got = {(r.namespace, r.key) for r in records}
    assert got == {
        (("episodes", "alice"), "ep1"),
        *((("memories", "alice"), k) for k in ("coffee", "editor", "xss-script", "xss-img", "xss-link")),
    }
    editor = next(r for r in records if r.key == "editor")
    assert editor.ttl == 600 and editor.expires_at is not None


def test_forget_previews_then_needs_the_typed_user_id(inspector: Inspector) -> None:
    inspector.login()
    preview = inspector.client.get("/forget?user=alice").text
    assert "Nothing has been deleted yet" in preview
    assert re.search(r"memories/alice</td><td class=\"num\">5<", preview)
    assert "1 conversation thread(s)" in preview and "alice:s1" in preview
    assert inspector.store.get(("memories", "alice"), "coffee") is not None
    wrong = _post(inspector, "/forget/confirm", user="alice", confirm="alice2")
    assert wrong.status_code == 400 and "nothing was deleted" in wrong.text
    assert inspector.store.get(("memories", "alice"), "coffee") is not None
    done = _post(inspector, "/forget/confirm", user="alice", confirm="alice")
    assert done.status_code == 200
    report = html.unescape(done.text)
    assert "forgot user 'alice': 6 items in 2 namespaces, 1 thread" in report
    assert "thread alice:s1" in report and "bob:s1" not in report
    assert "a second pass found nothing left" in report
    assert inspector.store.search(("memories", "alice")) == []
    assert inspector.store.get(("memories", "alice2"), "tea") is not None
    assert inspector.store.get(("memories", "bob"), "pet") is not None


def test_a_user_label_decodes_to_the_user_id_forget_takes() -> None:
    assert user_id_of("a%2Eb@x%2Eorg") == "a.b@x.org"
    assert user_id_of("50%off") is None  # not a label namespace_label makes


def test_the_command_serves_with_a_token(served: Served) -> None:
    assert httpx.get(served.base).status_code == 403
    with httpx.Client(base_url=served.base) as client:
        assert client.get(f"/?token={served.token}", follow_redirects=True).status_code == 200
        assert "alice" in client.get("/").text


def test_the_command_serves_a_chroma_server(chroma_server: Any) -> None:
    """``--url``: the inspector on a Chroma server's store (each test its own collection)."""
    collection = f"ui_{uuid.uuid4().hex[:12]}"
    with ChromaStore.from_url(chroma_server.url, collection=collection, index=INDEX) as store:
        seed(store)
    running = serve("--url", chroma_server.url, "--collection", collection, "--embeddings", "hash")
    try:
        with httpx.Client(base_url=running.base) as client:
            client.get(f"/?token={running.token}", follow_redirects=True)
            assert f"server {chroma_server.url}" in client.get("/").text
            page = client.get("/search?q=espresso&limit=1").text
            assert KEY.findall(page) == ["coffee"]
            form = {"ns": ["memories", "bob"], "key": "pet", CSRF_FIELD: _csrf(client)}
            assert client.post("/item/delete", data=form).status_code == 303
    finally:
        stop(running.proc)
    with ChromaStore.from_url(chroma_server.url, collection=collection, index=INDEX) as store:
        assert store.get(("memories", "bob"), "pet") is None
        assert store.get(("memories", "alice"), "coffee") is not None


def _csrf(client: httpx.Client) -> str:
    page = client.get("/item?ns=memories&ns=bob&key=pet").text
    match = re.search(rf'name="{CSRF_FIELD}" value="([^"]+)"', page)
    assert match
    return match.group(1)


def test_the_command_names_the_fix_for_a_port_in_use(seeded: Path, served: Served) -> None:
    port = str(httpx.URL(served.base).port)
    done = subprocess.run(
        [sys.executable, "-m", "langgraph_episodic", "ui", "--path", str(seeded), "--embeddings",
         "hash", "--port", port, "--read-only"],
        capture_output=True, text=True, env=python_env(), timeout=120, check=False,
    )
    assert done.returncode == 2 and "--port 0 picks a free one" in done.stderr, done.stderr


def test_the_command_refuses_a_folder_that_is_no_store(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "langgraph_episodic", "ui", "--path", str(tmp_path / "none")],
        capture_output=True, text=True, env=python_env(), timeout=120, check=False,
    )
    assert done.returncode == 2 and "No store at" in done.stderr and "Traceback" not in done.stderr


HOLDER = """
import sys
from langgraph_episodic import ChromaStore, HashEmbeddings
store = ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)})
store.put(("memories", "carol"), "k", {"text": "held by another process"})
print("ready", flush=True)
sys.stdin.readline()
"""


def test_the_command_on_a_folder_another_process_holds_serves_it(tmp_path: Path) -> None:
    """``ui`` on a folder an agent process holds opens it through that process and shows
    what it wrote (:mod:`langgraph_episodic.chroma.sharing`)."""
    import http.cookiejar
    import urllib.request

    folder = tmp_path / "store"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True, env=python_env(),
    )
    ui = None
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        ui = subprocess.Popen(
            [sys.executable, "-m", "langgraph_episodic", "ui", "--path", str(folder),
             "--embeddings", "hash", "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=python_env(),
        )
        assert ui.stdout is not None
        url = next(line.strip() for line in ui.stdout if line.strip().startswith("http://"))
        opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        with opener.open(url, timeout=120) as response:
            page = response.read().decode()
        assert response.status == 200
        assert "carol" in page
    finally:
        if ui is not None:
            ui.terminate()
            ui.wait(timeout=60)
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)


def test_ui_and_mcp_over_http_default_to_different_ports() -> None:
    """Both run beside one agent: their default ports must not collide."""
    from langgraph_episodic.cli.parser import build_parser

    ui = build_parser().parse_args(["ui"]).port
    mcp = build_parser().parse_args(["mcp", "--http", "--user", "u"]).port
    assert ui != mcp
    docs = Path(__file__).resolve().parents[2] / "docs"
    assert f"`--port N` ({ui}, so it runs beside `mcp --http` on {mcp}" in (
        docs / "inspector.md").read_text()
    assert f"`--port N` ({ui})" in (docs / "cli.md").read_text()


def test_the_learning_curve_uses_the_demos_window(inspector: Inspector) -> None:
    """A sixth of the episodes, between 5 and 20, as ``langgraph-episodic demo`` draws it."""
    from langgraph_episodic.episodic.learning import compute_learning_curve, window_for
    from langgraph_episodic.episodic.plot import plot_learning_curve
    from langgraph_episodic.ui.user_pages import curve_figure, newest_episodes

    inspector.login()
    history = newest_episodes(inspector.store, "dana")
    assert "over the last 5 episodes" in inspector.client.get("/learning?user=dana").text
    many = [*history] * 10  # 130 episodes: a window of 20
    assert window_for(len(many)) == 20

    def drawn(window: int) -> str:
        curve = compute_learning_curve(many, window=window)
        return plot_learning_curve(curve, title="learning curve of x").svg

    assert curve_figure(many, "x").svg == drawn(20) != drawn(5)


def test_a_namespace_is_filtered_by_text_and_sorted(inspector: Inspector) -> None:
    inspector.login()
    keys = [f"k{i:03d}" for i in range(PAGE_SIZE + 10)]
    inspector.store.batch([
        PutOp(("memories", "dave"), k, {"text": f"{'Tea' if i % 2 else 'coffee'} note {i}"})
        for i, k in enumerate(keys)
    ])
    base = "/namespace?ns=memories&ns=dave"
    tea = inspector.client.get(f"{base}&contains=tEA&sort=key").text
    assert KEY.findall(tea) == [k for i, k in enumerate(keys) if i % 2][:PAGE_SIZE]
    assert 'value="tEA"' in tea and "next →" not in tea
    by_key = inspector.client.get(f"{base}&sort=key").text
    assert KEY.findall(by_key) == keys[:PAGE_SIZE] and "contains=" not in by_key
    second = inspector.client.get(f"{base}&sort=key&offset={PAGE_SIZE}").text
    assert KEY.findall(second) == keys[PAGE_SIZE:]
    assert "sort=key&amp;offset=0" in second  # the pager keeps the order
    oldest = KEY.findall(inspector.client.get(f"{base}&sort=oldest").text)
    newest = KEY.findall(inspector.client.get(base).text)
    stamps = {it.key: it.updated_at for it in inspector.store.search(("memories", "dave"), limit=100)}
    assert [stamps[k] for k in oldest] == sorted(stamps[k] for k in oldest)
    assert [stamps[k] for k in newest] == sorted((stamps[k] for k in newest), reverse=True)
    none = inspector.client.get(f"{base}&contains=matcha").text
    assert KEY.findall(none) == [] and "whose key or text holds" in none
    for bad in ("sort=size", "contains=" + "x" * 201):
        assert inspector.client.get(f"{base}&{bad}").status_code == 400
