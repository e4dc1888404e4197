"""`ui.heap.freeze_new_imports`: after a run that imported modules, what is alive is frozen
(Streamlit's full collection after each run then skips it); garbage is never frozen, and a run
that imported nothing freezes nothing. Run in a child process: freezing is per process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

CHILD = textwrap.dedent(
    """
    import gc, weakref
    from ui.heap import freeze_new_imports

    class Node:
        pass

    def cycle():
        a, b = Node(), Node()
        a.other, b.other = b, a
        return weakref.ref(a)

    garbage_before = cycle()  # unreachable, but only a collection frees a cycle
    kept = Node()
    freeze_new_imports()  # ui.heap itself was imported since the process began
    assert gc.get_freeze_count() > 0
    assert garbage_before() is None, "garbage was frozen instead of freed"
    frozen = gc.get_freeze_count()

    garbage_after = cycle()
    freeze_new_imports()  # nothing new imported: nothing frozen
    assert gc.get_freeze_count() == frozen
    gc.collect()
    assert garbage_after() is None, "a later run's garbage is still collected"

    import difflib  # noqa: F401  (a page's first visit imports more)
    import ipaddress  # noqa: F401
    freeze_new_imports()
    assert gc.get_freeze_count() > frozen
    print("ok")
    """
)


def test_only_a_run_that_imported_modules_freezes_and_never_its_garbage():
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
