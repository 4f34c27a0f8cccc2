"""Real server processes for the tests that need them: started on a free loopback port, waited
for until they accept connections (bounded), and stopped by the test that started them."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Iterator, List, Optional


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition, timeout_s: float = 30.0, what: str = "the condition",
               every_s: float = 0.02):
    """Polls ``condition`` until it returns something truthy; fails after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(every_s)


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class Process:
    """One server process listening on ``port``."""

    def __init__(self, argv: List[str], port: int, cwd: Optional[str] = None,
                 env: Optional[dict] = None, log: Optional[str] = None) -> None:
        self.port = port
        self._log = open(log, "ab") if log else subprocess.DEVNULL
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_until(lambda: self.proc.poll() is not None or _accepts(port), 60,
                       f"{argv[0]} to listen on {port}")
            if self.proc.poll() is not None:
                raise AssertionError(f"{argv} exited with {self.proc.returncode}"
                                     + (f"; see {log}" if log else ""))
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self._log is not subprocess.DEVNULL:
            self._log.close()
            self._log = subprocess.DEVNULL


@contextlib.contextmanager
def running(argv: List[str], port: int, **kw) -> Iterator[Process]:
    p = Process(argv, port, **kw)
    try:
        yield p
    finally:
        p.stop()


def python_server(module_dir: str, argv: List[str], port: int, **kw) -> Process:
    """A Python server run from ``module_dir`` with this interpreter."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([module_dir] + sys.path))
    return Process([sys.executable] + argv, port, cwd=module_dir, env=env, **kw)
