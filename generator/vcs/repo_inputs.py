"""Check what `sync` and `release` are both given before anything is cloned or asked of
GitHub: the token and the repo name. Each check raises a FatalError that says what to pass
instead; none of them ever puts the token in a message. (Sync's own inputs, the API root and
the base branch, are checked by `generator.vcs.remote_inputs`.)
"""

from __future__ import annotations

import re

from generator.util.errors import FatalError

#: GitHub owner (user or organization): letters, digits, hyphens (underscores for Enterprise
#: managed users), not starting with a hyphen, at most 39 characters. Repository name: letters,
#: digits, `.`, `_`, `-`, at most 100 characters. Source: GitHub's sign-up and "Create a new
#: repository" forms (the rules they enforce).
_OWNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$")
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
#: A token is printable ASCII without spaces (GitHub's are `ghp_`/`github_pat_` + base62/_).
_TOKEN = re.compile(r"^[\x21-\x7e]+$")


def clean_token(token: str | None) -> str | None:
    """The token with surrounding whitespace removed (a trailing newline from `gh auth token`
    or a secrets file is common), or None when nothing is left.

    Raises:
        FatalError: the token holds other whitespace, control or non-ASCII characters (it
            could not go into an HTTP header); the message never shows the token.
    """
    if token is None:
        return None
    stripped = token.strip()
    if not stripped:
        return None
    if not _TOKEN.match(stripped):
        raise FatalError(
            "GITHUB_TOKEN contains spaces, control or non-ASCII characters, so it is not a "
            "GitHub token (the value is not shown): set it to the token alone, e.g. "
            "`export GITHUB_TOKEN=$(gh auth token)`"
        )
    return stripped


def check_repo(repo: str) -> None:
    """Refuse a `--repo` that is not OWNER/NAME as GitHub spells repositories.

    Raises:
        FatalError: wrong shape, characters GitHub does not allow, `.`/`..`, or a `.git` suffix.
    """
    owner, slash, name = repo.partition("/")
    example = "e.g. pytorch/executorch"
    if not slash or not _OWNER.match(owner) or not _NAME.match(name) or name in (".", ".."):
        raise FatalError(
            f"--repo {repo!r} is not OWNER/NAME ({example}): the owner has letters, digits and "
            "hyphens; the name letters, digits, '.', '_' and '-' (and is not '.' or '..')"
        )
    if name.lower().endswith(".git"):
        raise FatalError(
            f"--repo {repo!r} ends in .git: give the repository as OWNER/NAME ({example}); "
            "a git URL goes in --remote"
        )


#: A GitHub App's App ID (digits) or client ID. GitHub's JWT `iss` takes either (docs,
#: "Generating a JSON Web Token (JWT) for a GitHub App": "The client ID or application ID of your
#: GitHub App"; GitHub changelog, May 2024, on the client ID as `iss`, example
#: `Iv23f8doAlphaNumer1c`; older Apps' client IDs look like `Iv1.8a61f9b3a7aba766`). GitHub does
#: not document the client ID's alphabet: this accepts `Iv` and then letters, digits and dots.
_APP_ID = re.compile(r"^(?:[0-9]{1,20}|Iv[0-9A-Za-z.]{1,60})$")


def check_app_id(app_id: str) -> str:
    """Refuse an `--app-id` that is neither an App ID nor a client ID; returns it unchanged.

    Raises:
        FatalError: the value is not shown (a private key pasted there by mistake would be).
    """
    if not _APP_ID.match(app_id):
        raise FatalError(
            "--app-id is not a GitHub App's App ID (digits, e.g. 123456) or client ID (e.g. "
            "Iv23liAbCdEf…); the value is not shown. Both are on the App's settings page "
            "(Settings → Developer settings → GitHub Apps → the App → General)"
        )
    return app_id


def clean_private_key(key: str | None, variable: str) -> str:
    """The GitHub App private key from environment variable `variable`: surrounding
    whitespace dropped, `\\n` written as two characters (a key pasted into a one-line secret)
    turned into newlines, and checked to be an unencrypted RSA private key in PEM form (GitHub
    Apps sign their JWTs with RS256 and GitHub hands out RSA keys as `.pem` files).

    Raises:
        FatalError: unset, empty, not PEM, encrypted, or not RSA; the message names
            `variable` and never shows any part of the value.
    """
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    where = (
        "give it the App's private key, the whole .pem file GitHub generated (App settings → "
        "Private keys → Generate a private key), from a secret"
    )
    text = (key or "").strip()
    if not text:
        raise FatalError(f"--app-id is given but {variable} is not set or empty: {where}")
    if "\n" not in text and "\\n" in text:
        text = text.replace("\\n", "\n")
    try:
        loaded = load_pem_private_key(text.encode("utf-8", "replace"), password=None)
    except (ValueError, TypeError):
        raise FatalError(
            f"{variable} is not an unencrypted PEM private key (the value is not shown; it "
            f"should start with -----BEGIN RSA PRIVATE KEY-----): {where}"
        ) from None
    except Exception:  # cryptography's UnsupportedAlgorithm and the like
        raise FatalError(
            f"{variable} is not a private key sync can read (the value is not shown): {where}"
        ) from None
    if not isinstance(loaded, RSAPrivateKey):
        raise FatalError(
            f"{variable} holds a PEM private key that is not RSA, and GitHub Apps sign with "
            f"RS256 (the value is not shown): {where}"
        )
    return text + "\n"
