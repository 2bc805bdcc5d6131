"""Browser tests: real Chromium (Debian's) driven by Playwright against pitree served by daphne.

pytest-django's ``live_server`` speaks WSGI only (no websockets), so one daphne child process serves the
whole run; each test gets an emptied sessions folder and seeds it with copies of the pi samples under
fresh session ids. The tests talk to the server over HTTP only: they never touch Django's database.

Run these on their own (``python -m pytest tests/browser``): Playwright's sync API leaves an event loop
behind that breaks pytest-asyncio tests run later in the same process.

pytest runs with ``--import-mode=importlib``, so helpers are handed out as fixtures, not imported.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect, sync_playwright

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sessions_app" / "samples" / "pi"
CHROMIUM = os.environ.get("PITREE_TEST_CHROMIUM", "/usr/bin/chromium")
# Each tab of the full browser builds its address bar's suggestion popups as web pages of their own
# (chrome://omnibox-popup.top-chrome): two renderer processes per tab that no test can see, about a third
# of Chromium's CPU over the suite.
BROWSER_UI_FEATURES = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup"]
# Chromium keeps only the last --disable-features it is given, and Playwright passes its own first: the
# switch below repeats the Linux ones of Playwright's (playwright-core's chromiumSwitches) so they still hold.
PLAYWRIGHT_DISABLED_FEATURES = [
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-features=" + ",".join([*PLAYWRIGHT_DISABLED_FEATURES, *BROWSER_UI_FEATURES]),
]
WORKSPACE = "/home/alice/projects/todo-api"
WORKSPACE_FOLDER = "--home-alice-projects-todo-api--"
TIMEOUT_MS = 15_000
# axe-core, installed by ./scripts/test into a cache outside the repo (npm's axe-core package).
AXE_JS = Path(
    os.environ.get("PITREE_AXE_JS")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "pitree/axe-core-4.14.1/node_modules/axe-core/axe.min.js"
)


def pytest_configure(config: pytest.Config) -> None:
    # Fail, never skip: a run without a browser would pass while testing nothing. ./scripts/test installs it.
    if not Path(CHROMIUM).exists():
        raise pytest.UsageError(
            f"no Chromium at {CHROMIUM}: run ./scripts/test (it installs it) or apt-get install chromium"
        )
    if not AXE_JS.is_file():
        raise pytest.UsageError(f"no axe-core at {AXE_JS}: run ./scripts/test (it installs it)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with the most tests first: each worker of the run takes whole files (a server and a
    Chromium of its own), and a long file taken last would leave the other worker idle at the end."""
    tests = Counter(item.path for item in items)
    items.sort(key=lambda item: -tests[item.path])  # stable: each file's tests stay together, in order


# --- the server ----------------------------------------------------------------------------------


@dataclass
class Server:
    url: str  # http://127.0.0.1:PORT (no trailing slash)
    root: Path  # the sessions folder it serves
    daphne: Any  # tests/conftest.py's Daphne

    def log_tail(self, chars: int = 4000) -> str:
        return self.daphne.log_tail(chars)


@pytest.fixture(scope="session")
def serve(start_daphne: Any, tmp_path_factory: pytest.TempPathFactory) -> Callable[[dict[str, str]], Server]:
    """Start pitree under daphne (HTTP + websockets) on a free port with settings of its own, serving
    an empty sessions folder of its own; it runs to the end of the run."""

    def start(env: dict[str, str]) -> Server:
        root = tmp_path_factory.mktemp("pitree-browser") / "sessions"
        root.mkdir()
        daphne = start_daphne({"PITREE_SESSIONS_DIR": str(root), "PITREE_FSYNC": "0", **env})
        return Server(url=daphne.url, root=root, daphne=daphne)

    return start


@pytest.fixture(scope="session")
def server(serve: Callable[[dict[str, str]], Server]) -> Server:
    """pitree with the offline responder, for the whole run; each test empties its sessions folder
    (``sessions``). A module may override this fixture for a server set up otherwise."""
    return serve({"PITREE_OFFLINE_DELAY": "0.02", "PITREE_ASSISTANT": "offline"})


@pytest.fixture(scope="session")
def serve_openai(serve: Callable[[dict[str, str]], Server]) -> Callable[[Any], Server]:
    """``serve_openai(fake)``: pitree answering through a fake OpenAI-compatible server
    (tests/support/fake_openai.py) with its model ``fake-model``."""

    def start(fake: Any) -> Server:
        return serve(
            {"PITREE_ASSISTANT": "openai", "PITREE_OPENAI_BASE_URL": fake.base_url, "PITREE_OPENAI_MODEL": "fake-model"}
        )

    return start


@pytest.fixture
def add_account(server: Server) -> Callable[[str], str]:
    """``add_account(name)``: a new account on the server, made as its owner makes one
    (``manage.py accounts add-user``); the path of the one-time sign-in link it prints."""

    def add(name: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", "accounts", "--url", "", "add-user", name],
            cwd=REPO,
            env=server.daphne.env,
            capture_output=True,
            text=True,
            check=True,
        )
        found = re.search(r"/accounts/once/[^\s/]+/", done.stdout)
        assert found, done.stdout
        return found.group()

    return add


# --- sessions on disk ----------------------------------------------------------------------------


@dataclass
class Seeded:
    """A session file written for one test."""

    id: str
    path: Path
    sample: str = ""
    expected: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"/s/{self.id}/"

    def entry_url(self, entry_id: str) -> str:
        return f"/s/{self.id}/e/{entry_id}/"

    def lines(self) -> list[dict[str, Any]]:
        """Every line of the file, decoded (the header first)."""
        return [json.loads(raw) for raw in self.path.read_bytes().split(b"\n") if raw.strip()]

    def entries(self) -> list[dict[str, Any]]:
        return self.lines()[1:]

    def append(self, *lines: dict[str, Any]) -> None:
        """Append ``lines`` as another program (pi, say) does: whole lines, without pitree's lock."""
        with self.path.open("ab") as file:
            file.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))

    def entry(self, entry_id: str) -> dict[str, Any]:
        found = [e for e in self.entries() if e.get("id") == entry_id]
        assert len(found) == 1, f"{len(found)} entries with id {entry_id} in {self.path.name}"
        return found[0]


class Sessions:
    """Seeds the (emptied) sessions folder of one test."""

    def __init__(self, root: Path, expected: dict[str, Any]) -> None:
        self.root = root
        self.expected = expected

    def seed(self, sample: str, *, session_id: str | None = None) -> Seeded:
        """A copy of ``sessions_app/samples/pi/<sample>.jsonl`` under a fresh session id (the entry ids
        stay those of the sample, so expected.json's ids hold)."""
        lines = (SAMPLES / f"{sample}.jsonl").read_bytes().split(b"\n")
        header = json.loads(lines[0])
        new_id = session_id or str(uuid.uuid4())
        header["id"] = new_id
        header.pop("parentSession", None)
        lines[0] = json.dumps(header, separators=(",", ":")).encode()
        original = self.expected[sample]["originalFileName"]
        stamp = original.split("_", 1)[0]
        return self.write(b"\n".join(lines), new_id, stamp, sample=sample)

    def write_lines(self, lines: list[dict[str, Any]], *, cwd: str = WORKSPACE) -> Seeded:
        """A hand-written session: a v3 header (fresh id) followed by ``lines``."""
        new_id = str(uuid.uuid4())
        header = {"type": "session", "version": 3, "id": new_id, "timestamp": "2026-03-02T09:00:00.000Z", "cwd": cwd}
        data = b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in [header, *lines])
        return self.write(data, new_id, "2026-03-02T09-00-00-000Z")

    def write(self, data: bytes, session_id: str, stamp: str, *, sample: str = "") -> Seeded:
        folder = self.root / WORKSPACE_FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stamp}_{session_id}.jsonl"
        path.write_bytes(data)
        return Seeded(id=session_id, path=path, sample=sample, expected=self.expected.get(sample, {}))

    def all_files(self) -> list[Path]:
        return sorted(self.root.rglob("*.jsonl"))


@pytest.fixture(scope="session")
def expected() -> dict[str, Any]:
    return json.loads((SAMPLES / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture
def sessions(server: Server, expected: dict[str, Any]) -> Sessions:
    """An empty sessions folder for this test (the server's folder, emptied)."""
    for child in server.root.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()
    return Sessions(server.root, expected)


# --- the browser ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class PageRecord:
    """What a page did that a test may want to assert on afterwards."""

    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    websockets: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # uncaught exceptions in the page
    console_errors: list[str] = field(default_factory=list)


@pytest.fixture
def record() -> PageRecord:
    return PageRecord()


@pytest.fixture(scope="session")
def _contexts(chromium: Any) -> Iterator[dict[str, Any]]:
    """One browser context per server for the whole run (a new context costs Chromium a renderer of its
    own, about half a CPU-second); ``context`` hands it to each test as fresh as a new one."""
    made: dict[str, Any] = {}
    try:
        yield made
    finally:
        for ctx in made.values():
            with contextlib.suppress(Exception):
                ctx.close()


@pytest.fixture
def context(_contexts: dict[str, Any], chromium: Any, server: Server) -> Iterator[Any]:
    """A browser context signed in as the instance's owner, with no page, no other cookie, no granted
    permission and nothing in the site's storage left by an earlier test."""
    ctx = _contexts.get(server.url)
    if ctx is None:
        ctx = _contexts[server.url] = chromium.new_context(base_url=server.url)
    name, _, value = server.daphne.cookie.partition("=")
    ctx.add_cookies([{"name": name, "value": value, "url": server.url}])
    ctx.set_default_timeout(TIMEOUT_MS)
    ctx.set_default_navigation_timeout(TIMEOUT_MS)
    try:
        yield ctx
    finally:
        _reset(ctx, server.url)


def _reset(ctx: Any, site: str) -> None:
    """Close the test's pages and forget what it left: cookies, permissions, the site's storage."""
    pages = list(ctx.pages)
    on_site = next((pg for pg in pages if pg.url.startswith(site)), None)
    cleaner = on_site or ctx.new_page()
    with contextlib.suppress(Exception):
        if cleaner is not on_site:
            cleaner.goto("/static/pitree/favicon.svg")
        cleaner.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
    for pg in {*pages, cleaner}:
        with contextlib.suppress(Exception):
            pg.close()
    ctx.clear_cookies()
    ctx.clear_permissions()


@pytest.fixture
def phone(chromium: Any, server: Server) -> Iterator[Any]:
    """A page in a phone's browser (390 × 844, a touch screen and no mouse), signed in as the owner."""
    ctx = chromium.new_context(
        base_url=server.url, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    name, _, value = server.daphne.cookie.partition("=")
    ctx.add_cookies([{"name": name, "value": value, "url": server.url}])
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        yield ctx.new_page()
    finally:
        ctx.close()


@pytest.fixture
def new_page(context: Any, record: PageRecord) -> Any:
    """Open another page (tab) in this test's browser context, with the same recording as ``page``."""

    def open_page() -> Any:
        pg = context.new_page()

        def on_dialog(dialog: Any) -> None:
            record.dialogs.append(f"{dialog.type}: {dialog.message}")
            with contextlib.suppress(Exception):
                dialog.dismiss()

        pg.on("dialog", on_dialog)
        pg.on("request", lambda request: record.requests.append(request.url))
        pg.on("websocket", lambda ws: record.websockets.append(ws.url))
        pg.on("pageerror", lambda error: record.errors.append(str(error)))
        pg.on("console", lambda msg: record.console_errors.append(msg.text) if msg.type == "error" else None)
        return pg

    return open_page


@pytest.fixture
def page(new_page: Any) -> Any:
    return new_page()


@pytest.fixture(autouse=True)
def _expect_timeout() -> None:
    expect.set_options(timeout=TIMEOUT_MS)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """On failure, attach the server log's tail (tracebacks of the app end up there)."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed and "server" in getattr(item, "fixturenames", ()):
        srv = item.funcargs.get("server") if hasattr(item, "funcargs") else None
        if srv is not None:
            report.sections.append(("daphne log (tail)", srv.log_tail(3000)))


# --- page helpers --------------------------------------------------------------------------------


class UI:
    """Small waits and reads shared by the tests."""

    def __init__(self, server: Server) -> None:
        self.server = server

    def open(self, page: Any, path: str) -> None:
        """Load a pitree page and wait until htmx has loaded and the tree panel arrived."""
        page.goto(path)
        page.wait_for_function("() => window.htmx !== undefined && window.pitree !== undefined")
        if page.locator(".session-layout").count() and page.locator("#tree-aside").is_visible():
            page.locator("#tree-panel .tree-filters").wait_for()  # beside the conversation: it loads at once

    def position(self, page: Any) -> str:
        """The entry the tab stands on, as the server keeps it for the tab (``#tab-state``)."""
        return page.locator("#tab-state").get_attribute("data-position") or ""

    def path_ids(self, page: Any) -> list[str]:
        """Entry ids shown in the transcript, top to bottom."""
        return page.eval_on_selector_all("#entries article.entry[data-entry]", "els => els.map(e => e.dataset.entry)")

    def wait_position(self, page: Any, entry_id: str) -> None:
        page.wait_for_function(
            "(id) => { const t = document.getElementById('tab-state'); return t && t.dataset.position === id && !document.querySelector('.htmx-request'); }",
            arg=entry_id,
        )

    def wait_position_change(self, page: Any, old: str) -> str:
        page.wait_for_function(
            "(old) => { const t = document.getElementById('tab-state'); return t && t.dataset.position !== old && !document.querySelector('.is-pending') && !document.querySelector('.htmx-request'); }",
            arg=old,
        )
        return self.position(page)

    def tool(self, page: Any, entry_id: str, name: str) -> Any:
        """A button or link in an entry's row of actions, by its accessible name."""
        return (
            page.locator(f"#entry-{entry_id} > .entry__tools")
            .get_by_role("button", name=name, exact=True)
            .or_(page.locator(f"#entry-{entry_id} > .entry__tools").get_by_role("link", name=name, exact=True))
        )

    def open_panel(self, page: Any, entry_id: str, action: str) -> Any:
        """An entry's action panel (edit, fork, label, compact), opened and its form loaded; returns it."""
        panel = page.locator(f"#entry-{entry_id} > .entry__panel")
        page.locator(f"#entry-{entry_id} > .entry__tools [data-panel='{action}']").click()
        # Its own form: another panel open in its place has one too until the answer arrives.
        page.locator(f"#entry-{entry_id} > .entry__panel[data-action='{action}'] form").first.wait_for()
        return panel

    def open_tree_filter(self, page: Any, name: str) -> None:
        """Show the tree through filter ``name``, and wait until the panel it asked for is in."""
        page.locator("#tree-panel a.tree-filter", has_text=name).click()
        page.locator(f"#tree-panel a.tree-filter.is-active:text-is('{name}')").wait_for()
        self.wait_tree_settled(page)

    def wait_tree_settled(self, page: Any) -> None:
        """Wait until no tree panel is being fetched or being swapped in."""
        page.wait_for_function("() => !document.querySelector('#tree-panel.htmx-request, .htmx-settling')")

    def wait_tree_at(self, page: Any, entry_id: str) -> None:
        """Wait until the tree panel was (re)loaded for the tab at ``entry_id``."""
        page.wait_for_function(
            "(id) => { const i = document.querySelector('#tree-panel .tree-form input[name=at]'); return i && i.value === id; }",
            arg=entry_id,
        )

    def tree_ids(self, page: Any) -> list[str]:
        return page.eval_on_selector_all(
            "#tree-panel button.tree__node[data-entry]", "els => els.map(e => e.dataset.entry)"
        )


@pytest.fixture
def ui(server: Server) -> UI:
    return UI(server)


# --- accessibility -------------------------------------------------------------------------------


class Axe:
    """axe-core's checks on the page as it is now. Its script is injected, which the app's Content
    Security Policy forbids: pages checked come from ``axe_context``, which bypasses it."""

    SEVERE = ("serious", "critical")

    def violations(self, page: Any) -> list[str]:
        """Each serious or critical violation, as "rule (impact): what is wrong — the elements"."""
        if not page.evaluate("() => window.axe !== undefined"):
            page.add_script_tag(path=str(AXE_JS))
        found = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
        return [
            f"{v['id']} ({v['impact']}): {v['help']} — " + " | ".join(n["html"][:160] for n in v["nodes"][:4])
            for v in found
            if v["impact"] in self.SEVERE
        ]

    def check(self, page: Any, where: str) -> None:
        problems = self.violations(page)
        assert not problems, f"{where}:\n" + "\n".join(problems)

    def check_themes(self, page: Any, where: str) -> None:
        """``check`` in the light theme, then in the dark one."""
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            self.check(page, f"{where}, {scheme} theme")


@pytest.fixture
def axe() -> Axe:
    return Axe()


@pytest.fixture
def axe_context(chromium: Any, server: Server) -> Iterator[Any]:
    """A browser context signed in as the owner whose pages accept axe's injected script (the CSP is
    bypassed in it only)."""
    ctx = chromium.new_context(base_url=server.url, bypass_csp=True)
    name, _, value = server.daphne.cookie.partition("=")
    ctx.add_cookies([{"name": name, "value": value, "url": server.url}])
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        yield ctx
    finally:
        ctx.close()
