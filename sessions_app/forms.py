"""Forms for every write the browser makes. Each names the entry the tab stands on (``at``/``parent``),
because a tab acts on the branch it shows, not on whatever the file's leaf is now (pitree-rules §3)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from .display.treepanel import FILTERS
from .sessionfiles.fork import encode_cwd

_ID = r"^[^\x00-\x1f]{1,256}$"


class EntryIdField(forms.RegexField):
    """Any id a session file may hold (pi-format §1); it is looked up, never used as a path."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(_ID, max_length=256, strip=False, error_messages={"invalid": "Not an entry id."}, **kwargs)


class MessageForm(forms.Form):
    """A user message, sent as a child of ``parent`` (empty: a new root)."""

    text = forms.CharField(strip=False, widget=forms.Textarea(attrs={"rows": 3}), required=False)
    parent = EntryIdField(required=False)
    stream = forms.RegexField(r"^[A-Za-z0-9_-]{1,40}$", required=False)

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
    stream = forms.RegexField(r"^[A-Za-z0-9_-]{1,40}$", required=False)


class NavigateForm(forms.Form):
    """Move the tab (and the file's persisted leaf) to ``to``: exactly there, or to where that
    branch was last left (``branch``, the BranchNavigator's switch)."""

    to = EntryIdField(required=False)
    mode = forms.ChoiceField(choices=[("exact", "exact"), ("branch", "branch")], initial="exact", required=False)
    at = EntryIdField(required=False)
    summarize = forms.BooleanField(required=False)


class LabelForm(forms.Form):
    entry = EntryIdField()
    label = forms.CharField(max_length=200, required=False)
    at = EntryIdField(required=False)


class RenameForm(forms.Form):
    name = forms.CharField(max_length=500, required=False)
    at = EntryIdField(required=False)


class ForkForm(forms.Form):
    entry = EntryIdField()


class CompactForm(forms.Form):
    """Fold the history before ``keep_from`` into a summary the assistant writes."""

    keep_from = EntryIdField()
    at = EntryIdField(required=False)
    instructions = forms.CharField(max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 2}))


class NewSessionForm(forms.Form):
    cwd = forms.CharField(max_length=4096, label="Workspace")
    name = forms.CharField(max_length=500, required=False)

    def clean_cwd(self) -> str:
        cwd: str = self.cleaned_data["cwd"].strip()
        if not cwd.startswith("/") or "\x00" in cwd:
            raise forms.ValidationError("Give the workspace as an absolute path, e.g. /home/me/project.")
        if len(encode_cwd(cwd).encode()) > 255:  # pi's folder for it is one file name: at most 255 bytes
            raise forms.ValidationError("This workspace path is too long for a session folder name.")
        return cwd


class TreeFilterForm(forms.Form):
    filter = forms.ChoiceField(choices=[(name, name) for name in FILTERS], required=False)
    at = EntryIdField(required=False)
