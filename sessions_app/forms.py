"""Forms for every write the browser makes, and for every query string a page reads. Each write names
the entry the tab stands on (``at``/``parent``), because a tab acts on the branch it shows, not on
whatever the file's leaf is now. A query string that does not parse is a 400 that says why, never a
500."""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.conf import settings

from .converters import MAX_ID_CHARS, SessionIdConverter, usable_id
from .display.settings import THINKING_LEVELS
from .display.treepanel import FILTERS
from .sessionfiles.fork import encode_cwd
from .sessionfiles.instants import iso_to_ms


class EntryIdField(forms.CharField):
    """Any id a session file may hold that a URL can carry too (``usable_id``); it is looked up,
    never used as a path."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strip=False, **kwargs)

    def validate(self, value: str) -> None:
        super().validate(value)
        if value and not usable_id(value):
            raise forms.ValidationError(
                f"Not an entry id: ids are 1 to {MAX_ID_CHARS:,} characters without control characters.",
                code="invalid",
            )


_ENTRY_ID = EntryIdField()  # what each id of an ``EntryIdsField`` is checked by
REPLY_ID = re.compile(r"\A[A-Za-z0-9_-]{1,40}\Z")  # a reply being written, named by the page that asked for it


class EntryIdsField(forms.Field):
    """Entry ids given as one repeated parameter (``?open=a&open=b``), each an ``EntryIdField``'s, at
    most ``max_count`` of them."""

    widget = forms.MultipleHiddenInput

    def __init__(self, *, max_count: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_count = max_count

    def to_python(self, value: Any) -> list[str]:
        if not value:
            return []
        if not isinstance(value, list | tuple):
            raise forms.ValidationError("Expected a list of entry ids.", code="invalid_list")
        return [str(item) for item in value]

    def validate(self, value: list[str]) -> None:
        super().validate(value)
        if len(value) > self.max_count:
            raise forms.ValidationError(f"At most {self.max_count:,} entries.", code="too_many")
        for item in value:
            _ENTRY_ID.validate(item)


class FieldsForm(forms.Form):
    """A form its page shows field by field (``partials/_form_fields.html``): Django ties each field's
    help text and errors to it (``aria-describedby`` names their ids, ``aria-invalid`` marks a field
    with errors). Its labels go without Django's colon, as the app's other labels do."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


class MessageForm(forms.Form):
    """A user message, sent as a child of ``parent`` (empty: a new root).

    ``cursor`` is the byte offset of the file the sending page reflects: if the conversation went on
    after ``parent`` since, the message is refused rather than made a sibling of what the page did
    not show (``services.chat.unchanged_since``). Without it (Edit & resend, which makes a sibling on
    purpose) or with ``branch`` (the tab chose "send as a new branch here") it is not checked.

    ``queue`` (pi only, while it works): ``steer`` (after its current tool calls) or ``follow_up``
    (once it is done) instead of a new message."""

    text = forms.CharField(strip=False, widget=forms.Textarea(attrs={"rows": 3}), required=False)
    parent = EntryIdField(required=False)
    stream = forms.RegexField(REPLY_ID, required=False)
    cursor = forms.IntegerField(min_value=0, required=False)
    branch = forms.BooleanField(required=False)
    queue = forms.ChoiceField(choices=[("", ""), ("steer", "steer"), ("follow_up", "follow_up")], required=False)

    def clean_text(self) -> str:
        text: str = self.cleaned_data["text"]
        if not text.strip():
            raise forms.ValidationError("Write a message first.")
        limit = settings.PITREE_MAX_MESSAGE_BYTES
        size = len(text.encode("utf-8"))
        if size > limit:
            raise forms.ValidationError(f"This message is {size:,} bytes; the limit is {limit:,} bytes.")
        return text


class RegenerateForm(forms.Form):
    entry = EntryIdField()
    stream = forms.RegexField(REPLY_ID, required=False)


class NavigateForm(forms.Form):
    """Move the tab (and the file's persisted leaf) to ``to``: exactly there, or to where that
    branch was last left (``branch``, the BranchNavigator's switch)."""

    to = EntryIdField(required=False)
    mode = forms.ChoiceField(choices=[("exact", "exact"), ("branch", "branch")], initial="exact", required=False)
    at = EntryIdField(required=False)
    summarize = forms.BooleanField(required=False)


class AnnotationForm(forms.Form):
    """A write from a tab that goes where the tab stands: ``at``, the entry its page stands on, as of
    ``cursor``, the byte offset of the file the page reflects (the write follows what continued that
    branch since: ``SessionFile.append``'s ``after``); ``reply``, the reply the page shows being
    written there, below which the write is chained when it is still being written (``annotations``)."""

    at = EntryIdField(required=False)
    cursor = forms.IntegerField(min_value=0, required=False)
    reply = forms.RegexField(REPLY_ID, required=False)


class LabelForm(AnnotationForm):
    entry = EntryIdField()
    label = forms.CharField(max_length=200, required=False)


class RenameForm(AnnotationForm):
    name = forms.CharField(max_length=500, required=False)


class ForkForm(forms.Form):
    entry = EntryIdField()


class TravelForm(forms.Form):
    """A session as it was: after ``line`` of its file, or at ``time`` (ISO 8601, UTC unless it says)."""

    line = forms.IntegerField(min_value=1, required=False)
    time = forms.CharField(max_length=40, required=False)

    def clean_time(self) -> int | None:
        text = self.cleaned_data["time"].strip()
        if not text:
            return None
        ms = iso_to_ms(text)
        if ms is None:
            raise forms.ValidationError("Give a date and time, e.g. 2026-03-02T10:30.")
        return ms


class TailForkForm(forms.Form):
    """Fork the last ``turns`` turns of the branch through ``entry``, the history before them summarised."""

    entry = EntryIdField()
    turns = forms.IntegerField(min_value=1, max_value=10_000, initial=2)


class CompactForm(forms.Form):
    """Fold the history before ``keep_from`` into a summary the assistant writes."""

    keep_from = EntryIdField()
    at = EntryIdField(required=False)
    instructions = forms.CharField(max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 2}))


class NewSessionForm(forms.Form):
    """A new session: in the workspace named (an absolute path), or, named none, the reader's own (*New
    chat*)."""

    cwd = forms.CharField(max_length=4096, label="Workspace", required=False)
    name = forms.CharField(max_length=500, required=False)

    def clean_cwd(self) -> str:
        cwd: str = self.cleaned_data["cwd"].strip()
        if not cwd:
            return ""
        if not cwd.startswith("/") or "\x00" in cwd:
            raise forms.ValidationError("Give the workspace as an absolute path, e.g. /home/me/project.")
        if len(encode_cwd(cwd).encode()) > 255:  # pi's folder for it is one file name: at most 255 bytes
            raise forms.ValidationError("This workspace path is too long for a session folder name.")
        return cwd


class EntryPageForm(forms.Form):
    """``?resume=1`` on an entry's page: open the entry's branch where it was last left, the entry in
    it (a search hit), rather than the branch state that ends at the entry (a permalink)."""

    resume = forms.BooleanField(required=False)
    # A jump: the page starts at this entry of the branch (its newer entries load as the reader
    # scrolls down); an entry off the branch shows its own branch, where that was last left.
    show = EntryIdField(required=False)


class PositionForm(forms.Form):
    """``?at=``: the entry the tab stands on (empty: the file's leaf)."""

    at = EntryIdField(required=False)


ENTRY_ACTIONS = ("edit", "fork", "label", "compact", "continue")


class EntryActionsForm(PositionForm):
    """``?do=``: one action's form for an entry (empty: all of them, the page without JavaScript)."""

    do = forms.ChoiceField(choices=[(name, name) for name in ENTRY_ACTIONS], required=False)


class ModelForm(AnnotationForm):
    """Answer with ``model`` from here on: a ``model_change`` entry under the tab's position."""

    model = forms.CharField(max_length=500)


class ThinkingForm(AnnotationForm):
    """Think at ``level`` from here on: a ``thinking_level_change`` entry under the tab's position."""

    level = forms.ChoiceField(choices=[(level, level) for level in THINKING_LEVELS])


class TreeFilterForm(PositionForm):
    """``?filter=&at=`` of the tree panel: which entries it shows, seen from the tab's position."""

    filter = forms.ChoiceField(choices=[(name, name) for name in FILTERS], required=False)


# "+N" folds a tree panel is asked to draw open again: the page sends the newest that fit in 6,000
# characters of its URL (static/pitree/tree-panel.js, about 150); more is a hand-made URL.
MAX_OPENED_FOLDS = 500


class TreePanelForm(TreeFilterForm):
    """The tree panel drawn again with what its reader opened in it: the "+N" folds they opened, each
    by its two ends (``open_first`` and ``open_last``, in the same order), and the last entry of the
    earliest page of their path they loaded (``loaded``, "Show earlier entries")."""

    open_first = EntryIdsField(max_count=MAX_OPENED_FOLDS, required=False)
    open_last = EntryIdsField(max_count=MAX_OPENED_FOLDS, required=False)
    loaded = EntryIdField(required=False)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if len(cleaned.get("open_first", [])) != len(cleaned.get("open_last", [])):
            raise forms.ValidationError("open_first and open_last name the two ends of each fold: as many of each.")
        return cleaned

    def opened(self) -> list[tuple[str, str]]:
        """The folds opened, each as its (first, last) entry ids."""
        return list(zip(self.cleaned_data["open_first"], self.cleaned_data["open_last"], strict=True))


class TreeRunForm(TreeFilterForm):
    """A "+N" fold of the tree panel: the straight run from ``first`` down to ``last``; with
    ``earlier``, the part of the tab's path from ``first`` down to ``last`` that is not drawn yet."""

    first = EntryIdField()
    last = EntryIdField()
    earlier = forms.BooleanField(required=False)


class OlderForm(forms.Form):
    """The page of path entries before ``before``; a compaction met on a newer page travels along
    (``fold_before``/``fold_id``), and ``unfold`` reads through it (its card was opened)."""

    before = EntryIdField()
    fold_before = EntryIdField(required=False)
    fold_id = EntryIdField(required=False)
    unfold = forms.BooleanField(required=False)


class NewerForm(forms.Form):
    """The page of path entries after ``after`` on the path to ``until`` (a jump's page, scrolled down)."""

    after = EntryIdField()
    until = EntryIdField()


class JumpDateForm(forms.Form):
    """Jump to the entry of the tab's branch (the path to ``at``; empty: the file's leaf) nearest a day."""

    at = EntryIdField(required=False)
    date = forms.DateField(error_messages={"required": "Pick a date.", "invalid": "Not a date (YYYY-MM-DD)."})


class ListForm(forms.Form):
    """The session list: a search (``q``), the workspace it keeps (a folder of the sessions folder,
    by name; empty: all) and which page of the result."""

    q = forms.CharField(max_length=500, required=False)
    workspace = forms.RegexField(r"^[^/\x00]{1,255}$", required=False)
    page = forms.IntegerField(min_value=1, max_value=1_000_000, required=False)


class SidebarForm(ListForm):
    """The sidebar's list: the list's search and page, and the session the page shows (``current``).
    ``through`` asks for every page up to that one at once: what a sidebar scrolled that far shows,
    fetched again when the folder changes."""

    current = forms.RegexField(rf"^{SessionIdConverter.regex}$", required=False)
    through = forms.IntegerField(min_value=1, max_value=1_000_000, required=False)


MAX_MODEL_CHARS = 200
BEAM_PICKERS = 4  # the composer's pickers for a beam (services.beam.MAX_ANSWERS)


class ModelNamesField(forms.Field):
    """Model names given as one repeated parameter (``ask=a&ask=b``); empty ones (a picker left at
    "—") are dropped. Each is checked against what the backend offers by the view, which asks it."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[str]:
        if not isinstance(value, list | tuple):
            value = [value] if value else []
        return [str(item) for item in value if str(item).strip()]

    def validate(self, value: list[str]) -> None:
        super().validate(value)
        if any(len(name) > MAX_MODEL_CHARS for name in value):
            raise forms.ValidationError(f"A model name is at most {MAX_MODEL_CHARS} characters.", code="too_long")


class BeamForm(MessageForm):
    """A message asked of several models at once (``services.beam``): 2 to 4 ``ask`` values (model
    names), the same one as often as it should answer."""

    ask = ModelNamesField(required=False)

    def clean_ask(self) -> list[str]:
        models: list[str] = self.cleaned_data["ask"]
        if not 2 <= len(models) <= BEAM_PICKERS:
            raise forms.ValidationError(f"Pick 2 to {BEAM_PICKERS} models to ask (one may answer several times).")
        return models


class FuseForm(forms.Form):
    """A further answer to ``prompt`` that reads its answers ``answer`` (2 to 4) and fuses them."""

    prompt = EntryIdField()
    answer = EntryIdsField(max_count=BEAM_PICKERS)
    model = forms.CharField(max_length=MAX_MODEL_CHARS)
    stream = forms.RegexField(REPLY_ID, required=False)

    def clean_answer(self) -> list[str]:
        answers: list[str] = self.cleaned_data["answer"]
        if len(answers) < 2:
            raise forms.ValidationError("A fused answer reads at least 2 answers.")
        return answers
