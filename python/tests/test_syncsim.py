"""The Python module against the CLI: same error text, same --json keys and values, threads.

Run by ctest (python.module) with PYTHONPATH=build/<preset>/python and SYNCSIM_CLI set to the
`syncsim` binary; by hand:
  PYTHONPATH=build/ci/python SYNCSIM_CLI=build/ci/bin/syncsim python3 -m unittest discover -s python/tests
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import syncsim

CLI = os.environ.get("SYNCSIM_CLI", "")
SOURCE = os.environ.get(
    "SYNCSIM_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
)

# Two leaves of two 8-GPU hosts (32 GPUs), flow fidelity: a ring shift across hosts. Milliseconds.
SMALL = {
    "name": "py-small",
    "seed": 1,
    "fidelity": "flow",
    "fabric": {
        "topology": "spine_leaf",
        "spine_leaf": {"leaves": 2, "hosts_per_leaf": 2, "spines": 2},
        "host": {"gpus": 8, "nics": 8},
        "links": {
            "host": {"bandwidth": "400Gbps", "delay": "500ns"},
            "fabric": {"bandwidth": "400Gbps", "delay": "1us"},
            "nvlink": {"delay": "100ns"},
        },
    },
    "traffic": [{"pattern": "ring_shift", "shift": 8, "size": "1MiB", "start": "0us"}],
}

# The bucket-size study's DDP step (scenarios/bucket-size-study.yaml) at analytic fidelity.
STEP_FILE = os.path.join(SOURCE, "scenarios", "bucket-size-study.yaml")
STEP_SET = {"fidelity": "analytic"}

# Keys that measure the host, not the simulation (the estimate's machine speed is measured in each
# process).
HOST_KEYS = {"wall_s", "peak_rss_bytes", "machine_speed"}


def without_host(doc):
    """The document less the keys that time or size the host process (they differ run to run)."""
    if isinstance(doc, dict):
        return {k: without_host(v) for k, v in doc.items() if k not in HOST_KEYS}
    if isinstance(doc, list):
        return [without_host(v) for v in doc]
    return doc


def cli(*args, check=True):
    if not CLI:
        raise unittest.SkipTest("SYNCSIM_CLI is not set (ctest sets it)")
    p = subprocess.run([CLI, *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError("syncsim %s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p


class TempYaml:
    """A scenario dict written to a file the CLI can read (load()'s own YAML text)."""

    def __init__(self, text):
        self.text = text

    def __enter__(self):
        fd, self.path = tempfile.mkstemp(suffix=".yaml")
        with os.fdopen(fd, "w") as f:
            f.write(self.text)
        return self.path

    def __exit__(self, *exc):
        os.unlink(self.path)


class LoadTest(unittest.TestCase):
    def test_error_text_equals_the_cli(self):
        bad = syncsim.to_yaml(SMALL).replace('"400Gbps"', '"400 parsecs"', 1)
        with TempYaml(bad) as path:
            with self.assertRaises(syncsim.ScenarioError) as caught:
                syncsim.load(path)
            p = cli("run", path, check=False)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(str(caught.exception) + "\n", p.stderr)
        self.assertTrue(str(caught.exception).startswith(path + ":"), str(caught.exception))

    def test_set_error_text_equals_the_cli(self):
        with TempYaml(syncsim.to_yaml(SMALL)) as path:
            with self.assertRaises(syncsim.ScenarioError) as caught:
                syncsim.load(path, set={"fabric.spine_leaf.leaves": "many"})
            p = cli("run", path, "--set", "fabric.spine_leaf.leaves=many", check=False)
        self.assertEqual(str(caught.exception) + "\n", p.stderr)
        self.assertIn("--set", str(caught.exception))

    def test_dict_errors_point_into_its_yaml(self):
        bad = json.loads(json.dumps(SMALL))
        bad["fabric"]["host"]["colour"] = "blue"
        with self.assertRaises(syncsim.ScenarioError) as caught:
            syncsim.load(bad)
        text = str(caught.exception)
        # `<dict>:LINE:COL: fabric.host.colour: ...`, LINE being the key's line in to_yaml(bad).
        source, line, col, rest = text.split(":", 3)
        self.assertEqual(source, "<dict>")
        yaml_line = syncsim.to_yaml(bad).splitlines()[int(line) - 1]
        self.assertEqual(yaml_line.strip(), 'colour: "blue"')
        self.assertEqual(int(col), yaml_line.index("colour") + 1)
        self.assertIn("fabric.host.colour", rest)

    def test_a_dict_loads_as_its_yaml_file_does(self):
        s = syncsim.load(SMALL)
        self.assertEqual(s.source, "<dict>")
        self.assertEqual((s.name, s.fidelity, s.runnable), ("py-small", "flow", True))
        with TempYaml(s.yaml) as path:
            from_file = syncsim.run(syncsim.load(path))
        self.assertEqual(without_host(syncsim.run(s)), without_host(from_file))

    def test_a_fabric_alone_serves_collective_but_not_run(self):
        fabric_only = {k: v for k, v in SMALL.items() if k != "traffic"}
        s = syncsim.load(fabric_only)
        self.assertFalse(s.runnable)
        with self.assertRaises(syncsim.ScenarioError) as caught:
            syncsim.run(s)
        self.assertIn("traffic", str(caught.exception))


class RunTest(unittest.TestCase):
    def test_keys_and_values_equal_the_cli_json(self):
        with TempYaml(syncsim.to_yaml(SMALL)) as path:
            doc = syncsim.run(syncsim.load(path, set={"traffic.0.size": "2MiB"}))
            cli_doc = json.loads(cli("run", path, "--set", "traffic.0.size=2MiB", "--json").stdout)
        self.assertEqual(list(doc.keys()), list(cli_doc.keys()))
        self.assertEqual(without_host(doc), without_host(cli_doc))
        self.assertGreater(doc["messages"]["completed"], 0)

    def test_step_keys_equal_the_cli_json(self):
        doc = syncsim.run(syncsim.load(STEP_FILE, set=STEP_SET))
        cli_doc = json.loads(cli("run", STEP_FILE, "--set", "fidelity=analytic", "--json").stdout)
        self.assertEqual(list(doc.keys()), list(cli_doc.keys()))
        self.assertEqual(without_host(doc), without_host(cli_doc))
        self.assertGreater(doc["step_time_s"], 0)
        self.assertTrue(doc["buckets"])

    def test_same_scenario_twice_gives_identical_dicts(self):
        s = syncsim.load(SMALL)
        self.assertEqual(without_host(syncsim.run(s)), without_host(syncsim.run(s)))

    def test_progress_callback_sees_the_step_advance(self):
        seen = []
        syncsim.run(syncsim.load(STEP_FILE, set=STEP_SET), progress=seen.append)
        self.assertGreater(len(seen), 1)
        buckets = [p["buckets_done"] for p in seen]
        self.assertEqual(buckets, sorted(buckets))
        self.assertEqual(seen[-1]["buckets_done"], seen[-1]["buckets"])
        self.assertTrue(seen[-1]["text"].startswith("run: "), seen[-1]["text"])

    def test_an_exception_in_the_callback_reaches_the_caller(self):
        def fail(_):
            raise KeyError("stop")

        with self.assertRaises(KeyError):
            syncsim.run(syncsim.load(STEP_FILE, set=STEP_SET), progress=fail)

    def test_threads_run_points_side_by_side(self):
        scenarios = [syncsim.load(SMALL, set={"traffic.0.size": s}) for s in ("1MiB", "4MiB")]
        serial = [without_host(syncsim.run(s)) for s in scenarios]
        results = [None, None]

        def work(i):
            results[i] = without_host(syncsim.run(scenarios[i]))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        self.assertEqual(results, serial)
        self.assertNotEqual(serial[0], serial[1])


    def test_the_gil_is_released_while_simulating(self):
        # The main thread ticks (sleeping, so releasing the GIL, between ticks) while a worker runs
        # a DDP step; each progress callback records the tick count. With a 1 s switch interval, a
        # run that kept the GIL in C++ would keep the main thread out until it returned, so every
        # callback would see the same count; released, the count grows between callbacks.
        scenario = syncsim.load(STEP_FILE)  # flow fidelity: about half a second
        ticks = [0]
        seen = []
        worker = threading.Thread(
            target=syncsim.run, args=(scenario,), kwargs={"progress": lambda p: seen.append(ticks[0])}
        )
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1.0)
        try:
            worker.start()
            while worker.is_alive():
                ticks[0] += 1
                time.sleep(0.0005)
            worker.join()
        finally:
            sys.setswitchinterval(interval)
        self.assertGreater(len(seen), 2)
        self.assertGreater(seen[-1], seen[0])


class CollectiveTest(unittest.TestCase):
    def test_equals_the_cli_json(self):
        fabric_only = {k: v for k, v in SMALL.items() if k != "traffic"}
        text = syncsim.to_yaml(fabric_only)
        doc = syncsim.collective(syncsim.load(fabric_only), min_bytes="1M", max_bytes="4M", ranks=16)
        with TempYaml(text) as path:
            cli_doc = json.loads(
                cli("collective", path, "-b", "1M", "-e", "4M", "--ranks", "16", "--json").stdout
            )
        self.assertEqual(list(doc.keys()), list(cli_doc.keys()))
        self.assertEqual(without_host(doc), without_host(cli_doc))
        self.assertEqual([r["size"] for r in doc["results"]], [1 << 20, 2 << 20, 4 << 20])

    def test_explicit_sizes_are_the_rows_of_single_size_sweeps(self):
        s = syncsim.load(SMALL)
        doc = syncsim.collective(s, sizes=[3 << 20, "1M"], model="nccl")
        self.assertEqual([r["size"] for r in doc["results"]], [3 << 20, 1 << 20])
        self.assertEqual((doc["config"]["minimum_bytes"], doc["config"]["maximum_bytes"]), (1 << 20, 3 << 20))
        one = syncsim.collective(s, min_bytes="3M", max_bytes="3M", model="nccl")
        self.assertEqual(doc["results"][0], one["results"][0])

    def test_bad_op_is_a_usage_error(self):
        with self.assertRaises(syncsim.UsageError) as caught:
            syncsim.collective(syncsim.load(SMALL), op="all_shuffle")
        self.assertIn("all_shuffle", str(caught.exception))


class SweepTest(unittest.TestCase):
    def test_rows_equal_the_cli_with_two_jobs_and_progress(self):
        calls = []
        lock = threading.Lock()

        def progress(done, total):
            with lock:
                calls.append((done, total))

        vary = {"traffic.0.size": ["1MiB", "2MiB", "4MiB"]}
        rows = syncsim.sweep(syncsim.load(SMALL), vary=vary, jobs=2, progress=progress, wall=False)
        with TempYaml(syncsim.to_yaml(SMALL)) as path:
            cli_rows = json.loads(
                cli("sweep", path, "--vary", "traffic.0.size=1MiB,2MiB,4MiB", "--json", "--no-wall", "-q").stdout
            )
        self.assertEqual(rows, cli_rows)
        self.assertEqual([r["traffic.0.size"] for r in rows], ["1MiB", "2MiB", "4MiB"])
        self.assertEqual(sorted(calls), [(1, 3), (2, 3), (3, 3)])

    def test_the_scenarios_own_sweep_block(self):
        rows = syncsim.sweep(
            syncsim.load(STEP_FILE, set=dict(STEP_SET, **{"sweep": {"workload.ddp.bucket_cap_mb": [4, 64]}})),
            jobs=2,
        )
        self.assertEqual([r["workload.ddp.bucket_cap_mb"] for r in rows], [4, 64])
        self.assertNotEqual(rows[0]["step_time_s"], rows[1]["step_time_s"])


class ValidateTest(unittest.TestCase):
    def test_one_case_equals_the_cli(self):
        doc = syncsim.validate(["dgx-h100-allreduce"], jobs=2)
        p = cli("validate", "dgx-h100-allreduce", "--json", check=False)
        self.assertIn(p.returncode, (0, 3), p.stderr)
        self.assertEqual(doc, json.loads(p.stdout))
        self.assertTrue(doc["cases"])
        self.assertEqual({c["id"] for c in doc["cases"]}, {"dgx-h100-allreduce"})

    def test_unknown_case_is_a_usage_error(self):
        with self.assertRaises(syncsim.UsageError):
            syncsim.validate(["no-such-case"])


class DataFrameTest(unittest.TestCase):
    def setUp(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            self.skipTest("pandas is not installed (Debian: python3-pandas)")

    def test_sweep_rows_become_a_frame(self):
        rows = syncsim.sweep(syncsim.load(SMALL), vary={"traffic.0.size": ["1MiB", "2MiB"]})
        df = syncsim.to_dataframe(rows)
        self.assertEqual(list(df.columns), list(rows[0].keys()))
        self.assertEqual(len(df), 2)
        self.assertEqual(list(df["sim_time_s"]), [r["sim_time_s"] for r in rows])

    def test_run_and_collective_flatten(self):
        s = syncsim.load(SMALL)
        one = syncsim.to_dataframe(syncsim.run(s))
        self.assertEqual(len(one), 1)
        self.assertIn("sim_time_s", one.columns)
        table = syncsim.to_dataframe(syncsim.collective(s, sizes=["1M", "2M"], model="nccl"))
        self.assertEqual(list(table["size"]), [1 << 20, 2 << 20])
        self.assertIn("out_of_place.time", table.columns)


if __name__ == "__main__":
    unittest.main()
