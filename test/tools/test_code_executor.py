"""code_executor treats model code as hostile: every escape is refused or killed, the parent
process is never affected, and every outcome is a structured result."""
import os
import socket

import pytest

from spatial_manip.tools.code_executor import CodeRefused, ExecutorLimits, check_code, run_code

FAST = ExecutorLimits(timeout_s=3.0, cpu_s=2, memory_mb=1024)


def _code(r):
    return r.get("error", {}).get("code")


def test_computes_with_numpy_and_inputs():
    r = run_code("import numpy as np\nfrom math import hypot\nv = np.array(inputs['v'])\n"
                 "print('norm', hypot(*v))\nresult = {'sum': v.sum(), 'unit': v / np.linalg.norm(v)}",
                 {"v": [3.0, 4.0]}, FAST)
    assert r["result"] == {"sum": 7.0, "unit": [0.6, 0.8]}
    assert "norm 5.0" in r["stdout"] and r["elapsed_s"] > 0


def test_scipy_is_available():
    r = run_code("from scipy.spatial.transform import Rotation\n"
                 "result = Rotation.from_euler('z', 90, degrees=True).apply([1, 0, 0]).round(6)", None, FAST)
    assert r["result"] == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("code", [
    "import os\nresult = os.listdir('/')",
    "import subprocess\nresult = subprocess.run(['id'])",
    "import socket\nresult = socket.socket()",
    "from os import system\nresult = system('id')",
    "import numpy.ctypeslib as c\nresult = 1",
    "result = open('/etc/passwd').read()",
    "result = __import__('os').getcwd()",
    "result = ().__class__.__bases__[0].__subclasses__()",
    "result = getattr((), '__cla' + 'ss__')",
    "result = '{0.__class__}'.format(1)",
    "result = eval('1+1')",
    "exec('result = 1')",
    "import numpy as np\nresult = np.ctypeslib",
    "import numpy as np\nnp.zeros(3).tofile('x.bin')\nresult = 1",
    "import numpy as np\nresult = np.loadtxt('/etc/passwd')",
    "result = [x for x in (1).__class__.__mro__]",
    "def g():\n    yield 1\nresult = g().gi_frame.f_back",
    "import importlib\nresult = 1",
    "from . import x\nresult = 1",
    "import numpy as np\nresult = np.lib.stride_tricks.as_strided(np.zeros(1), (10**6,), (8,))",
    "import scipy\nresult = scipy.LowLevelCallable",
])
def test_escapes_are_refused(code):
    r = run_code(code, None, FAST)
    assert _code(r) == "REFUSED", r
    assert "not allowed" in r["error"]["message"]


@pytest.mark.parametrize("code", [
    # reach os and open through library attributes the static check does not name
    "import numpy as np\nresult = np.lib.npyio.DataSource",
    "import numpy as np\nf = np.lib.npyio.__dict__\nresult = 1",
    "import numpy as np\nresult = np.genfromtxt('/etc/passwd')",
])
def test_library_detours_are_refused(code):
    assert _code(run_code(code, None, FAST)) == "REFUSED"


@pytest.mark.parametrize("code", [
    "from scipy.io import wavfile\nresult = wavfile.read('/etc/passwd')",
    "import numpy as np\nfrom scipy.io import wavfile\nwavfile.write('/tmp/sm_pwned.wav', 8000, np.zeros(8))\nresult = 1",
    "from scipy.io import wavfile\nresult = wavfile.read('/work/main/setup.py')",
])
def test_runtime_hook_blocks_what_the_static_check_cannot_see(code):
    # library functions that open files pass the static check; the audit hook refuses them
    check_code(code)
    r = run_code(code, None, FAST)
    assert _code(r) == "REFUSED", r
    assert "sandbox" in r["error"]["message"] and not os.path.exists("/tmp/sm_pwned.wav")


def test_infinite_loop_times_out_and_parent_survives():
    r = run_code("while True:\n    pass", None, ExecutorLimits(timeout_s=1.5, cpu_s=30))
    assert _code(r) == "TIMEOUT"
    r = run_code("x = 0\nwhile True:\n    x += 1", None, ExecutorLimits(timeout_s=20, cpu_s=1))
    assert _code(r) == "CPU_LIMIT"
    assert os.getpid() > 0 and run_code("result = 1", None, FAST)["result"] == 1


def test_sleeping_code_is_killed_by_wall_time():
    r = run_code("import numpy as np\nwhile True:\n    np.linalg.svd(np.eye(2))", None,
                 ExecutorLimits(timeout_s=1.0, cpu_s=60))
    assert _code(r) == "TIMEOUT"


def test_two_gigabyte_allocation_fails_cleanly():
    r = run_code("import numpy as np\na = np.ones(2 * 1024**3 // 8)\nresult = float(a.sum())", None, FAST)
    assert _code(r) == "MEMORY_LIMIT", r
    r = run_code("a = bytearray(2 * 1024**3)\nresult = len(a)", None, FAST)
    assert _code(r) == "MEMORY_LIMIT", r


def test_no_files_written_outside_and_none_left_behind(tmp_path):
    before = set(os.listdir("/tmp"))
    r = run_code("import numpy as np\nnp.savetxt('/tmp/pwned.txt', [1])\nresult = 1", None, FAST)
    assert _code(r) == "REFUSED" and not os.path.exists("/tmp/pwned.txt")
    assert not any(n.startswith("sm_code_") for n in set(os.listdir("/tmp")) - before)


def test_structured_errors_for_bad_code_and_results():
    assert _code(run_code("result = ", None, FAST)) == "REFUSED"
    assert _code(run_code("x = 1", None, FAST)) == "NO_RESULT"
    assert _code(run_code("result = 1 / 0", None, FAST)) == "RUNTIME_ERROR"
    assert _code(run_code("result = object()", None, FAST)) == "NOT_SERIALIZABLE"
    assert _code(run_code("result = float('nan')", None, FAST)) == "NOT_SERIALIZABLE"
    assert _code(run_code("result = 1", {"x": object()}, FAST)) == "INVALID_INPUT"
    assert _code(run_code(12, None, FAST)) == "REFUSED"
    assert _code(run_code("result = list(range(10**6))", None, FAST)) == "OUTPUT_TOO_LARGE"
    assert _code(run_code("a = []\nfor _ in range(100000):\n    a = [a]\nresult = a", None, FAST)) == "NOT_SERIALIZABLE"
    r = run_code("print('x' * 10**6)\nresult = 1", None, FAST)
    assert r["result"] == 1 and len(r["stdout"]) <= FAST.max_stdout_chars


def test_check_code_names_the_construct():
    with pytest.raises(CodeRefused, match="line 2: import of 'os'"):
        check_code("x = 1\nimport os")
    check_code("import numpy as np\nfrom scipy.spatial import cKDTree\nresult = np.pi")


def test_parent_sockets_and_cwd_unaffected():
    cwd = os.getcwd()
    for code in ("import socket\nresult = 1", "while True:\n    pass"):
        run_code(code, None, ExecutorLimits(timeout_s=1.0, cpu_s=1))
    assert os.getcwd() == cwd
    s = socket.socket()
    s.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="a network namespace needs root or user namespaces")
def test_child_runs_in_its_own_network_namespace():
    assert run_code("result = 1", None, FAST)["network_namespace"] is True
