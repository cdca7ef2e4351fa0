"""What every nodeweave command line does with an error: one ``PROG: error: ...`` line on stderr and
exit status 2 for bad input (any library or file error), 130 for Ctrl-C, never a traceback."""

from __future__ import annotations

import sys
from typing import Callable


def run_command(prog: str, command: Callable[[], int]) -> int:
    """``command()``'s exit status, or 2 (130 for Ctrl-C) after printing what went wrong.

    >>> run_command("demo", lambda: int("x"))
    2
    """
    from nodeweave.data.errors import DataFormatError
    from nodeweave.errors import NodeweaveError

    try:
        return command()
    except (NodeweaveError, DataFormatError, ValueError, KeyError, IndexError, OSError) as e:
        # a KeyError's str() is the repr of its message; print the message itself
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"{prog}: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
