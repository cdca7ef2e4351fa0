"""A small, strict N-Triples parser (RDF 1.1 N-Triples, https://www.w3.org/TR/n-triples/).

One triple per line: ``subject predicate object .`` where the subject is an IRI ``<...>`` or a blank
node ``_:label``, the predicate an IRI, and the object an IRI, a blank node or a literal
``"text"``, ``"text"@lang`` or ``"text"^^<datatype>``. Escapes (``\\t \\n \\" \\\\ \\uXXXX
\\UXXXXXXXX``) are decoded. Empty lines and ``#`` comments are skipped.

Any malformed line raises :class:`~nodeweave.data.errors.DataFormatError` (a ``ValueError``) naming
the file, line and column and saying what was expected: a loader never crashes on, nor silently
drops, a bad line.

Terms are small frozen dataclasses, equal when they denote the same RDF term: language tags compare
case-insensitively (stored lower-case) and ``"x"^^xsd:string`` is the simple literal ``"x"``.

>>> from nodeweave.data.ntriples import parse_ntriples
>>> nt = b'<http://ex.org/a> <http://ex.org/name> "A\\\\u00e9"@EN .\\n_:b1 <http://ex.org/knows> <http://ex.org/a> .\\n'
>>> for s, p, o in parse_ntriples(nt, "tiny.nt"):
...     print(s, p, o)
<http://ex.org/a> <http://ex.org/name> "Aé"@en
_:b1 <http://ex.org/knows> <http://ex.org/a>
>>> parse_ntriples(b'<http://ex.org/a> <http://ex.org/p> "open .\\n', "bad.nt")
Traceback (most recent call last):
...
nodeweave.data.errors.DataFormatError: bad.nt:1:37: expected an object (IRI, blank node or literal), found '"open .'
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Union

from nodeweave.data.errors import DataFormatError
from nodeweave.data.text_tables import read_bytes
from nodeweave import errors as nwerr

__all__ = ["IRI", "BlankNode", "Literal", "Term", "parse_ntriples", "read_ntriples", "XSD_STRING"]

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


@dataclass(frozen=True)
class IRI:
    """An IRI term (absolute IRI, escapes decoded)."""
    value: str

    def __str__(self) -> str:
        return f"<{self.value}>"


@dataclass(frozen=True)
class BlankNode:
    """A blank node ``_:label`` (labels are local to one file)."""
    label: str

    def __str__(self) -> str:
        return f"_:{self.label}"


@dataclass(frozen=True)
class Literal:
    """A literal: lexical form, datatype IRI (None for simple strings) or language tag (lower-case)."""
    lexical: str
    datatype: str | None = None
    language: str | None = None

    def __str__(self) -> str:
        text = self.lexical.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
        if self.language:
            return f'"{text}"@{self.language}'
        if self.datatype:
            return f'"{text}"^^<{self.datatype}>'
        return f'"{text}"'


Term = Union[IRI, BlankNode, Literal]

_UCHAR = r"\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
_IRI = re.compile(r'<((?:[^\x00-\x20<>"{}|^`\\]|' + _UCHAR + r")*)>")
_BNODE = re.compile(r"_:(\w(?:[\w.\-]*[\w\-])?)")
_STRING = re.compile(r'"((?:[^"\\\n\r]|\\[tbnrf"\'\\]|' + _UCHAR + r')*)"')
_LANG = re.compile(r"@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*)")
_WS = re.compile(r"[ \t]*")
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_ECHARS = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


class _LineError(nwerr.NodeweaveError):
    def __init__(self, pos: int, message: str) -> None:
        self.pos, self.message = pos, message


def _unescape(s: str, pos: int) -> str:
    if "\\" not in s:
        return s

    def repl(m: re.Match) -> str:
        if m.group(3) is not None:
            return _ECHARS[m.group(3)]
        cp = int(m.group(1) or m.group(2), 16)
        if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
            raise _LineError(pos + m.start(), f"escape {m.group(0)!r} is not a valid Unicode code point")
        return chr(cp)

    return _ESCAPE.sub(repl, s)


def _snippet(line: str, pos: int) -> str:
    rest = line[pos:pos + 40]
    return repr(rest) if rest else "the end of the line"


def _iri(line: str, pos: int, what: str) -> tuple[IRI, int]:
    m = _IRI.match(line, pos)
    if not m:
        raise _LineError(pos, f"expected {what}, found {_snippet(line, pos)}")
    value = _unescape(m.group(1), pos + 1)
    if not _SCHEME.match(value):
        raise _LineError(pos, f"{what} <{value}> is not an absolute IRI (no scheme)")
    return IRI(value), m.end()


def _subject(line: str, pos: int) -> tuple[Term, int]:
    if line.startswith("_:", pos):
        m = _BNODE.match(line, pos)
        if not m:
            raise _LineError(pos, f"malformed blank node label {_snippet(line, pos)}")
        return BlankNode(m.group(1)), m.end()
    return _iri(line, pos, "a subject (IRI or blank node)")


def _object(line: str, pos: int) -> tuple[Term, int]:
    if line.startswith("_:", pos):
        return _subject(line, pos)
    if line.startswith("<", pos):
        return _iri(line, pos, "an object IRI")
    m = _STRING.match(line, pos)
    if not m:
        raise _LineError(pos, f"expected an object (IRI, blank node or literal), found {_snippet(line, pos)}")
    lexical = _unescape(m.group(1), pos + 1)
    end = m.end()
    if line.startswith("^^", end):
        dt, end = _iri(line, end + 2, "a datatype IRI after '^^'")
        datatype = None if dt.value == XSD_STRING else dt.value
        return Literal(lexical, datatype=datatype), end
    if line.startswith("@", end):
        lm = _LANG.match(line, end)
        if not lm:
            raise _LineError(end, f"malformed language tag {_snippet(line, end)}")
        return Literal(lexical, language=lm.group(1).lower()), lm.end()
    return Literal(lexical), end


def _parse_line(line: str) -> tuple[Term, IRI, Term] | None:
    pos = _WS.match(line, 0).end()
    if pos == len(line) or line[pos] == "#":
        return None
    subj, pos = _subject(line, pos)
    pos = _WS.match(line, pos).end()
    pred, pos = _iri(line, pos, "a predicate IRI")
    pos = _WS.match(line, pos).end()
    obj, pos = _object(line, pos)
    pos = _WS.match(line, pos).end()
    if not line.startswith(".", pos):
        raise _LineError(pos, f"expected '.' to end the triple, found {_snippet(line, pos)}")
    pos = _WS.match(line, pos + 1).end()
    if pos < len(line) and line[pos] != "#":
        raise _LineError(pos, f"unexpected text after the final '.': {_snippet(line, pos)}")
    return subj, pred, obj


def parse_ntriples(data: bytes, path: Any = "<ntriples>") -> list[tuple[Term, IRI, Term]]:
    """All triples of N-Triples ``data`` (UTF-8 bytes), in file order.

    Raises
    ------
    DataFormatError
        For the first malformed line, naming ``path``, the line and the column.
    """
    if not isinstance(data, (bytes, bytearray)):
        raise nwerr.TypeError(f"data must be bytes, got {type(data).__name__}")
    out = []
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DataFormatError(path, f"not valid UTF-8 ({e.reason})", line=lineno, column=e.start + 1) from None
        try:
            t = _parse_line(line)
        except _LineError as e:
            raise DataFormatError(path, e.message, line=lineno, column=e.pos + 1) from None
        if t is not None:
            out.append(t)
    return out


def read_ntriples(path: str | os.PathLike) -> list[tuple[Term, IRI, Term]]:
    """Parses an N-Triples file (``.gz`` files are decompressed)."""
    return parse_ntriples(read_bytes(path), os.fspath(path))
