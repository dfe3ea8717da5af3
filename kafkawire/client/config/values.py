"""Converters of property values (text) to Python values; a bad value is a :class:`ConfigError` naming the property."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigError

__all__ = ["bool_value", "choice", "int_value", "str_value"]


def int_value(prop: str, value: Any) -> int:
    """Property ``prop``'s value as an int (a ``ConfigError`` naming it otherwise)."""
    try:
        return int(str(value).strip())
    except ValueError:
        raise ConfigError(prop, f"expected an integer, not {value!r}", value=str(value)) from None


def bool_value(prop: str, value: Any) -> bool:
    """Property ``prop``'s value as a bool: ``true`` or ``false``, as Java reads it."""
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ConfigError(prop, f"expected true or false, not {value!r}", value=str(value))
    return text == "true"


def str_value(prop: str, value: Any) -> str:
    """Property ``prop``'s value as a str, surrounding blanks stripped."""
    return str(value).strip()


def choice(*accepted: str, aliases: Mapping[str, str] | None = None) -> Callable[[str, Any], str]:
    """A converter that takes one of ``accepted`` (case-insensitively, ``aliases`` mapped first)."""
    def convert(prop: str, value: Any) -> str:
        text = str(value).strip().lower()
        text = (aliases or {}).get(text, text)
        if text not in accepted:
            raise ConfigError(prop, f"expected one of {', '.join(accepted)}, not {value!r}", value=str(value))
        return text

    return convert
