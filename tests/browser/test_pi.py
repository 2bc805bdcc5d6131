"""pi at the wheel in a real browser: a real pi 1.6.0, answering through a fake OpenAI-compatible server,
works in a session while two tabs watch. What pi streams before it writes (its tool's output as the
tool runs, its text) shows in both; what it writes takes its place; Stop in the tab that did not ask
aborts it; a message typed while pi works goes into its queue as a steer or a follow-up (the turn's
buttons, or Enter and Alt+Enter as in pi's own editor); the Model and Thinking pickers
list pi's models and set them through pi.

This module runs its own server, with pi as its assistant and the fake's agent folder (pi is
configured the way its users configure it: ``PI_CODING_AGENT_DIR``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from support.fake_openai import FakeOpenAI, call_tool, completions, running_fake, say, scripted
from support.lines import message
from support.pi_agent import agent_environment

THINKING_MODEL = "fake-thinker"
PI_WAIT = 90_000  # ms: pi takes 1 to 8 s to start on a machine shared with other test runs


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with running_fake() as server:
        yield server


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pi-workspace")


@pytest.fixture(scope="module")
def server(serve: Any, fake: FakeOpenAI, workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """pitree under daphne with pi as its assistant, allowed to work in ``workspace``."""
    agent = agent_environment(tmp_path_factory.mktemp("pi-agent"), fake, thinking_model=THINKING_MODEL)
    pi_env = {name: value for name, value in agent.items() if name.startswith("PI_")}
    return serve({"PITREE_ASSISTANT": "pi", "PITREE_PI_ROOTS": str(workspace), **pi_env})


def _two_tabs(new_page: Any, ui: Any, url: str) -> tuple[Any, Any]:
    asking, watching = new_page(), new_page()
    for tab in (asking, watching):
        ui.open(tab, url)
        tab.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    return asking, watching


def _gated(workspace: Path, name: str) -> str:
    """A shell loop that waits until the test creates ``name`` in the workspace (pi's cwd): a tool that
    runs for as long as the test needs, however slow the machine."""
    (workspace / name).unlink(missing_ok=True)
    return f"while [ ! -e {name} ]; do sleep 0.1; done"


def _send(tab: Any, text: str) -> None:
    box = tab.locator("#composer textarea[name=text]")
    box.fill(text)
    box.press("Control+Enter")


def test_both_tabs_see_the_tool_run_and_the_answer_replace_it(new_page, ui, sessions, fake, workspace, record):
    fake.respond = scripted(
        call_tool("bash", {"command": f"echo started-the-work; {_gated(workspace, 'gate-1')}; echo finished-the-work"}),
        say("All <b>done</b>, **really**", pieces=4, delay=0.2),
    )
    seeded = sessions.write_lines([], cwd=str(workspace))
    asking, watching = _two_tabs(new_page, ui, seeded.url)
    _send(asking, "Run the slow command")

    for tab in (asking, watching):
        turn = tab.locator("#entries > article[data-pi]")
        # The tool's output as it runs, before pi writes its result; Send is Stop meanwhile.
        expect(turn.locator(".pi-turn__tool")).to_contain_text("$ echo started-the-work", timeout=PI_WAIT)
        expect(turn.locator(".pi-turn__tool pre")).to_contain_text("started-the-work")
        expect(tab.locator("#composer .stop")).to_be_visible()
        expect(tab.locator("#composer .send")).to_be_hidden()
    (workspace / "gate-1").touch()
    for tab in (asking, watching):
        answer = tab.locator("#entries > article.entry--assistant").last
        expect(answer).to_contain_text("All <b>done</b>, really", timeout=PI_WAIT)  # pi's text, never HTML
        expect(answer.locator("strong")).to_have_text("really")
        expect(tab.locator("#entries > article[data-pi]")).to_have_count(0)
        expect(tab.locator("#composer .send")).to_be_visible()
        expect(tab.locator("#entries")).to_contain_text("finished-the-work")  # the tool's result, as pi wrote it
    roles = [e["message"]["role"] for e in seeded.entries() if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "toolResult", "assistant"]  # pi's per-turn system prompt first
    assert not record.errors


def test_stop_in_the_tab_that_did_not_ask_aborts_pi(new_page, ui, sessions, fake, workspace, record):
    fake.respond = scripted(call_tool("bash", {"command": "echo waiting-here; sleep 60"}), say("after the stop"))
    seeded = sessions.write_lines([], cwd=str(workspace))
    asking, watching = _two_tabs(new_page, ui, seeded.url)
    _send(asking, "Wait a minute")
    expect(watching.locator("#entries > article[data-pi] .pi-turn__tool pre")).to_contain_text(
        "waiting-here", timeout=PI_WAIT
    )
    watching.locator("#composer .stop").click()

    for tab in (asking, watching):
        expect(tab.locator("#entries > article[data-pi]")).to_have_count(0, timeout=PI_WAIT)
        expect(tab.locator("#composer .send")).to_be_visible()
    results = [
        e["message"] for e in seeded.entries() if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    assert len(results) == 1 and results[0]["isError"]  # the command was cut short
    assert len(completions(fake)) >= 1 and not [e for e in seeded.entries() if "after the stop" in str(e)]
    assert not record.errors


def _into_the_queue(tab: Any, how: str) -> None:
    """Send the box's message into pi's queue ``how``: ``button:<name>`` (the turn's button) or ``key:<key>``
    (pressed in the composer's box)."""
    kind, _, name = how.partition(":")
    if kind == "button":
        tab.locator("#entries > article[data-pi]").get_by_role("button", name=name).click()
    else:
        tab.locator("#composer textarea[name=text]").press(name)


@pytest.mark.parametrize(
    ("steer", "follow_up"),
    [("button:Steer", "button:Follow up"), ("key:Enter", "key:Alt+Enter")],
    ids=["buttons", "keys"],
)
def test_messages_typed_while_pi_works_steer_it_or_follow_up(
    new_page, ui, sessions, fake, workspace, record, steer, follow_up
):
    """The tab that asked (its send still waiting for the turn) steers; the other one follows up: by the
    turn's buttons, or by the composer's Enter and Alt+Enter, as pi's own editor has them (its hint says
    so while pi works, and says again once pi is done that Enter sends)."""
    fake.requests.clear()
    fake.respond = scripted(
        call_tool("bash", {"command": f"echo steer-me; {_gated(workspace, 'gate-2')}"}),
        say("Steered as asked"),
        say("Followed up as asked"),
    )
    seeded = sessions.write_lines([], cwd=str(workspace))
    asking, watching = _two_tabs(new_page, ui, seeded.url)
    expect(asking.locator("#composer-keys")).to_have_text("Enter sends · Shift+Enter: new line")
    _send(asking, "Start something")
    for tab, text, how in ((asking, "Use the other folder instead", steer), (watching, "Then say so", follow_up)):
        expect(tab.locator("#entries > article[data-pi] .pi-turn__tool pre")).to_contain_text(
            "steer-me", timeout=PI_WAIT
        )
        expect(tab.locator("#composer-keys")).to_contain_text("Enter steers pi · Alt+Enter: follow-up")
        expect(tab.locator("#composer-text")).to_have_attribute("aria-keyshortcuts", "Enter Alt+Enter")
        tab.locator("#composer textarea[name=text]").fill(text)
        _into_the_queue(tab, how)
        expect(tab.locator("#composer textarea[name=text]")).to_have_value("")  # it left the box
        expect(tab.locator("#flash")).not_to_contain_text("A reply is being written")
    (workspace / "gate-2").touch()

    for tab in (asking, watching):
        expect(tab.locator("#entries > article.entry--assistant").last).to_contain_text(
            "Followed up as asked", timeout=PI_WAIT
        )
        expect(tab.locator("#entries")).to_contain_text("Steered as asked")
        expect(tab.locator("#composer-keys")).to_have_text("Enter sends · Shift+Enter: new line")
    texts = [str(e["message"]["content"]) for e in seeded.entries() if e["type"] == "message"]
    steered_with = next(i for i, t in enumerate(texts) if "Use the other folder instead" in t)
    follow = next(i for i, t in enumerate(texts) if "Then say so" in t)
    steered = next(i for i, t in enumerate(texts) if "Steered as asked" in t)
    assert steered_with < steered < follow  # the steer before pi's answer, the follow-up once pi was done
    # pi sent the steer to the model with the tool's result.
    assert "Use the other folder instead" in str(completions(fake)[1].body["messages"])
    assert not record.errors


def test_the_pickers_list_pis_models_and_set_them_through_pi(page, ui, sessions, fake, workspace, record):
    seeded = sessions.write_lines([], cwd=str(workspace))
    ui.open(page, seeded.url)
    model = page.locator("#composer-settings select[name=model]")
    expect(model.locator("option")).to_have_text(["fake/fake-model", f"fake/{THINKING_MODEL}"], timeout=PI_WAIT)
    model.select_option(f"fake/{THINKING_MODEL}")
    # pi writes the model it starts with, then the one chosen.
    expect(page.locator("#entries > article.entry--model_change").last).to_contain_text(THINKING_MODEL, timeout=PI_WAIT)
    # The pick answers with the transcript, whose pickers load anew (a pick made on the ones being
    # replaced would reach no form): the level is picked once they show the model pi took.
    expect(page.locator("#composer-settings select[name=model]")).to_have_value(f"fake/{THINKING_MODEL}")
    page.wait_for_load_state("networkidle")
    page.locator("#composer-settings select[name=level]").select_option("high")
    expect(page.locator("#entries > article.entry--thinking_level_change").last).to_contain_text(
        "high", timeout=PI_WAIT
    )
    expect(page.locator("#composer-settings select[name=model]")).to_have_value(f"fake/{THINKING_MODEL}")
    expect(page.locator("#composer-settings select[name=level]")).to_have_value("high")
    written = [(e["type"], e.get("modelId") or e.get("thinkingLevel")) for e in seeded.entries()]
    assert ("model_change", THINKING_MODEL) in written and written[-1] == ("thinking_level_change", "high")  # by pi
    assert not record.errors


def test_pis_turn_passes_axe_as_it_streams_and_once_stored(axe_context, axe, ui, sessions, fake, workspace, record):
    """pi's turn as it streams (its tool running with output, Stop, Steer and Follow up, the composer's
    hint) and once written (the tool call, its result, the answer) has no serious axe violation."""
    fake.respond = scripted(
        call_tool("bash", {"command": f"echo checking-contrast; {_gated(workspace, 'gate-4')}"}),
        say("Checked: **nothing** to fix.\n\n```sh\nls -la\n```", pieces=3),
    )
    seeded = sessions.write_lines([], cwd=str(workspace))
    page = axe_context.new_page()
    ui.open(page, seeded.url)
    page.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    try:
        _send(page, "Check the page")
        turn = page.locator("#entries > article[data-pi]")
        expect(turn.locator(".pi-turn__tool pre")).to_contain_text("checking-contrast", timeout=PI_WAIT)
        page.locator("#composer textarea[name=text]").fill("a message waiting for pi")
        axe.check_themes(page, "pi's turn as it streams (a tool running)")
    finally:
        (workspace / "gate-4").touch()
    expect(page.locator("#entries > article.entry--assistant").last).to_contain_text("to fix", timeout=PI_WAIT)
    expect(page.locator("#entries > article[data-pi]")).to_have_count(0)
    axe.check_themes(page, "pi's turn once stored (a tool call, its result, the answer)")
    assert not record.errors


class _SlowSocket:
    """A tab's socket that holds what the server says while ``held`` is a list (a slow or stalled
    connection), and hands it on in order once ``catch_up`` is called; what the tab says goes out at
    once."""

    def __init__(self, tab: Any) -> None:
        self.held: list[str | bytes] | None = None
        self._route: Any = None
        tab.route_web_socket(re.compile(r"/ws/s/"), self._connect)

    def _connect(self, route: Any) -> None:
        self._route = route
        route.connect_to_server().on_message(self._from_server)

    def _from_server(self, message: str | bytes) -> None:
        if self.held is not None:
            self.held.append(message)
        else:
            self._route.send(message)

    def catch_up(self) -> None:
        while self.held:  # what arrives meanwhile joins the end of the queue
            self._route.send(self.held.pop(0))
        self.held = None


def test_a_tab_that_had_not_heard_pi_works_steers_it_with_send(new_page, ui, sessions, fake, workspace, record):
    """A tab loaded before pi's turn began, whose socket has not told it yet that pi works, sends a
    message with the plain Send button: the server knows pi works on that tab's branch, so the message
    steers pi, as Enter would have had the tab known. The tab says so, its box is empty, and it follows
    pi's turn to its end, the steer in it."""
    fake.requests.clear()
    fake.respond = scripted(
        call_tool("bash", {"command": f"echo steer-me; {_gated(workspace, 'gate-5')}"}),
        say("Steered by the late tab"),
    )
    seeded = sessions.write_lines([], cwd=str(workspace))
    asking, late = new_page(), new_page()
    socket = _SlowSocket(late)
    for tab in (asking, late):
        ui.open(tab, seeded.url)
        tab.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    socket.held = []  # from now on the late tab hears nothing
    _send(asking, "Start something")
    expect(asking.locator("#entries > article[data-pi] .pi-turn__tool pre")).to_contain_text(
        "steer-me", timeout=PI_WAIT
    )
    expect(late.locator("#entries > article[data-pi]")).to_have_count(0)
    expect(late.locator("#composer .send")).to_be_visible()

    late.locator("#composer textarea[name=text]").fill("Use the other folder instead")
    late.locator("#composer .send").click()
    expect(late.locator("#flash")).to_contain_text("pi is working: your message was sent to steer it.")
    expect(late.locator("#composer textarea[name=text]")).to_have_value("")
    socket.catch_up()
    expect(late.locator("#entries > article[data-pi] .pi-turn__tool pre")).to_contain_text("steer-me", timeout=PI_WAIT)
    expect(late.locator("#composer .stop")).to_be_visible()
    (workspace / "gate-5").touch()

    for tab in (asking, late):
        expect(tab.locator("#entries > article.entry--assistant").last).to_contain_text(
            "Steered by the late tab", timeout=PI_WAIT
        )
        expect(tab.locator("#entries")).to_contain_text("Use the other folder instead")
        expect(tab.locator("#composer .send")).to_be_visible()
    roles = [e["message"]["role"] for e in seeded.entries() if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "toolResult", "user", "assistant"]  # the steer, in pi's turn
    assert "Use the other folder instead" in str(completions(fake)[1].body["messages"])
    assert not record.errors


def test_a_tab_on_another_branch_is_told_pi_works_there_keeps_its_draft_and_can_stop_it(
    new_page, ui, sessions, fake, workspace, record
):
    """A tab standing off the branch pi works on, not told yet that pi works, sends a message: it is not
    put into pi's turn. The tab says why, keeps the draft in its box, and stops pi from there."""
    fake.respond = scripted(call_tool("bash", {"command": "echo far-away; sleep 60"}), say("never said"))
    seeded = sessions.write_lines(
        [
            message("q1", None, "user", "An old question", 1),
            message("a1", "q1", "assistant", "An old answer", 2, model="fake/fake-model"),
        ],
        cwd=str(workspace),
    )
    asking, late = new_page(), new_page()
    socket = _SlowSocket(late)
    for tab, url in ((asking, seeded.url), (late, seeded.entry_url("q1"))):
        ui.open(tab, url)
        tab.wait_for_function("() => document.getElementById('live').dataset.live === 'live'")
    socket.held = []
    _send(asking, "Work on")
    expect(asking.locator("#entries > article[data-pi] .pi-turn__tool pre")).to_contain_text(
        "far-away", timeout=PI_WAIT
    )

    box = late.locator("#composer textarea[name=text]")
    box.fill("A question of my own")
    late.locator("#composer .send").click()
    refusal = late.locator("#flash .pi-elsewhere")
    expect(refusal).to_contain_text("pi is working on another branch of this session; wait for it or stop it.")
    expect(box).to_have_value("A question of my own")
    refusal.get_by_role("button", name="Stop pi").click()
    expect(asking.locator("#entries > article[data-pi]")).to_have_count(0, timeout=PI_WAIT)
    expect(asking.locator("#composer .send")).to_be_visible()
    socket.catch_up()
    assert "A question of my own" not in seeded.path.read_text()
    assert not [e for e in seeded.entries() if "never said" in str(e)]
