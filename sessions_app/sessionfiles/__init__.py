"""pitree's session files: pi's JSONL tree format, read and appended to, with no Django import.

Layers inside (each uses only those listed before it):
``errors`` · ``instants`` (JS dates) · ``entries`` (one line's shape and serialisation) ·
``migrate`` (v1/v2 read in memory) · ``lines`` (what the index reads of one line) · ``index`` (the
columns of a file) · ``cursor`` (how far a reader's copy of a file reaches) · ``tree`` (paths,
siblings, tree views) · ``context`` (what the LLM sees) · ``store`` (open, refresh, append under a
lock) · ``fork`` (new files) · ``listing`` (what a list shows of one file) · ``transactions`` and
``listcache`` (the listing remembered between processes) · ``changes`` (inotify) · ``catalog`` (a
folder of sessions).
"""
