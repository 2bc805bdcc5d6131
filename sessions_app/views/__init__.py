"""HTTP views: ``pages`` read, ``actions`` write without the assistant, ``chat`` writes with it."""
