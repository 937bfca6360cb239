#!/usr/bin/env python3
"""A Kimi-compatible server that streams N tokens as fast as the socket takes them.

Used by `benches/e2e/run.sh` to measure the TUI's own cost of showing a long answer (the
server does no work per request beyond formatting). Stdlib only.

    flood.py --port 0 --tokens 100000 --kind code|prose|paragraph [--port-file PATH]

Both endpoints answer every request the same way: `/v1/completions` with vLLM's text chunks
(raw mode), `/v1/chat/completions` with `delta.content` chunks (chat mode), one token per SSE
event, then a `stop` chunk and `[DONE]`. The answer ends with the line `END-OF-FLOOD`, which the
driver waits for on screen. `/v1/models` lists the one model `flood`.
"""

import argparse
import http.server
import json
import socketserver
import sys

PROSE = (
    "The quick brown fox jumps over the lazy dog while the model keeps talking about "
    "streams, terminals and the cost of drawing every token as it arrives on the screen"
).split(" ")

CODE = [
    "def", " step", "(", "state", ",", " value", "):", "\n",
    "    ", "total", " =", " state", ".", "total", " +", " value", " *", " 2", "\n",
    "    ", "if", " total", " >", " 1000", ":", "  ", "# wrap around", "\n",
    "        ", "total", " -=", " 1000", "\n",
    "    ", "return", " State", "(", "total", ",", " \"ok\"", ")", "\n",
]


def tokens(kind, n):
    """The answer as `n` tokens (plus the closing lines)."""
    out = []
    if kind == "code":
        out.append("```python\n")
        i = 0
        while len(out) < n:
            out.append(CODE[i % len(CODE)])
            i += 1
        out.append("\n```\n")
    else:
        i = 0
        while len(out) < n:
            word = PROSE[i % len(PROSE)]
            out.append(word if i == 0 else " " + word)
            i += 1
            # Prose: a paragraph break every 200 tokens; "paragraph": one paragraph, no newline.
            if kind == "prose" and i % 200 == 0:
                out.append(".\n\n")
                i = 0
                n -= 1
        out.append("\n\n")
    out.append("END-OF-FLOOD")
    return out


def sse(obj):
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "flood", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        chat = self.path.rstrip("/").endswith("/chat/completions")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        head = {"id": "cmpl-flood", "created": 0, "model": "flood"}
        buf = []
        size = 0

        def put(obj):
            nonlocal size
            b = sse(obj)
            buf.append(b)
            size += len(b)
            if size >= 65536:
                flush()

        def flush():
            nonlocal size
            if buf:
                self.wfile.write(b"".join(buf))
                buf.clear()
                size = 0

        if chat:
            put({**head, "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                              "finish_reason": None}]})
        for t in tokens(self.server.kind, self.server.tokens):
            if chat:
                put({**head, "object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": {"content": t}, "finish_reason": None}]})
            else:
                put({**head, "object": "text_completion",
                     "choices": [{"index": 0, "text": t, "logprobs": None,
                                  "finish_reason": None, "stop_reason": None}]})
        if chat:
            put({**head, "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        else:
            put({**head, "object": "text_completion",
                 "choices": [{"index": 0, "text": "", "logprobs": None,
                              "finish_reason": "stop", "stop_reason": None}]})
        buf.append(b"data: [DONE]\n\n")
        flush()
        self.wfile.flush()
        self.close_connection = True


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--tokens", type=int, default=100000)
    p.add_argument("--kind", choices=["code", "prose", "paragraph"], default="prose")
    p.add_argument("--port-file", help="write the bound port here once listening")
    a = p.parse_args()
    srv = Server(("127.0.0.1", a.port), Handler)
    srv.kind = a.kind
    srv.tokens = a.tokens
    port = srv.server_address[1]
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write(str(port))
        import os
        os.replace(a.port_file + ".tmp", a.port_file)
    print(f"flood: listening on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
