#!/usr/bin/env python3
"""Runs the command lines the README and docs/*.md show, so the docs stay true to the CLI.

Usage: docs_commands.py GPUSLICE_BINARY SOURCE_DIR

Every line in a ```bash (or sh) block that starts with build/bin/gpuslice is run (a trailing '\\'
continues it; a trailing '# comment' and optional '[...]' parts are dropped; `cluster.yaml`, the
reader's own dump, is the bundled examples/snapshot/cluster.yaml), in a scratch folder where build/bin/gpuslice is
the binary under test and examples/, scenarios/ and tests/ are the source tree's. A command passes
when it exits 0 or 1 (1: the documented "no" answer: no node fits, no plan, a target not met);
2 (bad input), a signal or running past its time cap fails. A command naming an output of one
shown later (compare of out/what-if) is retried once after the others. Commands that need a GPU, a
cluster, a long-running server or minutes of work are listed as skipped, with the reason and the
test that runs them instead.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

CAP_SECONDS = 60  # one command's time cap

# (pattern on the command, why it is not run here)
SKIPS = [
    (r"^build/bin/gpuslice realgpu (check|run)\b", "needs a GPU or the fake driver's environment "
     "(cli.realgpu_contract runs both on the fake driver)"),
    (r"^build/bin/gpuslice realgpu labs\b", "about a minute of labs (cli.realgpu_labs runs them)"),
    (r"^build/bin/gpuslice monitor --in-cluster\b", "needs a Kubernetes node (cli.monitor_contract runs monitor)"),
    (r"^build/bin/gpuslice serve\b", "a server that runs until stopped (cli.serve_contract runs it)"),
    (r"^build/bin/gpuslice study\b", "minutes of work over the openb traces (sim_tests' study cases)"),
    (r"\$[A-Za-z{]", "names a shell variable the reader sets"),
    (r"[{}|]", "a pattern of several commands, not one"),
]


def commands(path):
    """(line number, command) for each build/bin/gpuslice line of a bash block in `path`."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, in_block, runnable, i = [], False, False, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            in_block, runnable = (not in_block), line[3:].strip() in ("bash", "sh", "shell")
            i += 1
            continue
        if in_block and runnable and line.strip().startswith("build/bin/gpuslice "):
            start, cmd = i + 1, line.strip()
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
            found.append((start, cmd))
        i += 1
    return found


def runnable_form(cmd):
    cmd = re.sub(r"\s+#.*$", "", cmd)              # a trailing comment
    cmd = re.sub(r"\s*\[[^\]]*\]", "", cmd)        # optional parts: [--out DIR]
    cmd = re.sub(r"(?<![\w/.-])cluster\.yaml\b", "examples/snapshot/cluster.yaml", cmd)
    return cmd.strip()


def main():
    binary, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    docs = [os.path.join(source, "README.md")] + sorted(glob.glob(os.path.join(source, "docs", "**", "*.md"),
                                                                 recursive=True))
    work = tempfile.mkdtemp(prefix="gpuslice-docs-")
    os.makedirs(os.path.join(work, "build", "bin"))
    os.symlink(binary, os.path.join(work, "build", "bin", "gpuslice"))
    for folder in ("examples", "scenarios", "tests"):
        os.symlink(os.path.join(source, folder), os.path.join(work, folder))

    def run(cmd):
        started = time.monotonic()
        try:
            done = subprocess.run(shlex.split(cmd), cwd=work, capture_output=True, text=True,
                                  timeout=CAP_SECONDS, stdin=subprocess.DEVNULL)
            return done.returncode, (done.stdout + done.stderr), time.monotonic() - started
        except subprocess.TimeoutExpired:
            return None, f"ran past {CAP_SECONDS} s", time.monotonic() - started

    ran = skipped = 0
    failed, retry = [], []
    for doc in docs:
        for line, shown in commands(doc):
            where = f"{os.path.relpath(doc, source)}:{line}"
            cmd = runnable_form(shown)
            reason = next((why for pattern, why in SKIPS if re.search(pattern, cmd)), None)
            if reason:
                skipped += 1
                print(f"SKIP {where}: {cmd}\n     ({reason})")
                continue
            rc, out, seconds = run(cmd)
            ran += 1
            if rc in (0, 1):
                print(f"ok   {where} ({seconds:.1f} s, exit {rc}): {cmd}")
            else:
                retry.append((where, cmd, rc, out))
    for where, cmd, _, _ in retry:  # a later command may make what this one reads
        rc, out, seconds = run(cmd)
        if rc in (0, 1):
            print(f"ok   {where} (after the others, {seconds:.1f} s, exit {rc}): {cmd}")
        else:
            failed.append(where)
            print(f"FAIL {where}: exit {rc}: {cmd}\n" + "\n".join(out.strip().split("\n")[-15:]))
    print(f"{ran} commands run, {len(failed)} failed, {skipped} skipped")
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
