"""What the pages show, built from the core and rendered by the templates: entries as view objects
(``entries``), the transcript one page at a time (``transcript``), the tree panel as flat rows drawn
from cached runs (``treepanel``), the model and thinking level a branch is on (``settings``), and
message Markdown made safe, highlighted, or flattened to plain text (``markdown``, whose colours
``highlight_css`` generates). Read-only: nothing here writes."""
