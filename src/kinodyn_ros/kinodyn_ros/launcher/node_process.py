"""One node of a running graph: its command line, its parameter file, its process group and its output.

Each node runs in its own session, so its process group holds the node and everything it starts; signals go
to the whole group, and the node counts as stopped only when no live process is left in that group (so a node
that re-executes itself or leaves a child behind is still stopped completely). Group membership is read from
/proc: Linux, where the ROS 2 wheels exist.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

import yaml

from kinodyn_ros.launcher.graph import NodeSpec


def ros_parameter_file(parameters: dict[str, Any]) -> str:
    """The parameters in the ROS 2 parameter file format, for any node name (`/**`)."""
    return yaml.safe_dump({"/**": {"ros__parameters": parameters}}, sort_keys=False)


def command_line(node: NodeSpec, parameter_file: Path | None) -> list[str]:
    """`<executable> --ros-args -r __node:=<name> [--params-file <file>] [-r from:=to ...]`."""
    args = [str(node.executable_path), "--ros-args", "-r", f"__node:={node.name}"]
    if parameter_file is not None:
        args += ["--params-file", str(parameter_file)]
    for source, target in node.remappings.items():
        args += ["-r", f"{source}:={target}"]
    return args


def group_members(pgid: int) -> list[int]:
    """Pids of the live (not zombie) processes in process group `pgid`."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # the process ended while we looked
            continue
        state, _ppid, group = stat.rsplit(")", 1)[1].split()[:3]
        if int(group) == pgid and state != "Z":
            members.append(int(entry.name))
    return members


class LinePrinter:
    """Writes whole lines from several threads to one stream, each line prefixed with `[<node name>]`."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def line(self, prefix: str, text: str) -> None:
        with self._lock:
            self._stream.write(f"[{prefix}] {text}\n")
            self._stream.flush()


class NodeProcess:
    """A started node: its process (leader of its own process group) and the thread copying its output."""

    def __init__(self, node: NodeSpec, process: subprocess.Popen[bytes], printer: LinePrinter) -> None:
        self.node = node
        self._process = process
        self._pump = threading.Thread(target=self._copy_output, args=(printer,), daemon=True)
        self._pump.start()

    @classmethod
    def start(cls, node: NodeSpec, parameter_dir: Path, printer: LinePrinter) -> NodeProcess:
        """Write the node's parameter file into `parameter_dir` and start it in a new session."""
        parameter_file = None
        if node.parameters:
            parameter_file = parameter_dir / f"{node.name}.params.yaml"
            parameter_file.write_text(ros_parameter_file(node.parameters))
        env = dict(os.environ, PYTHONUNBUFFERED="1")  # Python nodes' print() reaches the log line by line
        process = subprocess.Popen(
            command_line(node, parameter_file),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
        return cls(node, process, printer)

    def _copy_output(self, printer: LinePrinter) -> None:
        assert self._process.stdout is not None
        for raw in self._process.stdout:
            printer.line(self.node.name, raw.decode(errors="replace").rstrip("\r\n"))

    @property
    def pid(self) -> int:
        """The node's first process id, which is also its process group id."""
        return self._process.pid

    def exit_code(self) -> int | None:
        """The node process's exit code (negative: killed by that signal), or None while it runs."""
        return self._process.poll()

    def running(self) -> bool:
        """True while any process of the node's group is alive."""
        self._process.poll()  # reap the leader so that it does not count as a live process
        return bool(group_members(self.pid))

    def signal(self, signum: int) -> None:
        """Send `signum` to every process of the node's group."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signum)

    def finish_output(self, timeout: float) -> None:
        """Wait until the node's output is copied (its pipe closes when its whole group has ended)."""
        self._pump.join(timeout)

