#!/usr/bin/python3
"""git_server.py: a forge's git over HTTP, on the loopback, for tests/test_ci.c.

Serves the bare repositories under ROOT read-only with git's smart HTTP protocol (git http-backend, as GitHub and
GitLab speak it: shallow fetches work), at /PATH and /PATH.git alike, as both forges answer. Every request must
carry HTTP Basic credentials whose password is a token granted to the repository's path: a request without them,
or with a token not granted there, gets 401, as a private repository on a forge answers; a granted token on a
repository that does not exist gets 404. Pushes get 403. Beside git, the one REST call actions/checkout makes,
GET /api/v3/repos/OWNER/NAME (a GitHub Enterprise server's API root: the repository's default branch), under the
same grants, with the token as `Authorization: token T` (or Bearer); a refused one gets GitHub's 401 answer,
{"message": "Bad credentials"}.

    git_server.py --root DIR --grant PREFIX=TOKEN [--grant ...] --port-file F --log F [--lifetime S]

PREFIX is a path prefix under ROOT ("school/pplab-kit", "students/"); a request's path gets the tokens of every
prefix it starts with. The port the server bound (on 127.0.0.1, chosen by the kernel) is written to --port-file
once it listens. The log has one line per request: method, path, status, and whether a token was presented
and granted; never a token. The server exits by itself after --lifetime seconds (default 1800), so that a test
that dies cannot leave it running.
"""
import argparse
import base64
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def parse_args():
    p = argparse.ArgumentParser(description="read-only git smart HTTP with per-path tokens")
    p.add_argument("--root", required=True)
    p.add_argument("--grant", action="append", default=[], metavar="PREFIX=TOKEN")
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--lifetime", type=float, default=1800)
    a = p.parse_args()
    grants = []
    for g in a.grant:
        prefix, sep, token = g.partition("=")
        if not sep or not prefix or not token:
            p.error(f"--grant {g!r}: write --grant PREFIX=TOKEN")
        grants.append((prefix.strip("/"), token))
    a.grants = grants
    return a


ARGS = None
LOG_LOCK = threading.Lock()


def log(line):
    with LOG_LOCK, open(ARGS.log, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def credentials(header):
    """The (user, password) of an Authorization header: HTTP Basic (git), or a token alone (`token T` or
    `Bearer T`, the REST API's), as ("token", T); None without one."""
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() in ("token", "bearer") and value.strip():
        return ("token", value.strip())
    if scheme.lower() != "basic":
        return None
    try:
        user, sep, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return (user, password) if sep else None


class Handler(BaseHTTPRequestHandler):
    server_version = "pplab-test-forge"

    def log_message(self, fmt, *args):  # the request log is ours (log()), without the client's address noise
        pass

    def reply(self, status, text, extra=()):
        body = (text + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def json(self, status, text):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def api(self, repo):
        """GitHub's REST call GET /repos/OWNER/NAME, which actions/checkout makes for a repository's default
        branch: its default_branch, from the bare repository's HEAD."""
        bare = os.path.join(ARGS.root, repo + ".git")
        if self.command != "GET" or repo.count("/") != 1 or not os.path.isdir(bare):
            log(f"{self.command} /api/v3/repos/{repo} 404 (a granted token)")
            self.json(404, '{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}')
            return
        head = subprocess.run(["git", "--git-dir", bare, "symbolic-ref", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or "main"
        log(f"GET /api/v3/repos/{repo} 200 (a granted token)")
        self.json(200, '{"full_name": "%s", "default_branch": "%s", "private": true}' % (repo, head))

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def serve(self):
        path, _, query = self.path.partition("?")
        rel = path.lstrip("/")
        repo = rel[len("api/v3/repos/"):] if rel.startswith("api/v3/repos/") else rel
        tokens = {t for prefix, t in ARGS.grants
                  if repo == prefix or repo.startswith(prefix + "/") or repo.startswith(prefix + ".git/")}
        cred = credentials(self.headers.get("Authorization"))
        presented = "no credentials" if cred is None else "a token"
        if cred is None or not cred[0] or cred[1] not in tokens:
            log(f"{self.command} {path} 401 ({presented}, not granted)")
            if repo != rel:
                self.json(401, '{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}')
            else:
                self.reply(401, "Invalid username or password.",
                           [("WWW-Authenticate", 'Basic realm="pplab test forge"')])
            return
        if rel.startswith("api/v3/repos/"):
            self.api(rel[len("api/v3/repos/"):])
            return
        if "git-receive-pack" in path or "service=git-receive-pack" in query:
            log(f"{self.command} {path} 403 (push refused)")
            self.reply(403, "This forge is read-only.")
            return
        data = self.body() if self.command == "POST" else b""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": os.path.abspath(ARGS.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(data)),
            "REMOTE_USER": cred[0],
            "REMOTE_ADDR": self.client_address[0],
            "SERVER_PROTOCOL": "HTTP/1.0",
        }
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        cgi = subprocess.run(["git", "http-backend"], input=data, env=env, capture_output=True)
        head, sep, payload = cgi.stdout.partition(b"\r\n\r\n")
        if not sep:
            head, sep, payload = cgi.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.strip().split()[0])
            elif k:
                headers.append((k, v.strip()))
        if not sep:
            status, payload, headers = 500, cgi.stderr or b"git http-backend wrote no headers", []
        log(f"{self.command} {path} {status} (a granted token)")
        self.send_response(status)
        for k, v in headers:
            if k.lower() != "content-length":
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = serve
    do_POST = serve


def main():
    global ARGS
    ARGS = parse_args()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{httpd.server_address[1]}\n")
    os.rename(tmp, ARGS.port_file)
    timer = threading.Timer(ARGS.lifetime, httpd.shutdown)
    timer.daemon = True
    timer.start()
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
