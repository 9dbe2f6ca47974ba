"""`openai` planner backend: any OpenAI-compatible chat server with tool calling (vLLM, Ollama,
llama.cpp server, cloud APIs), driving the MSSR / tool loop of `mssr_loop`.

    planner = make_planner("openai", base_url="http://localhost:11434/v1", model="qwen2.5vl:7b")
    result = planner.plan(scene, "take the book behind the picture frame", observation=obs)

Settings come from the keyword config (YAML: config/params/planner_backends.yaml), else the
environment: OPENAI_BASE_URL, OPENAI_API_KEY, SPATIAL_MANIP_VLM_MODEL. Requests go to
`{base_url}/chat/completions` with the scene tools as OpenAI function specs and the observation's
RGB as a PNG data URL. The server boundary retries 5xx replies, timeouts and dropped connections
`max_retries` times with exponential back-off; a timeout that persists fails the goal with
TIMEOUT, any other server failure with INTERNAL (the message names the URL, status and body).
httpx is imported only here.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from spatial_manip.errors import BackendUnavailableError, SpatialManipError, StageTimeoutError
from spatial_manip.reasoning.mssr_loop import AgentConfig, plan_with_model
from spatial_manip.reasoning.planner import PlanResult
from spatial_manip.reasoning.vlm_coords import QWEN_MAX_PIXELS, QWEN_MIN_PIXELS, CoordSettings
from spatial_manip.geometry.reach import Reach
from spatial_manip.scene import Scene

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"      # vLLM's default; Ollama serves :11434/v1


@dataclass(kw_only=True)
class OpenAIConfig:
    base_url: str | None = None          # else $OPENAI_BASE_URL, else DEFAULT_BASE_URL
    model: str | None = None             # else $SPATIAL_MANIP_VLM_MODEL (required)
    api_key: str | None = None           # else $OPENAI_API_KEY (local servers accept none)
    timeout_s: float = 60.0              # per request
    max_retries: int = 2                 # extra attempts after a 5xx / timeout / dropped connection
    backoff_s: float = 1.0               # first back-off; doubles per retry
    temperature: float = 0.0
    max_tokens: int = 1024
    send_image: bool = True
    image_max_side_px: int = 1024
    extra_body: dict = field(default_factory=dict)    # server-specific fields (e.g. {"top_k": 1})
    # how the model writes boxes and points (vlm_coords.CONVENTIONS); the min/max pixels are
    # Qwen2.5-VL's resize bounds, which its coordinates depend on
    coords: str = "pixel"
    coords_min_pixels: int = QWEN_MIN_PIXELS
    coords_max_pixels: int = QWEN_MAX_PIXELS
    agent: dict = field(default_factory=dict)         # AgentConfig fields (mode, max_turns, ...)
    reach: Reach | None = None                        # the launched arm's reach rule (None: arm.yaml's)

    def __post_init__(self):
        self.base_url = (self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.model = self.model or os.environ.get("SPATIAL_MANIP_VLM_MODEL")
        self.api_key = self.api_key or os.environ.get("OPENAI_API_KEY")
        if not self.model:
            raise BackendUnavailableError(
                "the openai planner needs a model name: set 'model' in planner_backends.yaml or the environment "
                "variable SPATIAL_MANIP_VLM_MODEL (e.g. qwen2.5vl:7b for Ollama), or use --backend program")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL such as {DEFAULT_BASE_URL}, got {self.base_url!r}")
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {self.timeout_s}")
        if int(self.max_retries) < 0 or self.backoff_s < 0:
            raise ValueError(f"max_retries and backoff_s must be >= 0, got {self.max_retries}, {self.backoff_s}")
        if not isinstance(self.agent, AgentConfig):
            self.agent = AgentConfig(**dict(self.agent or {}))
        self.coord_settings = CoordSettings(self.coords, self.coords_min_pixels, self.coords_max_pixels)


class ChatClient:
    """POST /chat/completions with bounded retries; returns the assistant message (a dict)."""

    def __init__(self, cfg: OpenAIConfig, sleep=time.sleep):
        try:
            import httpx
        except ImportError as e:
            raise BackendUnavailableError("the openai planner needs httpx: pip install httpx==0.28.1") from e
        self.cfg, self._httpx, self._sleep = cfg, httpx, sleep
        headers = {"Content-Type": "application/json"}
        if cfg.api_key:
            headers["Authorization"] = f"Bearer {cfg.api_key}"
        self._client = httpx.Client(base_url=cfg.base_url, headers=headers, timeout=cfg.timeout_s)
        self.requests = 0

    def close(self) -> None:
        self._client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def complete(self, messages: list[dict], tools: list[dict] | None = None) -> dict:
        body: dict[str, Any] = {"model": self.cfg.model, "messages": messages,
                                "temperature": self.cfg.temperature, "max_tokens": self.cfg.max_tokens,
                                **self.cfg.extra_body}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        data = self._post(body)
        try:
            msg = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError) as e:
            raise SpatialManipError(f"{self.cfg.base_url}/chat/completions answered without choices[0].message: "
                                    f"{json.dumps(data)[:300]}", "INTERNAL") from e
        content = msg.get("content")
        if isinstance(content, list):          # some servers answer with content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        calls = msg.get("tool_calls") or []
        return {"role": "assistant", "content": content, "tool_calls": calls if isinstance(calls, list) else []}

    def _post(self, body: dict) -> dict:
        httpx, url = self._httpx, f"{self.cfg.base_url}/chat/completions"
        last: str = ""
        timed_out = False
        for attempt in range(int(self.cfg.max_retries) + 1):
            if attempt:
                self._sleep(self.cfg.backoff_s * 2 ** (attempt - 1))
            self.requests += 1
            try:
                r = self._client.post("/chat/completions", json=body)
            except httpx.TimeoutException as e:
                timed_out, last = True, f"no reply within {self.cfg.timeout_s} s ({type(e).__name__})"
                continue
            except httpx.TransportError as e:
                timed_out, last = False, f"connection failed: {e}"
                continue
            if r.status_code >= 500 or r.status_code == 429:
                timed_out, last = False, f"HTTP {r.status_code}: {r.text[:300]}"
                continue
            if r.status_code >= 400:
                hint = " (check OPENAI_API_KEY)" if r.status_code in (401, 403) else \
                       " (check the model name and that the server supports tool calling)"
                raise SpatialManipError(f"{url} refused the request: HTTP {r.status_code}{hint}: {r.text[:300]}",
                                        "INTERNAL")
            try:
                return r.json()
            except json.JSONDecodeError as e:
                raise SpatialManipError(f"{url} answered with non-JSON: {r.text[:200]!r}", "INTERNAL") from e
        tries = int(self.cfg.max_retries) + 1
        if timed_out:
            raise StageTimeoutError(f"{url}: {last}, {tries} attempt(s); raise timeout_s or check the server")
        raise SpatialManipError(f"{url} failed {tries} time(s); last: {last}. Is the server up?", "INTERNAL")


class OpenAIPlanner:
    """The `openai` planner backend (registry role "planner")."""

    name = "openai"

    def __init__(self, **cfg):
        self.config = OpenAIConfig(**cfg)
        self.client = ChatClient(self.config)

    def close(self) -> None:
        self.client.close()

    def plan(self, scene: Scene, instruction: str, *, observation: Any = None, task_kind: str = "auto",
             trace=None) -> PlanResult:
        obs = observation if self.config.send_image else None
        return plan_with_model(self.client, scene, instruction, self.config.agent, observation=obs,
                               task_kind=task_kind, trace=trace, image_max_side_px=self.config.image_max_side_px,
                               coords=self.config.coord_settings, reach=self.config.reach)
