#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/<target>/ from the golden vectors
(tests/vectors/render-ref.json) and a few hand-written keys, times and objects.

Run from anywhere: python3 fuzz/make_corpus.py. It replaces the three corpus folders."""

import base64
import json
import pathlib
import re
import shutil
import struct

FUZZ = pathlib.Path(__file__).resolve().parent
VECTORS = FUZZ.parent.parent / "tests" / "vectors" / "render-ref.json"
# canonical_roundtrip splits its input into objects at this byte.
SEPARATOR = b"\x1e"
REF = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def objects_of(vector):
    if vector.get("objects_b64") is not None:
        return [base64.b64decode(o) for o in vector["objects_b64"]]
    return [o.encode() for o in vector.get("objects") or []]


def safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80]


def write(target, name, data):
    folder = FUZZ / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / safe(name)).write_bytes(data)


def main():
    for target in ["canonical_roundtrip", "decode_encode", "keys"]:
        shutil.rmtree(FUZZ / "corpus" / target, ignore_errors=True)

    vectors = json.loads(VECTORS.read_text())
    decode_categories = {
        "numbers", "strings", "invalid_utf8", "whitespace", "duplicate_keys",
        "structure", "key_order", "k8s_manifest",
    }
    seen = set()
    manifests = 0
    for v in vectors:
        objects = objects_of(v)
        # Every vector, as a render: its objects joined by the separator.
        write("canonical_roundtrip", "vec-" + v["name"], SEPARATOR.join(objects))
        # One object each, for the decoder, skipping the 10,000-level ones (the
        # canonical seeds have them) and all but a few manifests.
        if v["category"] not in decode_categories or len(objects) != 1:
            continue
        obj = objects[0]
        if len(obj) > 4000 or obj in seen:
            continue
        if v["category"] == "k8s_manifest":
            manifests += 1
            if manifests > 4:
                continue
        seen.add(obj)
        write("decode_encode", "vec-" + v["name"], obj)

    hand_objects = {
        "pretty": b'{\n  "a": {\n    "x": []\n  },\n  "b": [\n    1,\n    {}\n  ]\n}',
        "neg-zero-nested": b'{"a":[-0.0,{"b":-0.0}],"c":-0,"d":"-0"}',
        "surrogates": b'{"a":"\\ud83d\\ude00","b":"\\ude00\\ud83d","c":"\\ud800\\u0041"}',
        "line-separators": '{"\u2028":"\u2029 <&> \u00e9 \\u2028"}'.encode(),
        "controls": b'{"c":"\\u0000\\u001f\\b\\f\\n\\r\\t\\"\\\\\\/\\u007f"}',
        "numbers-edges": b'{"a":9223372036854775807,"b":-9223372036854775808,'
        b'"c":9223372036854775808,"d":1e21,"e":1e-7,"f":5e-324,"g":1.7976931348623157e308}',
        "duplicates-after-replacement": b'{"\xff":1,"\xfe":2,"\\ufffd":3}',
        "long-string": b'{"s":"' + b"abcdefghijklmnop" * 8 + b'<' + b"q" * 20 + b'"}',
    }
    for name, obj in hand_objects.items():
        write("decode_encode", "hand-" + name, obj)
    write(
        "canonical_roundtrip",
        "hand-neg-zero-render",
        SEPARATOR.join([b'{"n":-0.0}', b'{"n":-0}', b'{"n":[-0.0]}']),
    )
    # Secrets the people's forms mask: values, a last-applied annotation, a List.
    applied = json.dumps({"apiVersion": "v1", "kind": "Secret", "data": {"p": "eA=="}})
    write(
        "canonical_roundtrip",
        "hand-secrets-render",
        SEPARATOR.join([
            json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": applied}},
                "data": {"p": "eA=="}, "stringData": {"q": "y"}}).encode(),
            json.dumps({"apiVersion": "v1", "kind": "List", "items": [
                {"apiVersion": "v1", "kind": "Secret", "data": "not a map"}]}).encode(),
            b'{"apiVersion":"v1","kind":"Secret","metadata":{"annotations":'
            b'{"kubectl.kubernetes.io/last-applied-configuration":7}}}',
        ]),
    )

    # keys: lines are namespace, name, then keys; whole text and each line are also
    # tried as names, renderRefs and times; the first 12 bytes are a SyncTime.
    keys = {
        "history-key": f"ns\napp\nns/app/history/20231114T221320.000000005Z-{REF}",
        "render-key": f"ns\napp\nns/app/renders/{REF}",
        "foreign-keys": f"ns\napp\nns/app/renders/{REF}.tmp\nns/app/history/2023-{REF}\n"
        f"ns/app/history/20231114T221320.000000005Z-{REF}-x\nns/app2/renders/{REF}",
        "other-release": f"prod\nweb.v2\nprod/web/history/20231114T221320.000000005Z-{REF}",
        "names-long": "a" * 63 + "\n" + "a" * 126 + "." + "b" * 126 + "\nx",
        "names-too-long": "a" * 64 + "\n" + "a" * 254 + "\nx",
        "names-bad": "-a\na..b\nApp\n%2F\n.\n",
        "render-refs": f"{REF}\n{REF.upper()}\n{REF[:70]}\n{REF}0\n"
        + REF.replace("sha256:", "sha512:"),
        "key-times": "19700101T000000.000000000Z\n20000229T000000.000000000Z\n"
        "00000101T000000.000000000Z\n99991231T235959.999999999Z",
        "key-times-bad": "20231314T221320.000000000Z\n20230230T221320.000000000Z\n"
        "20231114T241320.000000000Z\n20231114X221320.000000000Z\n20231114T221320.00000000Z",
        "rfc3339": "2023-11-14T23:13:20.5+01:00\n2023-11-14T22:13:20.5Z\n"
        "1970-01-01T00:00:00Z\n1970-01-01T00:00:00.00000012Z",
        "rfc3339-edges": "9999-12-31T23:59:59-01:00\n0000-01-01T00:00:00+01:00\n"
        "0000-01-01T00:30:00+00:30\n9999-12-31T23:59:59.999999999Z",
        "rfc3339-bad": "2023-11-14 22:13:20Z\n2023-11-14T22:13:20\n2023-11-14T22:13:20.Z\n"
        "2023-11-14T22:13:20.1234567890Z\n2023-11-14T22:13:20Zx\n2023-02-29T22:13:20Z\n"
        "2023-11-14T22:13:20+24:00\n2023-11-14T22:13:60Z",
        "rfc3339-zeros": "2024-02-29T12:00:00.100000000Z\n2024-02-29T12:00:00.000000000+00:00",
        "non-ascii": "nś\napp\nns/app/history/2023111４T221320.000000005Z-" + REF,
    }
    for name, text in keys.items():
        write("keys", name, text.encode())
    # SyncTimes at the edges of 0000-9999, as the first 12 bytes.
    for name, seconds, nanos in [
        ("time-max", 253_402_300_799, 999_999_999),
        ("time-past-max", 253_402_300_800, 0),
        ("time-min", -62_167_219_200, 0),
        ("time-before-min", -62_167_219_201, 999_999_999),
        ("time-bad-nanos", 1_700_000_000, 1_000_000_000),
    ]:
        write("keys", name, struct.pack("<qI", seconds, nanos) + b"\nns\napp")


if __name__ == "__main__":
    main()
