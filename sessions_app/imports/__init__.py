"""Other chat products' histories brought in as pi sessions: ChatGPT, Open WebUI, LibreChat, Claude Code.

Pure Python, no Django; of the project it uses only the core (``sessionfiles``). Layers inside (each
uses only those listed before it): ``errors`` · ``conversation`` (one conversation in pi's terms, and
its spool form) · ``shapes`` (pi's message shapes built from what exports hold) · ``sources`` (opening an
export: a file, a ``.zip``, a folder; which product wrote it; reading with a byte count) · the readers
``chatgpt``, ``openwebui``, ``librechat``, ``claudecode`` (each yields ``Conversation``s) · ``plan`` (the
entries a conversation adds to its session, given what the file already holds) · ``run`` (an export
read whole into a spool, then each session written whole or appended to in one write).
"""
