#!/usr/bin/env python3
"""silent.py: an MCP stdio server that reads stdin and never answers anything, not even
`initialize`.

Standard library only. It consumes every line the client sends (so the client's writes
never block) and writes nothing to stdout; at end of input it exits with status 0.

What it tests in the gateway: the start-up (handshake) timeout. A server that is running but
never completes `initialize` must be reported as failed to start within the configured
timeout, be stopped (its process group killed), and must not hold up the gateway, other
providers or sessions.
"""

import sys


def main():
    print("silent: started, will never answer", file=sys.stderr, flush=True)
    while sys.stdin.buffer.readline():
        pass


if __name__ == "__main__":
    main()
