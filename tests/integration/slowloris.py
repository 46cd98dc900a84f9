#!/usr/bin/env python3
"""Slow clients against a gpuprobe daemon, for tests/integration/t_slowloris.sh.

Usage: slowloris.py PORT TOKEN MAX_CONN MAX_PER_IP REQUEST_TIMEOUT_S BODY_MIN_RATE

The daemon must run on 127.0.0.1:PORT with those limits. Every phase
prints what it measured; the exit status is 1 when any fails:
  over-ip     a client over the per-address limit gets 503 problem+json
              with Retry-After and Connection: close, not a silent close;
  over-total  so does one over the connection limit while every admitted
              connection is too young to be evicted;
  headers     a request whose header bytes trickle in is closed at its
              deadline in total time, not kept alive by each byte;
  body        a body trickled far under the least rate is closed likewise;
  slowloris   slow clients from 127.0.0.2..9, more than the daemon's
              connection limit, trickling a header byte every half second
              and reconnecting whenever closed, while a fresh client from
              127.0.0.1 and one from 127.0.0.10 each ask GET /healthz every
              half second: every one of their requests is answered 200
              within 1 s.
"""
import selectors
import socket
import sys
import threading
import time

PORT = int(sys.argv[1])
TOKEN = sys.argv[2]
MAX_CONN, MAX_PER_IP = int(sys.argv[3]), int(sys.argv[4])
REQUEST_TIMEOUT_S, BODY_MIN_RATE = float(sys.argv[5]), float(sys.argv[6])
REAP_S = 0.1  # the guard's reaper period (server/http/conn_guard.h)
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def connect(src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", PORT))
    return s


def read_answer(s, limit_s):
    """The whole answer (the server closes after it), or what came by limit_s."""
    s.settimeout(limit_s)
    data = b""
    end = time.monotonic() + limit_s
    try:
        while time.monotonic() < end:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    return data


def ask(src, path="/healthz", limit_s=1.0):
    """GET path from src with Connection: close: (status, headers, body, seconds)."""
    t0 = time.monotonic()
    try:
        s = connect(src)
        s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        data = read_answer(s, limit_s)
        s.close()
    except OSError as e:
        return 0, {}, str(e), time.monotonic() - t0
    took = time.monotonic() - t0
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        return 0, {}, data[:200].decode("latin-1"), took
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body.decode("utf-8", "replace"), took


def closed_after(s, trickle, every_s, limit_s):
    """Sends trickle's bytes one every every_s until the server closes s;
    the seconds that took, or None if still open after limit_s."""
    t0 = time.monotonic()
    s.setblocking(False)
    i = 0
    while time.monotonic() - t0 < limit_s:
        try:
            if s.recv(4096) == b"":
                return time.monotonic() - t0
        except BlockingIOError:
            pass
        except OSError:
            return time.monotonic() - t0
        try:
            s.send(trickle[i % len(trickle):i % len(trickle) + 1])
        except OSError:
            return time.monotonic() - t0
        i += 1
        time.sleep(every_s)
    return None


def assert_over(status, headers, body, what):
    check(status == 503, f"{what}: status {status} (want 503)")
    check(headers.get("content-type", "").startswith("application/problem+json"),
          f"{what}: content-type {headers.get('content-type')!r}")
    check(headers.get("retry-after", "").isdigit(), f"{what}: retry-after {headers.get('retry-after')!r}")
    check(headers.get("connection", "").lower() == "close", f"{what}: connection {headers.get('connection')!r}")
    check('"status": 503' in body or '"status":503' in body, f"{what}: problem body {body[:120]!r}")


def admitted(src, what):
    """A connection from src that the daemon has admitted: it asks for
    /healthz, keeping the connection alive, and has its 200 before the next
    is made. The daemon's pool threads accept concurrently, so of two
    connections made one after the other the second may reach the
    connection guard first: without the answer, a held connection could be
    the one over the limit and the asking one admitted in its place. A
    kept-alive connection waits for its next request from the end of that
    answer, so it is as young as a fresh one."""
    s = connect(src)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
    s.settimeout(2)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v.strip())
    while len(body) < length:
        chunk = s.recv(4096)
        if not chunk:
            break
        body += chunk
    status = lines[0].split()[1] if len(lines[0].split()) > 1 else "none"
    if status != "200":
        check(False, f"{what}: a held connection from {src} was not admitted (status {status})")
    return s


def phase_over_ip():
    kept = [admitted("127.0.0.12", "over-ip") for _ in range(MAX_PER_IP)]
    status, headers, body, took = ask("127.0.0.12")
    assert_over(status, headers, body, f"over-ip ({MAX_PER_IP} open from 127.0.0.12, {took:.3f} s)")
    status, _, _, took = ask("127.0.0.1")
    check(status == 200, f"over-ip: another address is served meanwhile (status {status}, {took:.3f} s)")
    for s in kept:
        s.close()


def phase_over_total():
    kept = [admitted(f"127.0.0.{13 + i // MAX_PER_IP}", "over-total") for i in range(MAX_CONN)]
    status, headers, body, took = ask("127.0.0.40")
    assert_over(status, headers, body, f"over-total ({MAX_CONN} young connections open, {took:.3f} s)")
    for s in kept:
        s.close()


def phase_deadlines():
    """The header trickle and the body trickle, side by side."""
    out = {}

    def headers():
        s = connect("127.0.0.11")
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
        out["headers"] = closed_after(s, b"X-Slow: aaaaaaaaaaaaaaaaaaaaaa\r\n", 0.25, REQUEST_TIMEOUT_S + 5)
        s.close()

    def body():
        s = connect("127.0.0.11")
        s.sendall(("POST /api/v1/jobs HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                   "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n" % TOKEN).encode())
        # 4 bytes a second, far under the least rate
        out["body"] = closed_after(s, b"[" + b" " * 99, 0.25, REQUEST_TIMEOUT_S + 5)
        s.close()

    threads = [threading.Thread(target=f) for f in (headers, body)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    h, b = out["headers"], out["body"]
    check(h is not None and REQUEST_TIMEOUT_S - 0.3 <= h <= REQUEST_TIMEOUT_S + 1.0,
          f"headers: a header byte every 0.25 s is closed after {h if h is None else round(h, 2)} s "
          f"(deadline {REQUEST_TIMEOUT_S} s in total time)")
    # the body's deadline: the grace plus its few bytes at the least rate
    check(b is not None and REQUEST_TIMEOUT_S - 0.3 <= b <= REQUEST_TIMEOUT_S + 1.5,
          f"body: 4 bytes a second is closed after {b if b is None else round(b, 2)} s "
          f"(grace {REQUEST_TIMEOUT_S} s, least rate {BODY_MIN_RATE:.0f} B/s)")


def phase_slowloris(duration_s=8.0, per_ip=None):
    per_ip = per_ip or MAX_PER_IP
    sources = [f"127.0.0.{i}" for i in range(2, 10)]
    sel = selectors.DefaultSelector()
    socks = {}
    stats = {"opened": 0, "closed_by_server": 0, "open_max": 0}
    stop = threading.Event()

    def open_one(src):
        try:
            s = connect(src)
        except OSError:
            return
        s.setblocking(False)
        try:
            s.send(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
        except OSError:
            s.close()
            return
        socks[s] = src
        sel.register(s, selectors.EVENT_READ)
        stats["opened"] += 1

    def attack():
        for src in sources:
            for _ in range(per_ip):
                open_one(src)
        while not stop.is_set():
            stats["open_max"] = max(stats["open_max"], len(socks))
            for key, _ in sel.select(timeout=0):
                s = key.fileobj
                try:
                    s.recv(4096)
                except OSError:
                    pass
                # an answer (503) or the end: gone; a slowloris comes back at once
                sel.unregister(s)
                src = socks.pop(s)
                s.close()
                stats["closed_by_server"] += 1
                open_one(src)
            for s in list(socks):
                try:
                    s.send(b"X")
                except OSError:
                    pass
            stop.wait(0.5)
        for s in list(socks):
            sel.unregister(s)
            s.close()

    t = threading.Thread(target=attack)
    t.start()
    time.sleep(1.5)  # every slot taken, the first ones old enough to lose theirs
    asked, worst, bad = 0, 0.0, []
    end = time.monotonic() + duration_s - 1.5
    while time.monotonic() < end:
        for src in ("127.0.0.1", "127.0.0.10"):
            status, _, _, took = ask(src, limit_s=1.0)
            asked += 1
            worst = max(worst, took)
            if status != 200 or took > 1.0:
                bad.append(f"{src}: status {status} after {took:.3f} s")
        time.sleep(0.5)
    stop.set()
    t.join()
    print(f"slowloris: {len(sources)} addresses x {per_ip} sockets, {stats['opened']} opened, "
          f"{stats['closed_by_server']} closed by the daemon, most open at once {stats['open_max']}; "
          f"fresh requests {asked}, slowest {worst:.3f} s", flush=True)
    check(stats["open_max"] > MAX_CONN, f"slowloris: the attack held more sockets ({stats['open_max']}) "
          f"than the connection limit ({MAX_CONN})")
    check(not bad, f"slowloris: every fresh request answered 200 within 1 s ({len(bad)} not: {bad[:3]})")


phase_over_ip()
time.sleep(0.3)
phase_over_total()
time.sleep(0.3)
phase_deadlines()
time.sleep(0.3)
phase_slowloris()
sys.exit(1 if failures else 0)
