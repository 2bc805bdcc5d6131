"""HTTP views: ``pages`` read, ``actions`` write without the assistant, ``chat`` writes with it;
``compare`` (branches side by side, the map), ``search``, ``shares``, ``transfer`` (downloads and
uploads) and ``accounts``; ``responses`` holds what they answer with in common."""
