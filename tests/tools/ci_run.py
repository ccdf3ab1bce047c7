#!/usr/bin/python3
"""ci_run.py: runs one job of a GitHub Actions workflow or a GitLab CI file on this machine, the way its platform
runs it, for tests/test_ci.c. The CI file is read from the repository the job runs for, over git, as the
platform reads it; repositories come from a forge's URL (tests/tools/git_server.py stands for one).

    ci_run.py github --server URL --repository OWNER/NAME --workflow PATH --job ID --event EVENT --token TOKEN
                     [--secret K=V]... [--var K=V]... [--input K=V]... [--forbid-secrets] --work DIR
    ci_run.py gitlab --server URL --project GROUP/NAME --job NAME --source SOURCE --job-token TOKEN
                     [--var K=V]... --work DIR

Exit status: 0 the job succeeded, 1 it failed, 2 the CI file uses something this runner does not emulate (named on
stderr) or the command line is wrong, 4 the job is not in a pipeline of that source (GitLab's rules leave it out).
Under DIR: the job's folders (GitHub: workspace/, GITHUB_WORKSPACE; GitLab: builds/GROUP/NAME, CI_PROJECT_DIR),
artifacts/ (GitHub: artifacts/NAME/..., one folder per upload-artifact; GitLab: artifacts/ with the job's paths
and reports), junit/ (GitLab: the JUnit reports it parsed, at their paths), summary.md (GitHub's job summary, every step's
GITHUB_STEP_SUMMARY), temp/ and home/ (RUNNER_TEMP and HOME).

GitHub, emulated: `on` (push, pull_request, workflow_dispatch with its inputs' defaults, schedule), `env` at
workflow, job and step level, `defaults.run.shell` and a step's `shell` (unspecified: `bash -e {0}`; bash:
`bash --noprofile --norc -eo pipefail {0}`; sh: `sh -e {0}`), `working-directory`, `if` (success(), failure(),
always(), cancelled(), !cancelled()), `continue-on-error`, `timeout-minutes` (job and step), the expressions
${{ secrets.X }}, ${{ vars.X }}, ${{ env.X }}, ${{ inputs.X }}, ${{ github.server_url }}, ${{ github.workspace }},
${{ github.repository }}, ${{ github.event_name }}, ${{ github.sha }}, ${{ github.ref }}, ${{ github.token }},
${{ runner.temp }}, ${{ runner.os }} (a secret or variable that is not set is the empty string, as there); the files
GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY; `sudo` (a shim: every step already runs as root;
sudo's reset environment is kept); actions/checkout@v4 with git as the action runs it (repository, ref, token,
path, persist-credentials, fetch-depth, clean, show-progress; the default branch from the REST API's
GET /repos/OWNER/NAME, under /api/v3 as on a GitHub Enterprise server; its credentials as the action writes them, the
header `AUTHORIZATION: basic base64(x-access-token:TOKEN)` in http.<server>/.extraheader of the checkout's
.git/config, removed after the fetch when persist-credentials is false); actions/upload-artifact@v4 (name, path
with globs and the least common folder as the artifact's root, hidden files left out, if-no-files-found,
overwrite; retention-days and compression-level accepted).
GitLab, emulated: the runner's clone of the project into CI_PROJECT_DIR with the job token (GIT_DEPTH,
GIT_STRATEGY), `variables` (global, job, and the project's CI/CD variables given with --var, which win; $VAR in a
value expanded as GitLab does), `default` (image, before_script, after_script, timeout), `stages`, a job's
`stage`, `image` (debian:bookworm only: this machine stands for it), `before_script`, `script` and `after_script`
(script lines in one bash with errexit and pipefail, each echoed as `$ LINE` first, as the runner's bash shell
does; after_script in a shell of its own, its failure not the job's), `rules` (`if` with ==, !=, &&, || and
parentheses over $VARIABLES and strings, `exists` with globs, `when` never/on_success/always), `timeout`,
`artifacts` (paths, when, expire_in, name, reports: junit), `tags`, and the predefined variables CI, GITLAB_CI,
CI_SERVER_URL, CI_SERVER_HOST, CI_SERVER_PORT, CI_SERVER_PROTOCOL, CI_PROJECT_DIR, CI_PROJECT_PATH,
CI_PROJECT_NAME, CI_PROJECT_NAMESPACE, CI_PROJECT_URL, CI_JOB_TOKEN, CI_JOB_NAME, CI_JOB_STAGE, CI_JOB_ID,
CI_PIPELINE_ID, CI_PIPELINE_SOURCE, CI_COMMIT_SHA, CI_COMMIT_SHORT_SHA, CI_COMMIT_BRANCH, CI_COMMIT_REF_NAME,
CI_DEFAULT_BRANCH, CI_REPOSITORY_URL, CI_BUILDS_DIR.

Refused, naming what: every key, expression, action, image, shell or rule this runner does not know, and a key
given twice. Not emulated, by design: secrets are not masked in the log (a template that prints one fails the
test, where the platform would print *** or [MASKED]); a checkout's post-job cleanup (what a step left in
.git/config is what the job's later steps saw); the checkout's retries after a failed fetch; the runner's user
(every step runs as root: GitHub's runs as its user with sudo, GitLab's Docker image as root); packages the image
lacks (the job runs on this machine, Debian 12, with what it has installed).
"""
import argparse
import base64
import fnmatch
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
import xml.dom.minidom

import yaml

EXIT_OK, EXIT_FAILED, EXIT_REFUSED, EXIT_NOT_IN_PIPELINE = 0, 1, 2, 4
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class Refused(Exception):
    """The CI file uses something this runner does not emulate: the run stops before the job starts."""


def say(line):
    print(line, flush=True)


# ---- YAML: a loader that refuses a key given twice (both platforms refuse such a file) -------------------------
class StrictLoader(yaml.SafeLoader):
    pass


def _mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise Refused(f"line {key_node.start_mark.line + 1}: the key {key!r} is given twice")
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load_yaml(text, name):
    try:
        doc = yaml.load(text, Loader=StrictLoader)
    except yaml.YAMLError as e:
        raise Refused(f"{name} is not valid YAML: {e}")
    if not isinstance(doc, dict):
        raise Refused(f"{name}: the file is not a mapping of keys")
    return doc


def check_keys(mapping, known, where):
    if not isinstance(mapping, dict):
        raise Refused(f"{where}: expected a mapping, got {type(mapping).__name__}")
    for k in mapping:
        if k not in known:
            raise Refused(f"{where}: the key {k!r} is not emulated (known here: {', '.join(sorted(known))})")


def scalar(v):
    """A YAML scalar as the platforms hand it to a program: true/false, numbers as written, null as empty."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, str)):
        return str(v)
    raise Refused(f"expected a string, got {type(v).__name__}: {v!r}")


def pairs(items, what):
    out = {}
    for item in items:
        k, sep, v = item.partition("=")
        if not sep or not k:
            raise SystemExit(f"ci_run.py: {what} {item!r}: write {what} NAME=VALUE")
        out[k] = v
    return out


# ---- processes --------------------------------------------------------------------------------------------------
def run_process(argv, cwd, env, timeout_s, stdin=subprocess.DEVNULL):
    """Runs argv with its output (stdout and stderr, interleaved) into ours, as a runner's log has it, in a session
    of its own (no terminal: git cannot prompt, as on a runner); returns its exit status, or None past timeout_s
    (its whole process group killed)."""
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    deadline = time.monotonic() + timeout_s
    os.set_blocking(p.stdout.fileno(), False)
    while True:
        chunk = None
        try:
            chunk = p.stdout.read()
        except BlockingIOError:
            pass
        if chunk:
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
        if p.poll() is not None:
            rest = p.stdout.read()
            if rest:
                sys.stdout.buffer.write(rest)
                sys.stdout.flush()
            return p.returncode
        if time.monotonic() > deadline:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            return None
        time.sleep(0.02)


def git(args, cwd, env, show=None, check=True):
    """git as a runner or an action runs it: the command line shown (show replaces what must not be shown), its
    output into the log. Returns the exit status; raises when check and it failed."""
    say(f"[command]git {show if show is not None else ' '.join(args)}")
    rc = run_process(["git"] + args, cwd, env, 600)
    if check and rc != 0:
        raise JobStepFailed(f"git exited {rc}")
    return rc


def git_output(args, cwd, env):
    r = subprocess.run(["git"] + args, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       start_new_session=True)
    return r.returncode, r.stdout, r.stderr


class JobStepFailed(Exception):
    pass


def git_env(home):
    # what the runner's and the action's git see: no terminal prompt, no system or user configuration of this
    # machine's (the job's HOME is its own)
    return {"PATH": BASE_PATH, "HOME": home, "LANG": "C.UTF-8", "GIT_TERMINAL_PROMPT": "0",
            "GCM_INTERACTIVE": "Never", "GIT_CONFIG_NOSYSTEM": "1"}


def basic(user, token):
    return base64.b64encode(f"{user}:{token}".encode()).decode()


def origin_of(url):
    m = re.match(r"^(https?://[^/]+)", url)
    if not m:
        raise SystemExit(f"ci_run.py: --server {url!r}: write http://HOST:PORT")
    return m.group(1)


def read_file_from_repo(url, header, path, home, what):
    """The CI file as the platform reads it: from the repository's default branch, over git. Returns (text, sha,
    branch)."""
    with tempfile.TemporaryDirectory(dir=home) as tmp:
        env = git_env(home)
        env.update({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"http.{origin_of(url)}/.extraheader",
                    "GIT_CONFIG_VALUE_0": header})
        rc, out, err = git_output(["clone", "--quiet", "--depth", "1", "--no-checkout", url, tmp], home, env)
        if rc != 0:
            raise SystemExit(f"ci_run.py: cannot read {what} from {url}: {err.strip()}")
        rc, text, err = git_output(["show", f"HEAD:{path}"], tmp, env)
        if rc != 0:
            raise SystemExit(f"ci_run.py: {url} has no {path} on its default branch: {err.strip()}")
        sha = git_output(["rev-parse", "HEAD"], tmp, env)[1].strip()
        branch = git_output(["symbolic-ref", "--short", "HEAD"], tmp, env)[1].strip() or "main"
        return text, sha, branch


def copy_matches(patterns, root, where, include_hidden=True):
    """The files that the glob patterns (relative to root; a folder stands for everything under it) name."""
    found = []
    for pat in patterns:
        if os.path.isabs(pat) or ".." in pat.split("/"):
            raise Refused(f"{where}: the path {pat!r} leaves the job's folder")
        for m in sorted(glob.glob(os.path.join(root, pat), recursive=True, include_hidden=include_hidden)):
            if os.path.isdir(m) and not os.path.islink(m):
                for dirpath, dirs, files in os.walk(m):
                    if not include_hidden:
                        dirs[:] = [d for d in dirs if not d.startswith(".")]
                    for f in sorted(files):
                        if include_hidden or not f.startswith("."):
                            found.append(os.path.join(dirpath, f))
            elif os.path.isfile(m):
                found.append(m)
    return sorted(set(found))


# =================================================================================================================
# GitHub Actions
# =================================================================================================================
GH_EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)
GH_NAME = r"[A-Za-z_][A-Za-z0-9_-]*"
CONDITIONS = ("success()", "failure()", "always()", "cancelled()", "!cancelled()")


class GitHub:
    def __init__(self, a):
        self.a = a
        self.work = os.path.abspath(a.work)
        self.ws = os.path.join(self.work, "workspace")
        self.temp = os.path.join(self.work, "temp")
        self.home = os.path.join(self.work, "home")
        self.shims = os.path.join(self.work, "shims")
        self.artifacts = os.path.join(self.work, "artifacts")
        self.summary = os.path.join(self.work, "summary.md")
        self.server = a.server.rstrip("/")
        self.secrets = pairs(a.secret, "--secret")
        self.secrets.setdefault("GITHUB_TOKEN", a.token)
        self.vars = pairs(a.var, "--var")
        self.inputs_given = pairs(a.input, "--input")
        self.inputs = {}
        self.env_file_vars = {}
        self.extra_path = []
        self.failed = False

    # ---- expressions ----
    def lookup(self, expr, env, where):
        m = re.fullmatch(rf"(secrets|vars|env|inputs)\.({GH_NAME})", expr)
        if m:
            ctx, name = m.groups()
            if ctx == "secrets":
                if self.a.forbid_secrets:
                    raise Refused(f"{where}: ${{{{ {expr} }}}}: this repository holds no secrets (--forbid-secrets)")
                return self.secrets.get(name, "")
            if ctx == "vars":
                return self.vars.get(name, "")
            if ctx == "env":
                return env.get(name, "")
            if name not in self.inputs:
                raise Refused(f"{where}: ${{{{ {expr} }}}}: {name} is not an input of the workflow's "
                              f"workflow_dispatch")
            return self.inputs[name]
        github = {"server_url": self.server, "workspace": self.ws, "repository": self.a.repository,
                  "event_name": self.a.event, "sha": self.sha, "ref": f"refs/heads/{self.branch}",
                  "token": self.a.token}
        m = re.fullmatch(r"github\.([a-z_]+)", expr)
        if m and m.group(1) in github:
            return github[m.group(1)]
        if expr == "runner.temp":
            return self.temp
        if expr == "runner.os":
            return "Linux"
        raise Refused(f"{where}: the expression ${{{{ {expr} }}}} is not emulated")

    KNOWN_EXPR = re.compile(rf"(secrets|vars|env|inputs)\.{GH_NAME}|github\.(server_url|workspace|repository|"
                            r"event_name|sha|ref|token)|runner\.(temp|os)")

    def check_exprs(self, node, where):
        """Every ${{ }} of the file, wherever it stands, is one this runner evaluates: checked before the job runs,
        as the platform checks the file before it starts one."""
        if isinstance(node, dict):
            for k, v in node.items():
                self.check_exprs(v, f"{where}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                self.check_exprs(v, f"{where}[{i}]")
        elif isinstance(node, str):
            for m in GH_EXPR.finditer(node):
                e = m.group(1).strip()
                if not self.KNOWN_EXPR.fullmatch(e) and not (where.endswith(".if") and e in CONDITIONS):
                    raise Refused(f"{where}: the expression ${{{{ {e} }}}} is not emulated")
                if self.a.forbid_secrets and e.startswith("secrets."):
                    raise Refused(f"{where}: ${{{{ {e} }}}}: this repository holds no secrets (--forbid-secrets)")

    def expand(self, value, env, where):
        text = scalar(value)
        return GH_EXPR.sub(lambda m: self.lookup(m.group(1).strip(), env, where), text)

    def condition(self, cond, where):
        if cond is None:
            return not self.failed
        c = scalar(cond).strip()
        m = re.fullmatch(r"\$\{\{(.*)\}\}", c, re.S)
        if m:
            c = m.group(1).strip()
        table = dict(zip(CONDITIONS, (not self.failed, self.failed, True, False, True)))
        if c not in table:
            raise Refused(f"{where}: the condition if: {scalar(cond)!r} is not emulated (known: {', '.join(table)})")
        return table[c]

    # ---- the workflow ----
    def load(self):
        header = f"AUTHORIZATION: basic {basic('x-access-token', self.a.token)}"
        url = f"{self.server}/{self.a.repository}"
        text, self.sha, self.branch = read_file_from_repo(url, header, self.a.workflow, self.home,
                                                          f"the workflow {self.a.workflow}")
        wf = load_yaml(text, self.a.workflow)
        if True in wf:  # YAML 1.1 reads the key `on` as true, as GitHub's own parser does not
            wf["on"] = wf.pop(True)
        check_keys(wf, {"name", "on", "env", "jobs", "permissions", "defaults", "run-name"}, self.a.workflow)
        self.check_events(wf.get("on"))
        self.check_exprs(wf, self.a.workflow)
        self.wf = wf
        jobs = wf.get("jobs")
        if not isinstance(jobs, dict) or self.a.job not in jobs:
            raise Refused(f"{self.a.workflow}: no job {self.a.job!r} (jobs: {', '.join(jobs or {})})")
        job = jobs[self.a.job]
        where = f"{self.a.workflow}: job {self.a.job}"
        check_keys(job, {"name", "runs-on", "timeout-minutes", "env", "steps", "permissions", "defaults"}, where)
        runs_on = scalar(job.get("runs-on"))
        if not runs_on.startswith("ubuntu-"):
            raise Refused(f"{where}: runs-on {runs_on!r}: this machine stands for an ubuntu-* runner only")
        self.job = job
        self.wf_shell = self.default_shell(wf.get("defaults"), self.a.workflow)
        self.job_shell = self.default_shell(job.get("defaults"), where)

    def check_events(self, on):
        where = f"{self.a.workflow}: on"
        if isinstance(on, str):
            on = {on: None}
        elif isinstance(on, list):
            on = {e: None for e in on}
        check_keys(on, {"push", "pull_request", "workflow_dispatch", "schedule"}, where)
        if self.a.event not in on:
            raise Refused(f"{where}: the workflow does not run on {self.a.event} (it runs on {', '.join(on)})")
        for ev, spec in on.items():
            if ev in ("push", "pull_request") and spec not in (None, {}):
                raise Refused(f"{where}.{ev}: filters are not emulated: {spec!r}")
            if ev == "schedule":
                if not isinstance(spec, list) or not all(isinstance(s, dict) and set(s) == {"cron"} for s in spec):
                    raise Refused(f"{where}.schedule: write a list of {{cron: ...}}")
            if ev == "workflow_dispatch" and spec is not None:
                check_keys(spec, {"inputs"}, f"{where}.workflow_dispatch")
                for name, inp in (spec.get("inputs") or {}).items():
                    check_keys(inp, {"description", "default", "required", "type", "options"},
                               f"{where}.workflow_dispatch.inputs.{name}")
                    if scalar(inp.get("type", "string")) not in ("string", "choice", "boolean"):
                        raise Refused(f"{where}.workflow_dispatch.inputs.{name}: type {inp['type']!r} not emulated")
                    if self.a.event == "workflow_dispatch":
                        self.inputs[name] = self.inputs_given.pop(name, scalar(inp.get("default", "")))
                    else:
                        self.inputs[name] = ""
        if self.inputs_given:
            raise SystemExit(f"ci_run.py: --input {', '.join(self.inputs_given)}: not an input of the workflow")

    def default_shell(self, defaults, where):
        if defaults is None:
            return None
        check_keys(defaults, {"run"}, f"{where}: defaults")
        check_keys(defaults["run"], {"shell"}, f"{where}: defaults.run")
        return scalar(defaults["run"].get("shell"))

    # ---- the job ----
    def base_env(self):
        env = {"PATH": ":".join(self.extra_path + [self.shims, BASE_PATH]), "HOME": self.home, "LANG": "C.UTF-8",
               "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": self.ws,
               "GITHUB_SERVER_URL": self.server, "GITHUB_REPOSITORY": self.a.repository,
               "GITHUB_REPOSITORY_OWNER": self.a.repository.split("/")[0], "GITHUB_EVENT_NAME": self.a.event,
               "GITHUB_SHA": self.sha, "GITHUB_REF": f"refs/heads/{self.branch}", "GITHUB_REF_NAME": self.branch,
               "GITHUB_RUN_ID": "1", "GITHUB_RUN_NUMBER": "1", "GITHUB_JOB": self.a.job, "RUNNER_OS": "Linux",
               "RUNNER_TEMP": self.temp, "RUNNER_ARCH": "X64"}
        return env

    def step_env(self, step, where):
        env = self.base_env()
        for scope, label in ((self.wf.get("env"), "env"), (self.job.get("env"), "job env")):
            for k, v in (scope or {}).items():
                env[k] = self.expand(v, env, f"{where} ({label} {k})")
        env.update(self.env_file_vars)
        for k, v in (step.get("env") or {}).items():
            env[k] = self.expand(v, env, f"{where} (env {k})")
        return env

    def setup(self):
        if os.path.exists(self.work) and os.listdir(self.work):
            raise SystemExit(f"ci_run.py: --work {self.work} is not empty: give a fresh folder")
        for d in (self.ws, self.temp, self.home, self.shims, self.artifacts):
            os.makedirs(d, exist_ok=True)
        open(self.summary, "w").close()
        sudo = os.path.join(self.shims, "sudo")
        with open(sudo, "w") as f:
            f.write("#!/bin/sh\n"
                    "# sudo on GitHub's runner: root without a password; here every step already runs as root.\n"
                    "# sudo's own environment reset (env_reset, secure_path) is kept.\n"
                    'case "$1" in -*) echo "sudo: option $1 is not emulated (tests/tools/ci_run.py)" >&2; exit 1 ;;'
                    ' "") echo "usage: sudo COMMAND" >&2; exit 1 ;; esac\n'
                    f'exec env -i PATH={BASE_PATH} HOME=/root LANG=C.UTF-8 "$@"\n')
        os.chmod(sudo, 0o755)

    def run(self):
        self.setup()
        self.load()
        steps = self.job.get("steps")
        if not isinstance(steps, list) or not steps:
            raise Refused(f"{self.a.workflow}: job {self.a.job}: no steps")
        # every step is checked before the first runs, as the platform validates the file before it starts a job
        for i, step in enumerate(steps):
            self.check_step(step, i)
        job_limit = float(self.job.get("timeout-minutes", 360)) * 60
        start = time.monotonic()
        say(f"ci_run.py: job {self.a.job} of {self.a.workflow} ({self.a.repository}, {self.a.event})")
        for i, step in enumerate(steps):
            where = f"{self.a.workflow}: job {self.a.job}: step {i + 1} ({self.step_name(step)})"
            if not self.condition(step.get("if"), where):
                say(f"::: step {i + 1}: {self.step_name(step)}: skipped")
                continue
            say(f"::: step {i + 1}: {self.step_name(step)}")
            left = job_limit - (time.monotonic() - start)
            limit = min(left, float(step.get("timeout-minutes", 360)) * 60)
            ok = self.run_step(step, where, limit)
            if not ok:
                say(f"::: step {i + 1} failed")
                if scalar(step.get("continue-on-error", False)) != "true":
                    self.failed = True
            if time.monotonic() - start > job_limit:
                say(f"::: the job ran past its timeout-minutes ({job_limit / 60:g}) and was cancelled")
                self.failed = True
                break
        say(f"ci_run.py: job {self.a.job} {'failed' if self.failed else 'succeeded'}")
        return EXIT_FAILED if self.failed else EXIT_OK

    def step_name(self, step):
        return scalar(step.get("name") or (f"Run {step['run'].splitlines()[0]}" if "run" in step else step.get("uses")))

    def check_step(self, step, i):
        where = f"{self.a.workflow}: job {self.a.job}: step {i + 1}"
        check_keys(step, {"name", "id", "if", "run", "uses", "with", "env", "shell", "working-directory",
                          "timeout-minutes", "continue-on-error"}, where)
        if ("run" in step) == ("uses" in step):
            raise Refused(f"{where}: a step has run or uses, one of them")
        if "uses" in step:
            uses = scalar(step["uses"])
            known = {"actions/checkout@v4": CHECKOUT_INPUTS, "actions/upload-artifact@v4": UPLOAD_INPUTS}
            if uses not in known:
                raise Refused(f"{where}: uses {uses!r}: not emulated (known: {', '.join(known)})")
            check_keys(step.get("with") or {}, known[uses], f"{where}: with")
            for k in ("shell", "working-directory"):
                if k in step:
                    raise Refused(f"{where}: {k} goes with run, not uses")
        else:
            self.shell_argv(step, where, "x")
        self.condition(step.get("if"), where)

    def shell_argv(self, step, where, script):
        shell = step.get("shell") or self.job_shell or self.wf_shell
        table = {None: ["bash", "-e", script], "bash": ["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
                 "sh": ["sh", "-e", script]}
        if shell not in table:
            raise Refused(f"{where}: shell {shell!r} is not emulated (known: bash, sh, or none for `bash -e {{0}}`)")
        return table[shell]

    def run_step(self, step, where, limit):
        try:
            env = self.step_env(step, where)
            if "uses" in step:
                with_ = {k: self.expand(v, env, f"{where} (with {k})") for k, v in (step.get("with") or {}).items()}
                if scalar(step["uses"]) == "actions/checkout@v4":
                    return self.checkout(with_)
                return self.upload(with_)
            return self.run_script(step, env, where, limit)
        except JobStepFailed as e:
            say(f"##[error]{e}")
            return False

    def run_script(self, step, env, where, limit):
        run = self.expand(step["run"], env, f"{where} (run)")
        files = {}
        for name in ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
            files[name] = os.path.join(self.temp, f"_runner_file_commands/{name.lower()}_{uuid.uuid4().hex}")
            os.makedirs(os.path.dirname(files[name]), exist_ok=True)
            open(files[name], "w").close()
            env[name] = files[name]
        script = os.path.join(self.temp, f"{uuid.uuid4()}.sh")
        with open(script, "w") as f:
            f.write(run)
        cwd = self.ws
        if step.get("working-directory"):
            cwd = os.path.join(self.ws, self.expand(step["working-directory"], env, where))
        rc = run_process(self.shell_argv(step, where, script), cwd, env, limit)
        self.read_env_file(files["GITHUB_ENV"])
        with open(files["GITHUB_PATH"]) as f:
            self.extra_path = [l.strip() for l in f if l.strip()][::-1] + self.extra_path
        with open(files["GITHUB_STEP_SUMMARY"], "rb") as f:
            text = f.read()
        if len(text) > 1024 * 1024:
            say("##[error]the step's summary is over 1 MiB: the platform drops it")
        elif text:
            with open(self.summary, "ab") as f:
                f.write(text)
        if rc is None:
            say("##[error]the step ran past its time limit and was cancelled")
            return False
        if rc != 0:
            say(f"##[error]Process completed with exit code {rc}.")
        return rc == 0

    def read_env_file(self, path):
        with open(path) as f:
            lines = f.read().splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            if not line:
                continue
            if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
                name, delim = line.split("<<", 1)
                value = []
                while i < len(lines) and lines[i] != delim:
                    value.append(lines[i])
                    i += 1
                i += 1
                self.env_file_vars[name] = "\n".join(value)
            else:
                name, _, value = line.partition("=")
                self.env_file_vars[name] = value

    # ---- actions/checkout@v4 ----
    def checkout(self, w):
        repo = w.get("repository") or self.a.repository
        token = w["token"] if "token" in w else self.a.token
        if not token:
            raise JobStepFailed("Input required and not supplied: token")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
            raise JobStepFailed(f"Invalid repository '{repo}'. Expected format {{owner}}/{{repo}}.")
        path = os.path.normpath(os.path.join(self.ws, w.get("path") or "."))
        if path != self.ws and not path.startswith(self.ws + os.sep):
            raise JobStepFailed(f"Repository path '{path}' is not under '{self.ws}'")
        depth = w.get("fetch-depth") or "1"
        if depth not in ("0", "1"):
            raise Refused(f"actions/checkout@v4: fetch-depth {depth!r}: only 1 (the default) or 0 are emulated")
        persist = (w.get("persist-credentials") or "true").lower()
        if persist not in ("true", "false"):
            raise JobStepFailed(f"persist-credentials: {persist!r} is not a boolean")
        ref = w.get("ref") or (self.sha if repo == self.a.repository else "")
        url = f"{self.server}/{repo}"
        say(f"Syncing repository: {repo}")
        if os.path.isdir(path) and os.listdir(path):
            say(f"Deleting the contents of '{path}'")
            for e in os.listdir(path):
                p = os.path.join(path, e)
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
        os.makedirs(path, exist_ok=True)
        env = git_env(self.home)
        git(["init", "-q", path], path, env)
        git(["remote", "add", "origin", url], path, env)
        key = f"http.{origin_of(self.server)}/.extraheader"
        value = f"AUTHORIZATION: basic {basic('x-access-token', token)}"
        git(["config", "--local", key, value], path, env,
            show=f"config --local {key} AUTHORIZATION: basic ***")
        depth_args = ["--depth=1"] if depth == "1" else []
        if not ref:
            ref = self.default_branch(repo, token)
        if re.fullmatch(r"[0-9a-f]{40}", ref):
            refspec, checkout = f"+{ref}:refs/remotes/origin/{self.branch}", ["checkout", "--force", ref]
        elif ref.startswith("refs/"):
            refspec, checkout = f"+{ref}:{ref}", ["checkout", "--force", ref]
        else:
            rc, out, _ = git_output(["ls-remote", "origin", f"refs/tags/{ref}"], path, env)
            if rc == 0 and out.strip():
                refspec, checkout = f"+refs/tags/{ref}:refs/tags/{ref}", ["checkout", "--force", f"refs/tags/{ref}"]
            else:
                refspec = f"+refs/heads/{ref}:refs/remotes/origin/{ref}"
                checkout = ["checkout", "--force", "-B", ref, f"refs/remotes/origin/{ref}"]
        rc = git(["-c", "protocol.version=2", "fetch", "--no-tags", "--prune", "--no-recurse-submodules"]
                 + depth_args + ["origin", refspec], path, env, check=False)
        if rc != 0:
            raise JobStepFailed(f"The process '/usr/bin/git' failed with exit code {rc}")
        git(checkout + ["-q"], path, env)
        git(["log", "-1", "--format=%H"], path, env)
        if persist == "false":
            git(["config", "--local", "--unset-all", key], path, env)
        return True

    def default_branch(self, repo, token):
        """The repository's default branch as the action asks for it: GitHub's REST API (GET /repos/OWNER/NAME,
        under /api/v3 on a server other than github.com), with the token; its error ends the step as there."""
        say("Determining the default branch")
        url = f"{origin_of(self.server)}/api/v3/repos/{repo}"
        req = urllib.request.Request(url, headers={"Authorization": f"token {token}",
                                                   "Accept": "application/vnd.github+json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                branch = json.load(r)["default_branch"]
        except urllib.error.HTTPError as e:
            try:
                message = json.load(e).get("message", e.reason)
            except ValueError:
                message = e.reason
            say(f"[api] GET {url}: HTTP {e.code}")
            raise JobStepFailed(message)
        say(f"Default branch '{branch}'")
        return branch

    # ---- actions/upload-artifact@v4 ----
    def upload(self, w):
        name = w.get("name") or "artifact"
        patterns = [p.strip() for p in (w.get("path") or "").splitlines() if p.strip()]
        if not patterns:
            raise JobStepFailed("Input required and not supplied: path")
        if any(p.startswith("!") for p in patterns):
            raise Refused("actions/upload-artifact@v4: exclusion patterns (!) are not emulated")
        hidden = (w.get("include-hidden-files") or "false").lower() == "true"
        files = copy_matches(patterns, self.ws, f"upload-artifact {name}", include_hidden=hidden)
        mode = (w.get("if-no-files-found") or "warn").lower()
        if not files:
            msg = f"No files were found with the provided path: {' '.join(patterns)}. No artifacts will be uploaded."
            if mode == "error":
                raise JobStepFailed(msg)
            say(("Warning: " if mode == "warn" else "") + msg)
            return True
        dest = os.path.join(self.artifacts, name)
        if os.path.exists(dest):
            if (w.get("overwrite") or "false").lower() != "true":
                raise JobStepFailed(f"Failed to CreateArtifact: an artifact with this name already exists: {name}")
            shutil.rmtree(dest)
        # the artifact's root: the least common folder of what was found, as the action computes it
        root = os.path.commonpath([os.path.dirname(f) for f in files])
        for f in files:
            rel = os.path.relpath(f, root)
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            shutil.copy2(f, os.path.join(dest, rel))
        say(f"Artifact {name} has {len(files)} file(s): uploaded to {dest}")
        return True


CHECKOUT_INPUTS = {"repository", "ref", "token", "path", "persist-credentials", "fetch-depth", "clean",
                   "show-progress"}
UPLOAD_INPUTS = {"name", "path", "if-no-files-found", "retention-days", "compression-level", "overwrite",
                 "include-hidden-files"}


# =================================================================================================================
# GitLab CI
# =================================================================================================================
GL_GLOBAL = {"default", "stages", "variables", "image", "before_script", "after_script"}
GL_GLOBAL_REFUSED = {"include", "workflow", "services", "cache", "spec", "types"}
GL_DEFAULT = {"image", "before_script", "after_script", "timeout", "tags"}
GL_JOB = {"stage", "image", "script", "before_script", "after_script", "variables", "rules", "artifacts", "timeout",
          "tags", "when"}
GL_IMAGES = {"debian:bookworm", "debian:12"}


def gl_duration(text, where):
    total, rest = 0, scalar(text).strip().lower()
    units = {"h": 3600, "hr": 3600, "hour": 3600, "hours": 3600, "m": 60, "min": 60, "mins": 60, "minute": 60,
             "minutes": 60, "s": 1, "sec": 1, "second": 1, "seconds": 1}
    for n, unit in re.findall(r"(\d+)\s*([a-z]+)", rest):
        if unit not in units:
            raise Refused(f"{where}: timeout {text!r}: unit {unit!r} not emulated")
        total += int(n) * units[unit]
    if not total or re.sub(r"(\d+)\s*([a-z]+)", "", rest).strip():
        raise Refused(f"{where}: timeout {text!r}: write e.g. '20 minutes' or '2h 30m'")
    return total


def gl_expand(value, env):
    """$VAR and ${VAR} in a variable's value, as GitLab expands them ($$ is a dollar)."""
    def sub(m):
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1) or m.group(2), "")
    return re.sub(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", sub, value)


class RuleExpr:
    """GitLab's rules:if over variables: $VAR, "string", 'string', null, ==, !=, &&, ||, ( )."""
    TOKEN = re.compile(r"\s*(?:(\$[A-Za-z_][A-Za-z0-9_]*)|\"([^\"]*)\"|'([^']*)'|(==|!=|&&|\|\||\(|\))|(null))")

    def __init__(self, text, env, where):
        self.text, self.env, self.where = text, env, where
        self.toks, pos = [], 0
        text = text.rstrip()
        while pos < len(text):
            m = self.TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise Refused(f"{where}: rules if {self.text!r}: not emulated from {text[pos:]!r}")
            var, s1, s2, op, null = m.groups()
            self.toks.append(("var", var[1:]) if var else ("str", s1 if s1 is not None else s2) if (
                s1 is not None or s2 is not None) else ("op", op) if op else ("null", None))
            pos = m.end()
        self.i = 0

    def value(self):
        kind, v = self.toks[self.i]
        self.i += 1
        if kind == "var":
            return self.env.get(v)
        if kind in ("str", "null"):
            return v
        if v == "(":
            r = self.disj()
            self.expect(")")
            return r
        raise Refused(f"{self.where}: rules if {self.text!r}: unexpected {v!r}")

    def expect(self, op):
        if self.i >= len(self.toks) or self.toks[self.i] != ("op", op):
            raise Refused(f"{self.where}: rules if {self.text!r}: expected {op!r}")
        self.i += 1

    def peek(self):
        return self.toks[self.i][1] if self.i < len(self.toks) and self.toks[self.i][0] == "op" else None

    def comparison(self):
        left = self.value()
        if self.peek() in ("==", "!="):
            op = self.peek()
            self.i += 1
            right = self.value()
            return (left == right) if op == "==" else (left != right)
        return bool(left)

    def conj(self):
        r = self.comparison()
        while self.peek() == "&&":
            self.i += 1
            r = self.comparison() and r
        return r

    def disj(self):
        r = self.conj()
        while self.peek() == "||":
            self.i += 1
            r = self.conj() or r
        return r

    def evaluate(self):
        r = self.disj()
        if self.i != len(self.toks):
            raise Refused(f"{self.where}: rules if {self.text!r}: unexpected {self.toks[self.i][1]!r}")
        return r


class GitLab:
    def __init__(self, a):
        self.a = a
        self.work = os.path.abspath(a.work)
        self.builds = os.path.join(self.work, "builds")
        self.project_dir = os.path.join(self.builds, a.project)
        self.home = os.path.join(self.work, "home")
        self.temp = os.path.join(self.work, "temp")
        self.artifacts = os.path.join(self.work, "artifacts")
        self.server = a.server.rstrip("/")
        self.project_vars = pairs(a.var, "--var")

    def predefined(self, sha, branch):
        m = re.match(r"^(https?)://([^/:]+)(?::(\d+))?", self.server)
        proto, host, port = m.group(1), m.group(2), m.group(3) or ("443" if m.group(1) == "https" else "80")
        ns, _, name = self.a.project.rpartition("/")
        return {"CI": "true", "GITLAB_CI": "true", "CI_SERVER": "yes", "CI_SERVER_URL": self.server,
                "CI_SERVER_HOST": host, "CI_SERVER_PORT": port, "CI_SERVER_PROTOCOL": proto,
                "CI_PROJECT_DIR": self.project_dir, "CI_PROJECT_PATH": self.a.project, "CI_PROJECT_NAME": name,
                "CI_PROJECT_NAMESPACE": ns, "CI_PROJECT_URL": f"{self.server}/{self.a.project}",
                "CI_JOB_TOKEN": self.a.job_token, "CI_JOB_NAME": self.a.job, "CI_JOB_ID": "1",
                "CI_PIPELINE_ID": "1", "CI_PIPELINE_SOURCE": self.a.source, "CI_COMMIT_SHA": sha,
                "CI_COMMIT_SHORT_SHA": sha[:8], "CI_COMMIT_BRANCH": branch, "CI_COMMIT_REF_NAME": branch,
                "CI_DEFAULT_BRANCH": branch, "CI_BUILDS_DIR": self.builds,
                "CI_REPOSITORY_URL": f"{proto}://gitlab-ci-token:{self.a.job_token}@{self.server.split('://', 1)[1]}"
                                     f"/{self.a.project}.git"}

    def run(self):
        if os.path.exists(self.work) and os.listdir(self.work):
            raise SystemExit(f"ci_run.py: --work {self.work} is not empty: give a fresh folder")
        for d in (self.builds, self.home, self.temp, self.artifacts):
            os.makedirs(d, exist_ok=True)
        header = f"Authorization: Basic {basic('gitlab-ci-token', self.a.job_token)}"
        url = f"{self.server}/{self.a.project}.git"
        text, sha, branch = read_file_from_repo(url, header, ".gitlab-ci.yml", self.home, "the CI file .gitlab-ci.yml")
        ci = load_yaml(text, ".gitlab-ci.yml")
        for k in ci:
            if k in GL_GLOBAL_REFUSED:
                raise Refused(f".gitlab-ci.yml: the global key {k!r} is not emulated")
        jobs = {k: v for k, v in ci.items() if k not in GL_GLOBAL}
        for k in list(jobs):
            if k.startswith("."):
                raise Refused(f".gitlab-ci.yml: hidden job {k!r}: templates (extends, anchors' jobs) are not emulated")
            check_keys(jobs[k], GL_JOB, f".gitlab-ci.yml: job {k}")
            if "script" not in jobs[k]:
                raise Refused(f".gitlab-ci.yml: job {k} has no script")
        default = ci.get("default") or {}
        check_keys(default, GL_DEFAULT, ".gitlab-ci.yml: default")
        for k in ("image", "before_script", "after_script"):
            if k in ci:
                if k in default:
                    raise Refused(f".gitlab-ci.yml: {k} both at the top and under default")
                default[k] = ci[k]
        if self.a.job not in jobs:
            raise Refused(f".gitlab-ci.yml: no job {self.a.job!r} (jobs: {', '.join(jobs)})")
        job = jobs[self.a.job]
        where = f".gitlab-ci.yml: job {self.a.job}"
        stages = ci.get("stages") or [".pre", "build", "test", "deploy", ".post"]
        stage = scalar(job.get("stage", "test"))
        if stage not in stages and stage not in (".pre", ".post"):
            raise Refused(f"{where}: stage {stage!r} is not in stages ({', '.join(map(str, stages))})")
        image = scalar(job.get("image", default.get("image", "")))
        if image not in GL_IMAGES:
            raise Refused(f"{where}: image {image!r}: this machine stands for {' or '.join(sorted(GL_IMAGES))} only")
        if job.get("when", "on_success") not in ("on_success", "always"):
            raise Refused(f"{where}: when {job['when']!r} is not emulated (on_success, always)")
        for k in ("tags",):
            if k in job and not isinstance(job[k], list):
                raise Refused(f"{where}: {k} is a list")

        # variables: predefined, then the file's (global, then the job's, each expanded), then the project's
        env = self.predefined(sha, branch)
        for scope, label in ((ci.get("variables"), "variables"), (job.get("variables"), f"job {self.a.job} variables")):
            if scope is None:
                continue
            if not isinstance(scope, dict):
                raise Refused(f".gitlab-ci.yml: {label}: expected a mapping")
            for k, v in scope.items():
                if isinstance(v, dict):
                    check_keys(v, {"value", "description", "options", "expand"}, f".gitlab-ci.yml: {label}: {k}")
                    v = v.get("value", "")
                env[k] = gl_expand(scalar(v), env)
        env.update(self.project_vars)
        for k in env:
            if k.startswith("GIT_") and k not in ("GIT_DEPTH", "GIT_STRATEGY"):
                raise Refused(f"{where}: the runner variable {k} is not emulated (GIT_DEPTH, GIT_STRATEGY)")

        if not self.in_pipeline(job, env, where, sha, branch, url, header):
            say(f"ci_run.py: job {self.a.job} is not in a pipeline of source {self.a.source}: its rules leave it out")
            return EXIT_NOT_IN_PIPELINE

        timeout = gl_duration(job.get("timeout", default.get("timeout", "1h")), where)
        before = job["before_script"] if "before_script" in job else default.get("before_script", [])
        after = job["after_script"] if "after_script" in job else default.get("after_script", [])
        script = self.lines(before, f"{where}: before_script") + self.lines(job["script"], f"{where}: script")
        after = self.lines(after, f"{where}: after_script")
        art = job.get("artifacts")
        if art is not None:
            check_keys(art, {"paths", "when", "expire_in", "name", "reports"}, f"{where}: artifacts")
            if "reports" in art:
                check_keys(art["reports"], {"junit"}, f"{where}: artifacts: reports")
            if scalar(art.get("when", "on_success")) not in ("on_success", "on_failure", "always"):
                raise Refused(f"{where}: artifacts: when {art['when']!r}")

        say(f"ci_run.py: job {self.a.job} of {self.a.project} (pipeline source {self.a.source}, image {image})")
        env.update({"PATH": BASE_PATH, "HOME": self.home, "LANG": "C.UTF-8"})
        start = time.monotonic()
        ok = self.clone(env, url, header, sha) if env.get("GIT_STRATEGY", "fetch") != "none" else True
        if env.get("GIT_STRATEGY", "fetch") == "none":
            os.makedirs(self.project_dir, exist_ok=True)
        if ok:
            rc = self.shell(script, env, timeout)
            ok = rc == 0
            if rc is None:
                say(f"ERROR: Job failed: execution took longer than {timeout // 60} minutes")
            elif rc != 0:
                say(f"ERROR: Job failed: exit code {rc}")
        if after:
            say("Running after_script")
            left = max(1.0, timeout - (time.monotonic() - start))
            rc = self.shell(after, env, min(left, 300))
            if rc != 0:
                say(f"WARNING: after_script failed, but the job will continue unaffected: exit code {rc}")
        if art is not None:
            self.collect(art, ok, where)
        say(f"ci_run.py: job {self.a.job} {'succeeded' if ok else 'failed'}")
        return EXIT_OK if ok else EXIT_FAILED

    def lines(self, value, where):
        out = []
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, list):
                out += self.lines(item, where)
            elif isinstance(item, str):
                out.append(item)
            else:
                raise Refused(f"{where}: a script line is a string, got {item!r}")
        return out

    def in_pipeline(self, job, env, where, sha, branch, url, header):
        rules = job.get("rules")
        if rules is None:
            return True
        if not isinstance(rules, list):
            raise Refused(f"{where}: rules is a list")
        files = None
        for i, rule in enumerate(rules):
            check_keys(rule, {"if", "exists", "when"}, f"{where}: rules[{i}]")
            when = scalar(rule.get("when", "on_success"))
            if when not in ("on_success", "always", "never"):
                raise Refused(f"{where}: rules[{i}]: when {when!r} is not emulated")
            match = True
            if "if" in rule:
                match = RuleExpr(scalar(rule["if"]), env, f"{where}: rules[{i}]").evaluate()
            if match and "exists" in rule:
                globs_ = rule["exists"] if isinstance(rule["exists"], list) else [rule["exists"]]
                if files is None:
                    files = self.repo_files(url, header)
                match = any(fnmatch.fnmatchcase(f, scalar(g)) or f.startswith(scalar(g).rstrip("/") + "/")
                            for g in globs_ for f in files)
            if match:
                return when != "never"
        return False

    def repo_files(self, url, header):
        # rules:exists is decided on the pipeline's commit before any job runs: the repository's files
        with tempfile.TemporaryDirectory(dir=self.home) as tmp:
            env = git_env(self.home)
            env.update({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"http.{origin_of(self.server)}/.extraheader",
                        "GIT_CONFIG_VALUE_0": header})
            git_output(["clone", "--quiet", "--depth", "1", "--no-checkout", url, tmp], self.home, env)
            return git_output(["ls-tree", "-r", "--name-only", "HEAD"], tmp, env)[1].splitlines()

    def clone(self, env, url, header, sha):
        depth = env.get("GIT_DEPTH", "20")
        say(f"Fetching changes with git depth set to {depth}...")
        genv = git_env(self.home)
        genv.update({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"http.{origin_of(self.server)}/.extraheader",
                     "GIT_CONFIG_VALUE_0": header})
        os.makedirs(self.project_dir, exist_ok=True)
        try:
            git(["init", "-q", self.project_dir], self.project_dir, genv)
            git(["remote", "add", "origin", url], self.project_dir, genv)
            git(["fetch", "--quiet", "--no-tags", f"--depth={depth}" if depth != "0" else "--quiet", "origin",
                 f"+{sha}:refs/pipelines/1"], self.project_dir, genv)
            git(["checkout", "-q", "-f", sha], self.project_dir, genv)
        except JobStepFailed as e:
            say(f"ERROR: Job failed: the runner could not fetch the project: {e}")
            return False
        return True

    def shell(self, commands, env, timeout):
        # the runner's bash shell: errexit and pipefail, each command echoed before it runs, all in one shell
        lines = ["if set -o | grep pipefail > /dev/null; then set -o pipefail; fi; set -o errexit",
                 "set +o noclobber", f"cd {sh_quote(self.project_dir)}"]
        for c in commands:
            first = c.split("\n", 1)[0]
            shown = "$ " + first + (" # collapsed multi-line command" if "\n" in c.strip() else "")
            lines.append(f"printf '%s\\n' {sh_quote(shown)}")
            lines.append(c)
        script = os.path.join(self.temp, f"script-{uuid.uuid4().hex}.sh")
        with open(script, "w") as f:
            f.write("\n".join(lines) + "\n")
        return run_process(["bash", "--noprofile", "--norc", script], self.project_dir, env, timeout)

    def collect(self, art, ok, where):
        when = scalar(art.get("when", "on_success"))
        if not ({"on_success": ok, "on_failure": not ok, "always": True}[when]):
            return
        say("Uploading artifacts...")
        paths = art.get("paths") or []
        files = copy_matches([scalar(p) for p in paths], self.project_dir, f"{where}: artifacts")
        junit = art.get("reports", {}).get("junit")
        reports = copy_matches([scalar(p) for p in (junit if isinstance(junit, list) else [junit] if junit else [])],
                               self.project_dir, f"{where}: artifacts: reports: junit")
        for f in files + reports:
            rel = os.path.relpath(f, self.project_dir)
            os.makedirs(os.path.dirname(os.path.join(self.artifacts, rel)), exist_ok=True)
            shutil.copy2(f, os.path.join(self.artifacts, rel))
        if paths and not files:
            say(f"WARNING: {', '.join(map(str, paths))}: no matching files")
        if junit and not reports:
            say(f"WARNING: {junit}: no matching files")
        for f in reports:
            rel = os.path.relpath(f, self.project_dir)
            try:
                xml.dom.minidom.parse(f)
            except Exception as e:  # GitLab shows such a report as unparsable
                say(f"ERROR: the JUnit report {rel} does not parse: {e}")
                continue
            dest = os.path.join(self.work, "junit", rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy2(f, dest)
        say(f"Uploaded {len(files) + len(reports)} file(s), {len(reports)} JUnit report(s)")


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def main():
    p = argparse.ArgumentParser(description="run one CI job as its platform runs it")
    sub = p.add_subparsers(dest="platform", required=True)
    g = sub.add_parser("github")
    g.add_argument("--server", required=True)
    g.add_argument("--repository", required=True)
    g.add_argument("--workflow", required=True)
    g.add_argument("--job", required=True)
    g.add_argument("--event", required=True)
    g.add_argument("--token", required=True)
    g.add_argument("--secret", action="append", default=[])
    g.add_argument("--var", action="append", default=[])
    g.add_argument("--input", action="append", default=[])
    g.add_argument("--forbid-secrets", action="store_true")
    g.add_argument("--work", required=True)
    l = sub.add_parser("gitlab")
    l.add_argument("--server", required=True)
    l.add_argument("--project", required=True)
    l.add_argument("--job", required=True)
    l.add_argument("--source", required=True, choices=["push", "web", "schedule", "api", "trigger",
                                                      "merge_request_event"])
    l.add_argument("--job-token", required=True)
    l.add_argument("--var", action="append", default=[])
    l.add_argument("--work", required=True)
    a = p.parse_args()
    try:
        return (GitHub(a) if a.platform == "github" else GitLab(a)).run()
    except Refused as e:
        print(f"ci_run.py: refused: {e}", file=sys.stderr, flush=True)
        return EXIT_REFUSED
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr, flush=True)
            return EXIT_REFUSED
        raise


if __name__ == "__main__":
    sys.exit(main())
