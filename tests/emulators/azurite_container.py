#!/usr/bin/env python3
"""Creates a blob container on Azurite, signed with Shared Key (standard library only).

usage: azurite_container.py ENDPOINT ACCOUNT KEY CONTAINER
Exits 0 when the container was created or already exists.
"""
import base64
import hashlib
import hmac
import http.client
import sys
import urllib.parse
from email.utils import formatdate


def main():
    endpoint, account, key, container = sys.argv[1:5]
    target = urllib.parse.urlsplit(endpoint)
    headers = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": "2021-08-06"}
    # Shared Key: the verb, eleven empty standard headers, the x-ms- headers in order,
    # then the canonical resource.
    signed = "PUT\n" + "\n" * 11
    signed += "".join("%s:%s\n" % (k, headers[k]) for k in sorted(headers))
    signed += "/%s/%s/%s\nrestype:container" % (account, account, container)
    mac = hmac.new(base64.b64decode(key), signed.encode(), hashlib.sha256)
    headers["Authorization"] = "SharedKey %s:%s" % (account, base64.b64encode(mac.digest()).decode())
    conn = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
    conn.request("PUT", "/%s/%s?restype=container" % (account, container), body=b"", headers=headers)
    response = conn.getresponse()
    text = response.read().decode(errors="replace")
    if response.status in (201, 409):
        return 0
    print("creating container %s: HTTP %d %s" % (container, response.status, text[:300]), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
