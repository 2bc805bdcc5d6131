"""The channel layer as pitree calls it: ``calls`` (every call bounded, channels read until told to
end) and ``groups`` (a session's group names). Below everything that talks across processes: the
reply tasks (``services``), grant changes (``access``) and the push path (``live``)."""
