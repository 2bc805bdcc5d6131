"""What the templates' partials are given, for one reader: the context a page view renders a partial
with, shared by the views that render it alone (htmx, pushes), so that a fragment looks exactly like
the same part of the page. ``listing`` (the session list) and ``transcript`` (a session's path and
composer)."""
