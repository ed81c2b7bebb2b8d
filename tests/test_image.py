"""The operator image, checked without a container engine (none runs here or in CI).

Two halves:

* **The layer.** The Dockerfile's final stage is one directory: the wheel (and,
  in the image, its pinned dependencies) installed with ``pip install --target``.
  The fixture builds that directory the same way, from the build context that
  ``.dockerignore`` lets through, offline (``--no-build-isolation --no-index``,
  with the ``[build-system]`` pin of setuptools that ``make setup`` installs),
  and runs the image's ENTRYPOINT from it with the final stage's ENV only. The
  dependencies, which the image has in that directory too, come from this venv's
  site-packages, appended to PYTHONPATH under ``python -S``, so the checkout's
  editable install cannot stand in for the layer.
* **No drift.** ENTRYPOINT and CMD are the command the bundle's Deployment runs,
  USER is its numeric non-root UID and GID, EXPOSE its ports, and every path the
  image's ENV makes writable lies on one of its emptyDir mounts (the root file
  system is read-only).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from kccgen.generator.bundle import (
    DEFAULT_IMAGE,
    HEALTH_PORT,
    WEBHOOK_PORT,
    Options,
    build,
    generated_dir,
    operator_command,
)
from tests.support.cli import REPO

DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


# --- reading the Dockerfile and .dockerignore ------------------------------------------------


@dataclass(frozen=True)
class Stage:
    """One FROM ... of the Dockerfile: its base, its name, its (KEYWORD, arguments) lines."""

    base: str
    name: str | None
    lines: tuple[tuple[str, str], ...]

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.lines if kw == keyword]

    def one(self, keyword: str) -> str:
        found = self.all(keyword)
        assert len(found) == 1, f"Dockerfile: stage {self.name or self.base} has {len(found)} {keyword} lines, expected 1"
        return found[0]

    def env(self) -> dict[str, str]:
        """ENV K=V ... (the KEY=VALUE form only, as this Dockerfile writes it)."""
        out: dict[str, str] = {}
        for args in self.all("ENV"):
            for pair in shlex.split(args):
                key, sep, value = pair.partition("=")
                assert sep, f"Dockerfile: ENV {args!r}: write KEY=VALUE"
                assert "$" not in value, f"Dockerfile: ENV {key}: spell the value out (the test does not expand ${{...}})"
                out[key] = value
        return out


def stages(text: str) -> list[Stage]:
    """The Dockerfile's stages: continuation lines joined, comments dropped."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    assert not pending, "Dockerfile: the last line ends with a backslash"
    out: list[Stage] = []
    for line in logical:
        keyword, _, args = line.partition(" ")
        keyword, args = keyword.upper(), args.strip()
        if keyword == "FROM":
            words = args.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            out.append(Stage(words[0], name, ()))
        else:
            assert out, f"Dockerfile: {keyword} before the first FROM"
            last = out[-1]
            out[-1] = Stage(last.base, last.name, (*last.lines, (keyword, args)))
    return out


STAGES = stages(DOCKERFILE.read_text(encoding="utf-8"))
FINAL = STAGES[-1]


def exec_form(stage: Stage, keyword: str) -> list[str]:
    """ENTRYPOINT/CMD in exec (JSON) form: a shell form would run under /bin/sh -c."""
    value = json.loads(stage.one(keyword))
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), f"Dockerfile: {keyword} must be a JSON list of strings"
    return [str(v) for v in value]


def install_dir() -> PurePosixPath:
    """Where the build stage installs the wheel (``pip install --target DIR``)."""
    targets = [m[1] for run in STAGES[0].all("RUN") for m in re.finditer(r"pip install [^&]*--target (\S+)", run)]
    assert len(targets) == 1, f"Dockerfile: expected one `pip install --target DIR` in the build stage, found {targets}"
    return PurePosixPath(targets[0])


def _ignore_regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern as Docker reads it: ``*`` and ``?`` stay inside one
    path segment, ``**/`` spans any number of directories."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


def ignore_rules() -> list[tuple[bool, re.Pattern[str]]]:
    """(negated, pattern) in file order; the last rule that matches a path or one of
    its parent directories decides, as in Docker."""
    rules = []
    for raw in DOCKERIGNORE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        rules.append((negated, _ignore_regex(line.lstrip("!").strip("/"))))
    return rules


def in_context(rel: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    parts = rel.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    excluded = False
    for negated, rx in rules:
        if any(rx.fullmatch(c) for c in candidates):
            excluded = not negated
    return not excluded


def copy_context(dest: Path) -> None:
    """Copy what ``docker build .`` would send to the daemon."""
    rules = ignore_rules()

    def ignore(folder: str, names: list[str]) -> set[str]:
        rel = Path(folder).relative_to(REPO).as_posix()
        prefix = "" if rel == "." else rel + "/"
        return {n for n in names if not in_context(prefix + n, rules)}

    shutil.copytree(REPO, dest, ignore=ignore, symlinks=True)


def deployment() -> dict[str, Any]:
    """The Deployment ``kccgen bundle`` writes, read back from its YAML."""
    files = build(generated_dir(REPO), Options(pattern="pubsub"))
    (dep,) = list(yaml.safe_load_all(files["deployment.yaml"]))
    assert dep["kind"] == "Deployment"
    return dict(dep)


# --- the layer, built as the final stage has it ----------------------------------------------


@dataclass(frozen=True)
class Layer:
    """The final stage as a directory: ``root`` stands for the image's ``/``."""

    root: Path

    def host(self, image_path: PurePosixPath | str) -> Path:
        return self.root / PurePosixPath(image_path).relative_to("/")

    def env(self) -> dict[str, str]:
        """The final stage's ENV and nothing else, its paths mapped into ``root``.
        PYTHONPATH also names this venv's site-packages, where the image has the
        dependencies in the install directory itself."""
        image = FINAL.env()
        env = dict(image)
        env["HOME"] = str(self.host(image["HOME"]))
        env["PATH"] = ":".join(str(self.host(d)) if d.startswith(str(install_dir())) else d for d in image["PATH"].split(":"))
        deps = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
        env["PYTHONPATH"] = ":".join([*(str(self.host(p)) for p in image["PYTHONPATH"].split(":")), *deps])
        return env

    def run(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """argv as the container runs it, argv[0] found on the image's PATH, by this
        interpreter with -S: no site-packages but what PYTHONPATH names (so the
        checkout's editable install cannot answer instead of the layer)."""
        env = self.env()
        if argv[0] == "python":
            cmd = [sys.executable, "-S", *argv[1:]]
        else:
            script = next((Path(d) / argv[0] for d in env["PATH"].split(":") if (Path(d) / argv[0]).is_file()), None)
            assert script is not None, f"{argv[0]} is not on the image's PATH ({FINAL.env()['PATH']})"
            cmd = [sys.executable, "-S", str(script), *argv[1:]]
        before = tree(self.host(install_dir()))
        r = subprocess.run(cmd, env=env, cwd=env["HOME"], capture_output=True, text=True, timeout=timeout, check=False)
        # A read-only root file system: nothing may be written in the installed
        # tree (the .pyc files must be there already, compiled at install).
        assert tree(self.host(install_dir())) == before, f"{shlex.join(argv)} wrote into {install_dir()}"
        return r


def tree(folder: Path) -> set[tuple[str, int]]:
    return {(str(p.relative_to(folder)), p.stat().st_mtime_ns) for p in folder.rglob("*")}


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> Layer:
    tmp = tmp_path_factory.mktemp("image")
    pin = next(r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools"))
    have = importlib.metadata.version("setuptools")
    assert f"setuptools=={have}" == pin, f"this venv has setuptools {have}, the build backend is {pin}: run `make setup`"
    src = tmp / "context"
    copy_context(src)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", "--no-input"]
    # No network: no index, and no isolated build environment to fill from one.
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(tmp / "dist"), str(src)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp / "dist").glob("kccgen-*.whl")
    lay = Layer(tmp / "root")
    installed = subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", "--target", str(lay.host(install_dir())), str(wheel)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    lay.host(FINAL.env()["HOME"]).mkdir(parents=True)
    return lay


def test_the_entrypoint_starts_from_the_layer_and_prints_the_operators_help(layer: Layer) -> None:
    argv = [*exec_form(FINAL, "ENTRYPOINT"), *exec_form(FINAL, "CMD"), "--help"]
    r = layer.run(*argv)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: kccctl operator"), r.stdout[:500]
    # Every flag the bundle's Deployment passes is one the installed operator knows.
    for flag in (a for a in operator_command(Options()) if a.startswith("--")):
        assert flag in r.stdout, f"the installed `kccctl operator --help` does not list {flag}"
    # The Kinds come from the layer's package data.
    kinds = layer.run(argv[0], "kinds")
    assert kinds.returncode == 0 and "PubSubTopic\t" in kinds.stdout, kinds.stderr
    version = layer.run(argv[0], "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith(f"kccctl {PYPROJECT['project']['version']} "), version.stdout


def test_the_code_that_runs_is_the_layers_not_the_checkouts(layer: Layer) -> None:
    r = layer.run("python", "-c", "import kccgen.runtime.cli as m; print(m.__file__)")
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()).is_relative_to(layer.host(install_dir())), r.stdout


def test_the_bundles_command_is_accepted_by_the_layer(layer: Layer) -> None:
    """The Deployment's exact command, from the layer, up to the first check that
    needs no cluster: a namespace that is no DNS label, added at the end, is the
    one line it prints (an unknown flag would be argparse's usage error instead,
    and a pattern selecting nothing, its own line)."""
    command = operator_command(Options(endpoint="http://127.0.0.1:9"))  # an endpoint: no credential lookup
    r = layer.run(*command, "--namespace", "Not_A_Label")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "unrecognized arguments" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines() == [r.stderr.strip()], r.stderr
    assert r.stderr.startswith("error: --namespace:") and "Not_A_Label" in r.stderr, r.stderr


# --- the Dockerfile against the bundle's Deployment ------------------------------------------


def test_entrypoint_and_cmd_are_the_deployments_command() -> None:
    dep = deployment()
    (container,) = dep["spec"]["template"]["spec"]["containers"]
    image_argv = [*exec_form(FINAL, "ENTRYPOINT"), *exec_form(FINAL, "CMD")]
    assert container["command"][: len(image_argv)] == image_argv
    assert exec_form(FINAL, "ENTRYPOINT") == [operator_command(Options())[0]]


def test_user_is_the_deployments_numeric_non_root_user() -> None:
    user = FINAL.one("USER")
    assert re.fullmatch(r"\d+:\d+", user), f"Dockerfile: USER {user!r}: give a numeric UID:GID, so runAsNonRoot can be checked"
    uid, gid = (int(x) for x in user.split(":"))
    assert uid != 0 and gid != 0
    pod = deployment()["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert (pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]) == (uid, gid)
    (container,) = pod["containers"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
    }


def test_what_the_image_writes_lies_on_an_empty_dir() -> None:
    """The root file system is read-only: HOME (and TMPDIR, if set) must be mounted."""
    pod = deployment()["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    empty = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    mounts = [PurePosixPath(m["mountPath"]) for m in container["volumeMounts"] if m["name"] in empty]
    env = FINAL.env()
    writable = [PurePosixPath(env[k]) for k in ("HOME", "TMPDIR") if k in env]
    assert writable, "Dockerfile: set HOME (the image's user has no home directory)"
    for path in [*writable, PurePosixPath("/tmp")]:  # Python's tempfile and the webhook's certificate use /tmp
        assert any(path.is_relative_to(m) for m in mounts), f"{path} is not on an emptyDir mount of the Deployment ({mounts})"


def test_expose_and_the_deployments_ports() -> None:
    (container,) = deployment()["spec"]["template"]["spec"]["containers"]
    exposed = {int(p.split("/")[0]) for line in FINAL.all("EXPOSE") for p in line.split()}
    assert exposed == {p["containerPort"] for p in container["ports"]} == {HEALTH_PORT, WEBHOOK_PORT}


def test_base_image_paths_and_tag() -> None:
    # Both stages on one base: the console scripts' first line names its python.
    assert [s.base for s in STAGES] == ["python:3.11-slim", "python:3.11-slim"]
    assert PYPROJECT["project"]["requires-python"] == ">=3.11,<3.12"
    target = install_dir()
    (copy,) = FINAL.all("COPY")
    assert copy.split() == [f"--from={STAGES[0].name}", str(target), str(target)]
    env = FINAL.env()
    assert env["PYTHONPATH"] == str(target)
    assert env["PATH"].split(":")[0] == str(target / "bin")
    # The image the bundle names is the one this recipe builds for this version.
    name, _, tag = DEFAULT_IMAGE.rpartition(":")
    assert tag == PYPROJECT["project"]["version"]
    assert f"docker build -t {DEFAULT_IMAGE} ." in DOCKERFILE.read_text(encoding="utf-8")
    assert name == "kccgen-operator"


def test_the_build_stage_installs_as_the_fixture_does() -> None:
    """The fixture's ``pip install --target`` stands for the build stage's only if
    no option of the latter changes what lands in the directory (``--no-compile``
    would leave the .pyc files to be written at run time, on a read-only disk)."""
    (run,) = [r for r in STAGES[0].all("RUN") if "--target" in r]
    installs = [shlex.split(part) for part in run.split("&&") if "pip install" in part]
    assert len(installs) == 1, run
    args = installs[0][2:]
    allowed = {"--no-cache-dir", "--disable-pip-version-check"}
    valued = {"--target": str(install_dir()), "-c": "constraints.txt"}
    rest = []
    it = iter(args)
    for a in it:
        if a in valued:
            assert next(it) == valued[a], f"Dockerfile: pip install {a}"
        elif a not in allowed:
            rest.append(a)
    assert rest == ["/dist/kccgen-*.whl"], f"Dockerfile: pip install options the test does not reproduce: {rest}"


def test_the_build_context_is_the_packaging_files_and_the_package_folders() -> None:
    rules = ignore_rules()
    top = {p.name for p in REPO.iterdir() if in_context(p.name, rules)}
    folders = set(PYPROJECT["tool"]["kccgen"]["package-dirs"].values())
    assert top == {"pyproject.toml", "setup.py", "constraints.txt", *folders}
    assert not in_context("generator/__pycache__/cli.cpython-311.pyc", rules)
    assert in_context("generated/crds/pubsubtopics.pubsub.cnrm.cloud.google.com.yaml", rules)


def test_a_wrong_dockerignore_rule_would_be_seen() -> None:
    """The matcher the context copy relies on, on rules it must read as Docker does."""
    rules = [(False, _ignore_regex("*")), (True, _ignore_regex("runtime")), (False, _ignore_regex("**/*.pyc"))]
    assert in_context("runtime/cli.py", rules)
    assert not in_context("tests/test_image.py", rules)
    assert not in_context("runtime/sub/x.pyc", rules)
    assert not in_context("x.pyc", rules)
    assert os.sep == "/"  # the context paths above are POSIX paths
