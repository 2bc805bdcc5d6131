"""Live updates: websocket consumers that push session-file growth to browsers."""
