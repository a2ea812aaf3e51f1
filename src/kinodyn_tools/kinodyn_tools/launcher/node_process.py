"""One node of a running graph: its command line, its parameter file, its process group and its output.

Each node runs in its own session (see process_group.py). Nothing a node needs outlives it: its parameter
file is an anonymous in-memory file (memfd) handed to the node as `/dev/fd/<n>`, which vanishes with the last
process holding it, and the node is asked to stop (SIGINT, through prctl's PR_SET_PDEATHSIG) as soon as the
launcher's main thread ends, even when the launcher is killed with SIGKILL.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

import yaml

from kinodyn_tools.launcher.process_group import ProcessGroup

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn_tools.launcher.graph import NodeSpec

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PARENT_DEATH_SIGNAL = signal.SIGINT  # the first signal of a normal stop, so a node stops the same way


def ros_parameter_file(parameters: dict[str, Any]) -> str:
    """The parameters in the ROS 2 parameter file format, for any node name (`/**`)."""
    text: str = yaml.safe_dump({"/**": {"ros__parameters": parameters}}, sort_keys=False)
    return text


def command_line(node: NodeSpec, parameter_file: Path | None) -> list[str]:
    """`<executable> --ros-args -r __node:=<name> [--params-file <file>] [-r from:=to ...]`."""
    args = [str(node.executable_path), "--ros-args", "-r", f"__node:={node.name}"]
    if parameter_file is not None:
        args += ["--params-file", str(parameter_file)]
    for source, target in node.remappings.items():
        args += ["-r", f"{source}:={target}"]
    return args


def parameter_memfd(node: NodeSpec) -> int:
    """A file descriptor of an in-memory file holding the node's parameter file (no name on any disk)."""
    fd = os.memfd_create(f"kinodyn-params-{node.name}")
    with open(fd, "wb", closefd=False) as file:  # writes it whole, however long
        file.write(ros_parameter_file(node.parameters).encode())
    return fd


def stop_with_launcher() -> Callable[[], None]:
    """A `preexec_fn`: the child gets SIGINT when the launcher's thread that started it ends (prctl(2))."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork, not in the child
    launcher = os.getpid()

    def preexec() -> None:  # runs between fork and exec: two system calls, no lock another thread may hold
        if prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(PARENT_DEATH_SIGNAL)) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != launcher:  # the launcher ended before the request took effect: do not start
            os._exit(128 + PARENT_DEATH_SIGNAL)

    return preexec


class Printer(Protocol):
    """Where a node's output goes, one whole line at a time, prefixed with its node's name."""

    def line(self, prefix: str, text: str) -> None: ...


class LinePrinter:
    """Writes whole lines from several threads to one stream, each line prefixed with `[<node name>]`."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def line(self, prefix: str, text: str) -> None:
        with self._lock:
            self._stream.write(f"[{prefix}] {text}\n")
            self._stream.flush()


def copy_lines(pipe: IO[bytes], printer: Printer, prefix: str) -> None:
    """Print each line read from `pipe` as `[<prefix>] <line>`, until every writer has closed the pipe."""
    for raw in pipe:
        printer.line(prefix, raw.decode(errors="replace").rstrip("\r\n"))


class NodeProcess:
    """A started node: its process (leader of its own process group) and the thread copying its output."""

    def __init__(self, node: NodeSpec, process: subprocess.Popen[bytes], printer: Printer) -> None:
        self.node = node
        self._process = process
        self.group = ProcessGroup(node.name, process.pid)
        self._pump = threading.Thread(target=self._copy_output, args=(printer,), daemon=True)
        self._pump.start()

    @classmethod
    def start(cls, node: NodeSpec, printer: Printer) -> NodeProcess:
        """Start the node in a new session, its parameters in a memfd that only the node keeps open."""
        fds = (parameter_memfd(node),) if node.parameters else ()
        env = dict(os.environ, PYTHONUNBUFFERED="1")  # Python nodes' print() reaches the log line by line
        try:
            process = subprocess.Popen(
                command_line(node, Path(f"/dev/fd/{fds[0]}") if fds else None),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=fds,
                preexec_fn=stop_with_launcher(),  # noqa: PLW1509  (only prctl runs there; no other way to set the parent-death signal)
                env=env,
            )
        finally:
            for fd in fds:
                os.close(fd)
        return cls(node, process, printer)

    def _copy_output(self, printer: Printer) -> None:
        assert self._process.stdout is not None
        copy_lines(self._process.stdout, printer, self.node.name)

    @property
    def output_fd(self) -> int:
        """The read end of the pipe that carries the node's stdout and stderr."""
        assert self._process.stdout is not None
        return self._process.stdout.fileno()

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def pid(self) -> int:
        """The node's first process id, which is also its process group id."""
        return self._process.pid

    def exit_code(self) -> int | None:
        """The node process's exit code (negative: killed by that signal), or None while it runs."""
        return self._process.poll()

    def running(self) -> bool:
        """True while any process of the node's group is alive or its leader is not reaped yet (a dying
        multi-threaded leader is a zombie that cannot be reaped until its last thread ended)."""
        return self._process.poll() is None or self.group.running()

    def signal(self, signum: int) -> None:
        """Send `signum` to every process of the node's group."""
        self.group.signal(signum)

    def finish_output(self, timeout: float) -> None:
        """Wait until the node's output is copied (its pipe closes when its whole group has ended)."""
        self._pump.join(timeout)
