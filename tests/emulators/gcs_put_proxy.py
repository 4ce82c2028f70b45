#!/usr/bin/env python3
"""A loopback proxy in front of fake-gcs-server for object_store's GCS client.

object_store writes objects with the XML API (PUT /BUCKET/OBJECT), which the
fake-gcs-server release on PyPI refuses. This proxy turns such a PUT into the JSON
API's media upload (POST /upload/storage/v1/b/BUCKET/o?uploadType=media&name=OBJECT)
and answers with the ETag and x-goog-generation headers an XML PUT returns. Every
other request goes through unchanged.

usage: gcs_put_proxy.py LISTEN_PORT UPSTREAM_PORT   (both on 127.0.0.1)
"""
import http.client
import http.server
import json
import sys
import urllib.parse

HOST = "127.0.0.1"
# Hop-by-hop headers, and the length this proxy sets itself. The Host header is kept:
# fake-gcs-server answers XML-API requests only for its public host.
SKIP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length"}


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    upstream_port = 0

    def log_message(self, *args):
        pass

    def _read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status, headers, body):
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in SKIP_HEADERS:
                self.send_header(name, value)
        # A HEAD answer carries the object's size; any other answer its own body's.
        if self.command == "HEAD":
            size = next((v for k, v in headers if k.lower() == "content-length"), "0")
            self.send_header("Content-Length", size)
        else:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _upstream(self, method, path, body, headers):
        conn = http.client.HTTPConnection(HOST, self.upstream_port, timeout=60)
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            conn.close()

    def _forward(self):
        body = self._read_body()
        headers = {k: v for k, v in self.headers.items() if k.lower() not in SKIP_HEADERS}
        if body or self.command in ("PUT", "POST"):
            headers["Content-Length"] = str(len(body))
        self._send(*self._upstream(self.command, self.path, body, headers))

    def do_PUT(self):
        parts = urllib.parse.urlsplit(self.path)
        segments = parts.path.lstrip("/").split("/", 1)
        if len(segments) != 2 or not segments[1] or "x-goog-copy-source" in self.headers:
            return self._forward()
        bucket, name = segments[0], urllib.parse.unquote(segments[1])
        body = self._read_body()
        query = {"uploadType": "media", "name": name}
        match = self.headers.get("x-goog-if-generation-match")
        if match is not None:
            query["ifGenerationMatch"] = match
        path = "/upload/storage/v1/b/%s/o?%s" % (
            urllib.parse.quote(bucket, safe=""), urllib.parse.urlencode(query))
        status, headers, answer = self._upstream("POST", path, body, {
            "Content-Type": self.headers.get("Content-Type", "application/octet-stream"),
            "Content-Length": str(len(body)),
        })
        if status != 200:
            return self._send(status, headers, answer)
        meta = json.loads(answer)
        etag = meta.get("etag") or ('"%s"' % meta.get("md5Hash", "none"))
        self._send(200, [("ETag", etag), ("x-goog-generation", str(meta.get("generation", "1")))], b"")

    do_GET = do_HEAD = do_DELETE = do_POST = _forward


def main():
    listen, upstream = int(sys.argv[1]), int(sys.argv[2])
    Proxy.upstream_port = upstream
    http.server.ThreadingHTTPServer((HOST, listen), Proxy).serve_forever()


if __name__ == "__main__":
    main()
