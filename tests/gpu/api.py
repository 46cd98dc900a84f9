"""The daemon's HTTP API as the GPU check scripts use it: one JSON call."""
import json
import urllib.error
import urllib.request


def client(base, token, timeout=60):
    """Returns call(method, path, body=None) -> (status, decoded JSON body)."""
    def call(method, path, body=None):
        req = urllib.request.Request(base + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": "Bearer " + token,
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as e:
            return e.code, json.load(e)
    return call
