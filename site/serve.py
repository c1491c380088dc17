"""Static server for the built site on 127.0.0.1 with COOP/COEP (crossOriginIsolated pages).

usage: python site/serve.py [--port 8000] [--root site/_build]   (PORT env var also works)
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import threading
from pathlib import Path


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".wasm": "application/wasm",
        ".json": "application/json",
        ".whl": "application/octet-stream",
        ".zip": "application/zip",
    }

    isolated = True  # send COOP/COEP: pages are crossOriginIsolated (wasm threads)

    def end_headers(self):
        if self.isolated:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, fmt, *args):
        if os.environ.get("PYJAX_HTTP_LOG"):
            super().log_message(fmt, *args)


def start(root: str | Path, port: int = 0, isolated: bool = True) -> http.server.ThreadingHTTPServer:
    """Serve root in a background thread; returns the server (server.server_address has the port).
    isolated=False leaves out the COOP/COEP headers (a page that is not cross-origin isolated)."""
    handler = type("Handler", (Handler,), {"isolated": isolated})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(handler, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent / "_build"))
    a = ap.parse_args()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), functools.partial(Handler, directory=a.root))
    print(f"pyjax playground: http://127.0.0.1:{a.port}/  (serving {a.root}; Ctrl-C to stop)", flush=True)
    httpd.serve_forever()
