"""The memory guard through Python: a run too big for the memory left raises
gpuslice.MemoryLimitError (an InputError) before anything is generated."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import gpuslice

# Run in a child whose address space is limited (RLIMIT_AS, as `ulimit -v`):
# the limit must not bind pytest itself.
CHILD = textwrap.dedent(
    """
    import resource, sys, time
    import gpuslice

    def mapped():
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    # 1 GiB more than the interpreter and the module already map.
    limit = mapped() + (1 << 30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    start = time.monotonic()
    try:
        gpuslice.simulate(sys.argv[1])
    except gpuslice.MemoryLimitError as e:
        assert isinstance(e, gpuslice.InputError) and isinstance(e, ValueError)
        assert e.estimate_bytes > e.limit_bytes > 0, (e.estimate_bytes, e.limit_bytes)
        assert "a run of 50000000 pods on 16 nodes needs about" in str(e), str(e)
        assert "RLIMIT_AS" in str(e), str(e)
        print("refused in %.1f s" % (time.monotonic() - start))
        sys.exit(0)
    sys.exit("not refused")
    """
)


def test_memory_limit_error_is_an_input_error():
    assert issubclass(gpuslice.MemoryLimitError, gpuslice.InputError)
    assert gpuslice.MemoryLimitError.__module__ == "gpuslice"


def test_huge_run_refused_before_it_starts(root, tmp_path):
    text = (root / "scenarios" / "inference-fleet.yaml").read_text()
    huge = tmp_path / "huge.yaml"
    huge.write_text(text.replace("pods: 3000", "pods: 50000000"))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(huge)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refused in" in done.stdout
