"""What the pages show, built from the core and rendered by the templates: entries as view objects
(``entries``), the transcript one page at a time (``transcript``), the tree panel as flat rows drawn
from cached runs (``treepanel``), the tools an entry offers (``tools``), the model and thinking level
a branch is on (``settings``), branches side by side (``compare``, with ``worddiff``) and the session
map (``treemap``), and message Markdown made safe, highlighted, or flattened to plain text
(``markdown``, whose colours ``highlight_css`` generates). Read-only: nothing here writes."""
