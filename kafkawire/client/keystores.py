"""Java key and trust stores, importable here as before; they live in :mod:`kafkawire.client.net.keystores`."""

from __future__ import annotations

from .net.keystores import KeyStoreError, PrivateKeyEntry, StoreContents, read_store, store_format

__all__ = ["KeyStoreError", "PrivateKeyEntry", "StoreContents", "read_store", "store_format"]
