"""OAUTHBEARER token providers, importable here as before; they live in :mod:`kafkawire.client.net.oauth`."""

from __future__ import annotations

from .net.oauth import ClientCredentialsTokenProvider, unsecured_token

__all__ = ["ClientCredentialsTokenProvider", "unsecured_token"]
