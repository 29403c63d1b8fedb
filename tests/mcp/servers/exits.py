#!/usr/bin/env python3
"""exits.py: an MCP stdio server that exits with status 3 at once, before reading anything.

Standard library only. It writes the line "exits: failing on purpose" to stderr and exits
with status 3 without touching stdin or stdout.

What it tests in the gateway: a server that dies during start-up. The failure must be
reported promptly (not after the handshake timeout) with the exit status and the last
stderr lines, the provider must show as failed, and a restart policy must not spin
(backoff or a retry limit).
"""

import sys

if __name__ == "__main__":
    print("exits: failing on purpose", file=sys.stderr, flush=True)
    sys.exit(3)
