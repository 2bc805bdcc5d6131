"""pi itself as the assistant (``PITREE_ASSISTANT=pi``): pitree drives ``pi --mode rpc`` on a session's
file, and pi writes the file. ``command`` (how pi is started), ``rpc`` (one pi process and its JSONL
protocol), ``locks`` (one pi per session across processes; pitree's writes kept out of pi's turns),
``driver`` (pi for one session: started on demand, told where to continue, stopped when idle).
"""
