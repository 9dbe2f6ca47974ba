"""A recorded-reply test double of an OpenAI-compatible chat server: a real HTTP server on
127.0.0.1 (random port, in a thread) that answers POST /v1/chat/completions with canned replies
in order and records every request body and header it received."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def say(text: str) -> dict:
    return {"role": "assistant", "content": text}


def call(name: str, args, call_id: str | None = None) -> dict:
    """An assistant turn with one tool call; `args` a dict (sent as JSON) or a raw string."""
    raw = args if isinstance(args, str) else json.dumps(args)
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": call_id or f"call_{name}_{abs(hash(raw)) % 10**6}", "type": "function",
                            "function": {"name": name, "arguments": raw}}]}


def status(code: int, body: str = "server error") -> tuple:
    return ("status", code, body)


def slow(seconds: float, reply: dict) -> tuple:
    return ("sleep", seconds, reply)


class CannedChatServer:
    def __init__(self, replies: list):
        self.replies = list(replies)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(n) or b"{}")
                with outer._lock:
                    outer.requests.append(body)
                    outer.headers.append(dict(self.headers))
                    reply = outer.replies.pop(0) if outer.replies else ("status", 500, "no canned reply left")
                if self.path != "/v1/chat/completions":
                    reply = ("status", 404, f"unknown path {self.path}")
                if isinstance(reply, tuple) and reply[0] == "sleep":
                    time.sleep(reply[1])
                    reply = reply[2]
                if isinstance(reply, tuple):
                    self._send(reply[1], {"error": {"message": reply[2]}})
                    return
                self._send(200, {"id": "chatcmpl-test", "object": "chat.completion", "model": body.get("model"),
                                 "choices": [{"index": 0, "message": reply,
                                              "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}]})

            def _send(self, code, obj):
                data = json.dumps(obj).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass                       # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def tool_messages(self, i: int) -> list[dict]:
        """The tool-result messages of request i (what the model was told)."""
        return [m for m in self.requests[i]["messages"] if m.get("role") == "tool"]

    def last_tool_content(self, i: int) -> dict:
        return json.loads(self.tool_messages(i)[-1]["content"].split(") ", 1)[-1]
                          if self.tool_messages(i)[-1]["content"].startswith("(") else self.tool_messages(i)[-1]["content"])
