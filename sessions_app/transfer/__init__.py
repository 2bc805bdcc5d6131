"""Sessions in and out of workspaces, for an actor, on top of access: new sessions and forks
(``newfiles``), downloads as pi reads them (``downloads``) or as Markdown (``markdown``), and uploads
(``uploads``). Access decides what the actor sees and where they may write; this package makes the
files and the downloads from that."""
