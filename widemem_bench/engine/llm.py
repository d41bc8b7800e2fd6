"""Minimal client for an OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp, OpenAI).

Optional: nothing in the engine needs it unless ``extractor="llm"`` or
``resolver="llm"``. The HTTP call goes through a *transport* (a callable), so
tests replay recorded responses without any network.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

# transport(url, payload, headers, timeout_s) -> the decoded JSON response body
Transport = Callable[[str, Mapping[str, Any], Mapping[str, str], float], Mapping[str, Any]]


class LLMError(RuntimeError):
    """The endpoint could not be reached or answered with an HTTP error."""


class LLMReplyError(ValueError):
    """The endpoint answered, but not with the JSON object we asked for."""


def chat_completions_url(url: str) -> str:
    """Accept a server root, a ``/v1`` base or the full ``/v1/chat/completions`` URL."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("llm_url: must be a non-empty URL, e.g. http://localhost:11434/v1")
    u = url.strip().rstrip("/")
    if not u.startswith(("http://", "https://")):
        raise ValueError(f"llm_url: {url!r} must start with http:// or https://")
    if u.endswith("/chat/completions"):
        return u
    if u.endswith("/v1"):
        return u + "/chat/completions"
    return u + "/v1/chat/completions"


def urllib_transport(
    url: str, payload: Mapping[str, Any], headers: Mapping[str, str], timeout: float
) -> Mapping[str, Any]:
    """POST ``payload`` as JSON with the standard library; no extra dependency."""
    data = json.dumps(payload).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers=dict(headers), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        raise LLMError(f"llm_url: {url} answered HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise LLMError(f"llm_url: {url} unreachable ({exc})") from None
    try:
        decoded = json.loads(body)
    except json.JSONDecodeError:
        raise LLMReplyError(f"llm_url: {url} did not answer with JSON") from None
    if not isinstance(decoded, dict):
        raise LLMReplyError(f"llm_url: {url} answered with a JSON {type(decoded).__name__}")
    return decoded


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def parse_json_object(text: str) -> dict[str, Any]:
    """Parse the JSON object in a model's reply.

    Tolerates what local models do: a ```json fence, prose before or after the
    object. The first balanced ``{...}`` that parses wins.
    """
    if not isinstance(text, str) or not text.strip():
        raise LLMReplyError("llm reply: empty content")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for chunk in candidates:
        chunk = chunk.strip()
        try:
            value = json.loads(chunk)
        except json.JSONDecodeError:
            value = _first_object(chunk)
        if isinstance(value, dict):
            return value
    raise LLMReplyError(f"llm reply: no JSON object found in {text[:60]!r}")


def _first_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    for start in (i for i, c in enumerate(text) if c == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


class ChatClient:
    """One model behind one OpenAI-compatible endpoint.

    ``temperature`` is 0 so that a given prompt gives the same answer as far as
    the server allows; the reply is asked for as a JSON object.
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        transport: Transport | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError("llm_model: must name a model, e.g. llama3.1:8b")
        if timeout <= 0:
            raise ValueError(f"llm_timeout: must be > 0 seconds, got {timeout}")
        self.url = chat_completions_url(url)
        self.model = model
        self.timeout = float(timeout)
        self._api_key = api_key
        self._transport = transport or urllib_transport

    def request_payload(self, system: str, prompt: str) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": prompt},
            ],
            "temperature": 0,
            "response_format": {"type": "json_object"},
        }

    def chat_json(self, system: str, prompt: str) -> dict[str, Any]:
        """Send one chat turn and return the JSON object in the reply."""
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body = self._transport(self.url, self.request_payload(system, prompt), headers, self.timeout)
        try:
            content = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            if isinstance(body, Mapping) and "error" in body:
                raise LLMError(f"llm_url: {self.url} returned an error: {body['error']}") from None
            raise LLMReplyError("llm reply: no choices[0].message.content in the response") from None
        return parse_json_object(content)
