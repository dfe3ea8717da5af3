"""What the Avro, JSON and Protobuf codecs share about the schema registry: the ``registry`` argument they
take (a :class:`~kafkawire.serde.SchemaRegistry`, its URL, or a mapping of schema id to schema text) and
the depth-first walk over a registered schema's references."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .registry import RegisteredSchema, SchemaRegistry

__all__ = ["MAX_REFERENCE_DEPTH", "Registry", "as_registry", "encoding_registry", "visit_references"]

#: Deepest chain of schema references followed (a reference cycle stops here instead of recursing forever).
MAX_REFERENCE_DEPTH = 32

#: A registry client, or (enough to decode) a mapping of schema id to schema text.
Registry = SchemaRegistry | Mapping[int, str]


def as_registry(registry: Any) -> Registry:
    """``registry`` as a :data:`Registry`: a URL becomes a :class:`SchemaRegistry`; anything else is a TypeError."""
    if isinstance(registry, str):
        return SchemaRegistry(registry)
    if isinstance(registry, (SchemaRegistry, Mapping)):
        return registry
    raise TypeError(f"registry must be a SchemaRegistry, a URL or a mapping of schema id to schema text, "
                    f"not {type(registry).__name__}")


def encoding_registry(registry: Any, subject: Any, what: str, purpose: str) -> SchemaRegistry:
    """The registry an encoder ``what`` looks ``subject`` up in: a str subject and a :class:`SchemaRegistry`
    (a mapping of ids cannot register nor find a subject's latest schema), else a TypeError."""
    if not isinstance(subject, str):
        raise TypeError(f"subject must be a str, not {type(subject).__name__}")
    reg = as_registry(registry)
    if not isinstance(reg, SchemaRegistry):
        raise TypeError(f"{what} needs a SchemaRegistry{purpose}")
    return reg


def visit_references(
    registry: Registry,
    refs: Iterable[Any],
    visit: Callable[[Any, RegisteredSchema, int], None],
    error: type[Exception],
    depth: int = 0,
    *,
    format: str | None = None,
) -> None:
    """Call ``visit(reference, its registered schema, depth + 1)`` for each of ``refs``, after the schemas
    that one references in turn (so a schema's named types exist before the schema that uses them); an
    ``error`` when they nest deeper than :data:`MAX_REFERENCE_DEPTH` or ``registry`` cannot look them up.
    ``format`` is asked of the registry for each (:meth:`SchemaRegistry.get_schema`)."""
    if depth > MAX_REFERENCE_DEPTH:
        raise error(f"schema references nest deeper than {MAX_REFERENCE_DEPTH}")
    for ref in refs:
        if not isinstance(registry, SchemaRegistry):
            raise error("schema references need a SchemaRegistry")
        sub = registry.get_version(ref.subject, ref.version, format=format)
        visit_references(registry, sub.references, visit, error, depth + 1, format=format)
        visit(ref, sub, depth + 1)
