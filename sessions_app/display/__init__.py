"""What the pages show, built from the core and rendered by the templates: entries as view objects
(``entries``), the transcript one page at a time (``transcript``), the tree panel as flat rows
(``treepanel``), and message Markdown made safe (``markdown``). Read-only: nothing here writes."""
