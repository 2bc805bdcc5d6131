"""Django-aware glue between the views/consumers and the pure session core: finding a session from
a URL id, running a chat turn, writing summaries. Small on purpose; the rules live in the core."""
