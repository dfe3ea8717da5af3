"""Converters of property values (text) to Python values; a bad value is a :class:`ConfigError` naming the property."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigError

__all__ = ["bool_value", "choice", "int_value", "str_value"]


def int_value(prop: str, value: Any) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise ConfigError(prop, f"expected an integer, not {value!r}", value=str(value)) from None


def bool_value(prop: str, value: Any) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ConfigError(prop, f"expected true or false, not {value!r}", value=str(value))
    return text == "true"


def str_value(prop: str, value: Any) -> str:
    return str(value).strip()


def choice(*accepted: str, aliases: Mapping[str, str] | None = None) -> Callable[[str, Any], str]:
    def convert(prop: str, value: Any) -> str:
        text = str(value).strip().lower()
        text = (aliases or {}).get(text, text)
        if text not in accepted:
            raise ConfigError(prop, f"expected one of {', '.join(accepted)}, not {value!r}", value=str(value))
        return text

    return convert
