"""A local PostgreSQL server for the shared-ledger tests (real server, no mocks).

`.ci/run` starts one before the suite (`python3 tests/helpers/postgres.py DIR` prints the
owner's URL) and exports it as DPRELEASE_TEST_POSTGRES. Without it, the first test that needs
the server starts one itself where Debian's `initdb` is installed, under a file lock (the
suite runs in several xdist workers: one server for all of them, reused by later runs). Without
PostgreSQL the tests skip, but fail under CI=1 (as the Spark and browser tests do).

Two login roles: `ledger_owner` (owns the database, creates the ledger's tables) and
`ledger_releaser` (granted the right to release by each test). Each test gets a fresh schema.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

ENV_VAR = "DPRELEASE_TEST_POSTGRES"
OWNER, OWNER_PASSWORD = "ledger_owner", "owner-pw"
RELEASER, RELEASER_PASSWORD = "ledger_releaser", "releaser-pw"
DATABASE = "ledger"
SHARED = Path(f"/tmp/dprelease-test-postgres-{os.getuid()}")


def bin_dir() -> Path | None:
    """Debian's PostgreSQL binaries (not on PATH), or the ones on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _as_server_user(command: list[str]) -> list[str]:
    # initdb and postgres refuse to run as root: run them as Debian's `postgres` user
    return ["runuser", "-u", "postgres", "--", *command] if os.getuid() == 0 else command


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _psql(binaries: Path, folder: Path, port: int, statement: str) -> None:
    subprocess.run(
        _as_server_user(
            [
                str(binaries / "psql"),
                "-q",
                "-h",
                str(folder),
                "-p",
                str(port),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                statement,
            ]
        ),
        check=True,
        capture_output=True,
    )


def start(folder: Path) -> str:
    """initdb into `folder`, start the server on a free local port, create the roles and the
    database; the owner's URL."""
    binaries = bin_dir()
    if binaries is None:
        raise RuntimeError("no PostgreSQL here (apt-get install postgresql)")
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "data"
    if os.getuid() == 0:
        shutil.chown(folder, "postgres")
    subprocess.run(
        _as_server_user(
            [
                str(binaries / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "--auth-host=scram-sha-256",
                "--no-sync",
            ]
        ),
        check=True,
        capture_output=True,
    )
    port = _free_port()
    options = (
        f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c shared_buffers=16MB"
        " -c max_connections=60 -c fsync=off -c synchronous_commit=off"
    )
    subprocess.run(
        _as_server_user(
            [
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(folder / "log"),
                "-w",
                "-o",
                options,
                "start",
            ]
        ),
        check=True,
        capture_output=True,
    )
    for role, password in ((OWNER, OWNER_PASSWORD), (RELEASER, RELEASER_PASSWORD)):
        _psql(binaries, folder, port, f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    _psql(binaries, folder, port, f"CREATE DATABASE {DATABASE} OWNER {OWNER}")
    return f"postgresql://{OWNER}:{OWNER_PASSWORD}@127.0.0.1:{port}/{DATABASE}"


def _alive(url: str) -> bool:
    import psycopg

    try:
        psycopg.connect(url, connect_timeout=3).close()
    except psycopg.Error:
        return False
    return True


def server_url() -> str | None:
    """The owner's URL of the test server: $DPRELEASE_TEST_POSTGRES, else a shared one started
    here (None: no PostgreSQL installed)."""
    if os.environ.get(ENV_VAR):
        return os.environ[ENV_VAR]
    if bin_dir() is None:
        return None
    SHARED.mkdir(exist_ok=True)
    SHARED.chmod(0o755)  # the server runs as the `postgres` user when we are root
    with open(SHARED / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker starts it, the others wait and reuse it
        saved = SHARED / "url"
        if saved.exists() and _alive(saved.read_text().strip()):
            return saved.read_text().strip()
        server = SHARED / f"server-{uuid.uuid4().hex[:8]}"
        url = start(server)
        saved.write_text(url)
        return url


def releaser_url(owner_url: str) -> str:
    return owner_url.replace(f"{OWNER}:{OWNER_PASSWORD}@", f"{RELEASER}:{RELEASER_PASSWORD}@")


@contextlib.contextmanager
def fresh_schema(owner_url: str) -> Iterator[str]:
    """A new empty schema owned by the ledger's owner; the owner's URL that uses it."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    try:
        yield f"{owner_url}?options=-csearch_path%3D{name}"
    finally:
        with psycopg.connect(owner_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {name} CASCADE")


def stop(folder: Path) -> None:
    binaries = bin_dir()
    if binaries is not None and (folder / "data").exists():
        subprocess.run(
            _as_server_user(
                [str(binaries / "pg_ctl"), "-D", str(folder / "data"), "-m", "fast", "stop"]
            ),
            capture_output=True,
        )


if __name__ == "__main__":  # .ci/run: `start DIR` prints the owner's URL; `stop DIR`
    action, where = sys.argv[1], Path(sys.argv[2])
    if action == "start":
        print(start(where))
    else:
        stop(where)
