"""Keep Streamlit's full garbage collection after every run cheap.

Streamlit runs `gc.collect(2)` after each script run (`runner.postScriptGC`) so that memory
does not build up between runs. A full collection walks every tracked object, and most of them
belong to the modules the dashboard imported (pandas, plotly, scipy, streamlit itself), which
live as long as the process: about 100 ms per page run on our machines, for nothing.

`freeze_new_imports` moves the objects alive after a run into the collector's permanent
generation whenever that run imported new modules (the first visit of each page), so later
collections walk only what the runs create. Frozen objects are still freed by reference
counting; only a reference cycle among them would outlive its last use, and freezing happens a
handful of times per process, so that cost is bounded.
"""

from __future__ import annotations

import gc
import sys

_modules_when_frozen = 0  # how many modules were loaded at the last freeze, for this process


def freeze_new_imports() -> None:
    """After a run: if it imported new modules, collect once, then freeze what is left."""
    global _modules_when_frozen
    if len(sys.modules) <= _modules_when_frozen:
        return
    gc.collect()  # the run's garbage is freed now, not kept forever by the freeze
    gc.freeze()
    _modules_when_frozen = len(sys.modules)
