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


def job_runner(call, uuid):
    """Returns submit(kind, params=None) -> job id and wait(job_id, limit_s)
    -> the finished job, for jobs on the device uuid; both exit the script
    with the reason when the daemon refuses or a job does not finish."""
    import sys
    import time

    def submit(kind, params=None):
        body = {"kind": kind, "device": uuid}
        if params:
            body["params"] = params
        status, job = call("POST", "/api/v1/jobs", body)
        if status != 202:
            sys.exit(f"submitting {kind}: {status} {job}")
        return job["id"]

    def wait(job_id, limit_s=600):
        t0 = time.time()
        while time.time() - t0 < limit_s:
            _, job = call("GET", f"/api/v1/jobs/{job_id}")
            if job["state"] in ("succeeded", "failed", "cancelled"):
                return job
            time.sleep(0.5)
        sys.exit(f"job {job_id} did not finish in {limit_s} s")

    return submit, wait
