"""Getting the one figure a user waits for to the browser before the rest of the run.

Streamlit's script thread and its server's event loop share the GIL. While the script keeps
computing, the event loop gets the GIL only every few milliseconds, and it needs it several
times to ship each message: an element written early can leave the server tens of
milliseconds later, behind whatever the script drew meanwhile (measured on the Budget page: the
total sent 15 ms into a what-if reached the browser 40–130 ms in). A short sleep right after
that element releases the GIL, and the event loop ships everything queued so far at once.
"""

from __future__ import annotations

import time

# Long enough for the event loop to wake up, serialise and write the queued messages (a few ms
# on a quiet machine); short beside what the rest of the run costs.
SHIP_PAUSE_SECONDS = 0.015


def ship_now() -> None:
    """Let the server send what this run has drawn so far before the run goes on."""
    time.sleep(SHIP_PAUSE_SECONDS)
