"""URDF text from what a user passes: XML text, a path, or the bytes of a file."""

from __future__ import annotations

from pathlib import Path

from kinodyn.urdf.errors import URDFError


def decode(data: bytes, where: str) -> str:
    """``data`` as UTF-8 text (XML's default encoding); ``URDFError`` for a binary or empty file."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise URDFError(f"{where} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}): "
                        "give a URDF XML file") from None
    return require_text(text, where)


def require_text(text: str, where: str) -> str:
    """``text`` unless it is empty or only whitespace."""
    if not text.strip():
        raise URDFError(f"{where} is empty: give URDF XML text starting with '<robot'")
    return text


def urdf_text(source: str | Path | bytes) -> str:
    """The XML text of ``source``: XML text (starting with '<'), a path to a file, or a file's bytes."""
    if isinstance(source, bytes):
        return decode(source, "the URDF")
    if isinstance(source, str) and (not source.strip() or source.lstrip().startswith("<")):
        return require_text(source, "the URDF")
    path = Path(source)
    if not path.is_file():
        raise URDFError(f"URDF file not found: {str(path)!r} (pass a path, or XML text starting with '<')")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise URDFError(f"cannot read URDF file {str(path)!r}: {exc.strerror}") from None
    return decode(data, f"URDF file {str(path)!r}")
