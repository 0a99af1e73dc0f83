"""docs/python.md's code blocks and examples/*.py work as written.

The ```python blocks of docs/python.md run in order in one namespace, from the repository root
(their paths are relative to it), as a reader would paste them; the examples run as scripts
writing their plots into a temporary folder (plots only where matplotlib is installed).
"""

import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ.get(
    "SYNCSIM_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
)


def python_blocks(path):
    with open(path) as f:
        return re.findall(r"^```python\n(.*?)^```", f.read(), flags=re.S | re.M)


class DocsTest(unittest.TestCase):
    def test_python_md_blocks_run_in_order(self):
        blocks = python_blocks(os.path.join(SOURCE, "docs", "python.md"))
        self.assertGreaterEqual(len(blocks), 8)
        namespace = {"__name__": "docs_python_md"}
        cwd = os.getcwd()
        os.chdir(SOURCE)
        try:
            for i, block in enumerate(blocks):
                with self.subTest(block=i), contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(block, "docs/python.md block %d" % (i + 1), "exec"), namespace)
        finally:
            os.chdir(cwd)
        # What the blocks computed: a step, three sweep rows, a collective at three sizes.
        self.assertGreater(namespace["step"]["step_time_s"], 0)
        self.assertEqual(len(namespace["rows"]), 3)
        self.assertEqual([r["size"] for r in namespace["c"]["results"]], [1 << 20, 16 << 20, 64 << 20])


class ExamplesTest(unittest.TestCase):
    def run_example(self, name):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "plot.png")
            # The package this test imported, wherever the script runs from.
            import syncsim

            package_dir = os.path.dirname(os.path.dirname(os.path.abspath(syncsim.__file__)))
            env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=package_dir)
            p = subprocess.run(
                [sys.executable, os.path.join(SOURCE, "examples", name), out],
                capture_output=True, text=True, cwd=tmp, env=env,
            )
            self.assertEqual(p.returncode, 0, p.stderr)
            try:
                import matplotlib  # noqa: F401

                self.assertTrue(os.path.getsize(out) > 0)
            except ImportError:
                self.assertIn("matplotlib not installed", p.stdout)
            return p.stdout

    def test_bucket_size_study(self):
        out = self.run_example("bucket_size_study.py")
        self.assertRegex(out, r"shortest step: bucket_cap_mb = \d+")
        self.assertEqual(len(re.findall(r"^\s+\d+\s+[\d.]+\s+[\d.]+", out, flags=re.M)), 7)

    def test_capacity_study(self):
        out = self.run_example("capacity_study.py")
        # Five GPU counts for each of two NIC speeds.
        self.assertEqual(len(re.findall(r"^\s+\d+\s+\d+Gbps", out, flags=re.M)), 10)


if __name__ == "__main__":
    unittest.main()
