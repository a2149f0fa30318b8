"""Model API keys at rest: Fernet tokens under a key derived from ARENA_SECRET_KEY."""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


class SecretKeyError(RuntimeError):
    """No secret key is set, or a stored key was encrypted under another one."""


class KeyBox:
    """Encrypts and decrypts API keys; the plaintext never leaves through an error message."""

    def __init__(self, secret: str) -> None:
        if not secret:
            raise SecretKeyError("ARENA_SECRET_KEY is empty")
        derived = HKDF(
            algorithm=hashes.SHA256(), length=32, salt=b"arena-api-keys", info=b"fernet"
        ).derive(secret.encode())
        self._fernet = Fernet(base64.urlsafe_b64encode(derived))

    def seal(self, api_key: str) -> bytes:
        return self._fernet.encrypt(api_key.encode())

    def open(self, token: bytes) -> str:
        try:
            return self._fernet.decrypt(bytes(token)).decode()
        except InvalidToken:
            raise SecretKeyError(
                "a stored API key does not decrypt: ARENA_SECRET_KEY differs from the one it"
                " was stored with (register the key again)"
            ) from None


def key_box(secret: str | None) -> KeyBox | None:
    return KeyBox(secret) if secret else None
