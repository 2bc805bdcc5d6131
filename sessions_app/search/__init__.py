"""Full-text search over every entry of every session file, every branch included.

Pure Python, no Django (like ``sessionfiles``, which it reads through). Layers, each using only those
before it: ``text`` (the form text is indexed and queried in) · ``extract`` (what of an entry is
searchable) · ``query`` (user input to an FTS5 query) · ``index`` (the SQLite FTS5 cache and its
catch-up) · ``results`` (a catalog's sessions searched, with their titles).
"""
