"""``inspect --json``: the document docs/format.md §12 defines, written without recursion.

orjson refuses nesting deeper than 254 levels and the stdlib ``json`` overflows near 1000, but a chat
tree nests one level per entry (and a hostile entry may nest a thousand levels). Every value goes
through ``entries.dump_json``, which falls back to an explicit-stack writer when orjson refuses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..sessionfiles.entries import dump_json
from ..sessionfiles.store import AT_LEAF, SessionFile
from ..sessionfiles.tree import tree as tree_nodes

KEYS = ("sessionId", "version", "cwd", "parentSession", "leaf", "name", "labels", "path", "context", "tree", "skipped")


def inspect_fields(session: SessionFile, leaf: Any = AT_LEAF) -> dict[str, Any]:
    """Every field of docs/format.md §12.1 except ``tree`` (which is deep), in that order. ``leaf``: an entry id, or AT_LEAF."""
    index = session.index
    leaf_id = index.leaf_id if leaf is AT_LEAF else leaf
    rows = session.path_rows(leaf)
    return {
        "sessionId": session.session_id,
        "version": session.version,
        "cwd": session.cwd,
        "parentSession": session.parent_session,
        "leaf": leaf_id,
        "name": index.name,
        "labels": {target: label for target, (label, _) in index.labels.items()},
        "path": [index.ids[row] for row in rows],
        "context": session.context(leaf).as_json(),
    }


def inspect_json(session: SessionFile, leaf: Any = AT_LEAF) -> bytes:
    """The whole object of docs/format.md §12 as compact JSON bytes (no trailing newline)."""
    values = {key: dump_json(value) for key, value in inspect_fields(session, leaf).items()}
    values["tree"] = dump_json(tree_nodes(session.index))
    values["skipped"] = dump_json([{"line": line, "reason": reason} for line, reason in session.index.skipped()])
    return b"{" + b",".join(dump_json(key) + b":" + values[key] for key in KEYS) + b"}"


def summary_lines(session: SessionFile, leaf: Any = AT_LEAF) -> Iterator[str]:
    """``inspect`` without ``--json``: the same facts, one ``key  value`` line each."""
    fields = inspect_fields(session, leaf)
    index = session.index
    context = fields["context"]
    model = context["model"]
    model_text = f"model {model.get('provider')}/{model.get('modelId')}" if model else "no model"
    labels = ", ".join(f"{target}={label}" for target, label in fields["labels"].items())
    rows = [
        ("session", fields["sessionId"]),
        ("file", str(session.path)),
        ("version", f"{fields['version']}{' (read-only)' if index.read_only else ''}"),
        ("cwd", fields["cwd"] or "-"),
        ("parent", fields["parentSession"] or "-"),
        ("name", fields["name"] or "-"),
        ("leaf", fields["leaf"] or "- (before the first entry)"),
        ("path", f"{len(fields['path'])} entries"),
        ("context", f"{len(context['messages'])} messages, thinking {context['thinkingLevel']}, {model_text}"),
        ("tree", f"{index.node_count} entries, {len(index.roots)} root(s)"),
        ("labels", labels or "-"),
    ]
    rows += [("skipped", f"line {line}: {reason}") for line, reason in index.skipped()]
    for key, value in rows:
        yield f"{key:<8} {value}"
