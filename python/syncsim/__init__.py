"""syncsim from Python: load a scenario, run it, time collectives, sweep parameters, validate.

Every result is the document the CLI prints with --json (`syncsim run --json`, `syncsim collective
--json`, `syncsim sweep --json`, `syncsim validate --json`), as plain dicts and lists: the compiled
core (syncsim._core) returns that JSON text and this module only json.loads it, so the keys are
the CLI's and docs/cli.md describes them. The simulation runs with the GIL released, so Python
threads can run points side by side. docs/python.md is the manual.
"""

import json
import os
import re

from . import _core

__all__ = [
    "Scenario",
    "ScenarioError",
    "UsageError",
    "load",
    "run",
    "collective",
    "sweep",
    "validate",
    "to_dataframe",
    "to_yaml",
]

# A scenario that does not load: str(e) is the CLI's `file:line:col: dotted.path: message`.
ScenarioError = _core.ScenarioError
# A bad argument (an unknown op, a bad size, no sweep axis, a point that would not fit in memory):
# what the CLI reports with exit code 2 after `syncsim COMMAND: `.
UsageError = _core.UsageError


class Scenario:
    """A loaded, validated scenario (from load()). `yaml` is the text a dict was written as."""

    def __init__(self, core, yaml=None):
        self._core = core
        self.yaml = yaml

    source = property(lambda self: self._core.source, doc="file, `<dict>` or `<built-in default>`")
    name = property(lambda self: self._core.name)
    seed = property(lambda self: self._core.seed)
    fidelity = property(lambda self: self._core.fidelity, doc="packet, flow or analytic")
    has_workload = property(lambda self: self._core.has_workload)
    runnable = property(
        lambda self: self._core.runnable,
        doc="False for a fabric alone: collective() runs it, run() and sweep() raise ScenarioError",
    )
    warnings = property(lambda self: list(self._core.warnings))

    def __repr__(self):
        return "<syncsim.Scenario %r from %s (%s)>" % (self.name, self.source, self.fidelity)


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _scalar(value):
    """One YAML scalar. Strings are always quoted (JSON quoting is valid YAML)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value)
    raise TypeError("cannot write %r (a %s) as YAML" % (value, type(value).__name__))


def _key(key):
    key = str(key)
    return key if _PLAIN_KEY.match(key) else json.dumps(key)


def _lines(value, indent):
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return [pad + "{}"]
        out = []
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                out.append("%s%s:" % (pad, _key(k)))
                out.extend(_lines(v, indent + 2))
            else:
                out.append("%s%s: %s" % (pad, _key(k), _flow(v)))
        return out
    if isinstance(value, (list, tuple)):
        if not value:
            return [pad + "[]"]
        out = []
        for v in value:
            if isinstance(v, (dict, list, tuple)) and v:
                inner = _lines(v, indent + 2)
                inner[0] = pad + "- " + inner[0][indent + 2 :]
                out.extend(inner)
            else:
                out.append("%s- %s" % (pad, _flow(v)))
        return out
    return [pad + _scalar(value)]


def _flow(value):
    if isinstance(value, dict):
        return "{" + ", ".join("%s: %s" % (_key(k), _flow(v)) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(value)


def to_yaml(scenario_dict):
    """The YAML text load() reads for a dict: block style, two-space indent, one key per line,
    strings double-quoted. Line:col in a ScenarioError for a dict point into this text."""
    if not isinstance(scenario_dict, dict):
        raise TypeError("expected a dict, found %s" % type(scenario_dict).__name__)
    return "\n".join(_lines(scenario_dict, 0)) + "\n"


def _set_value(value):
    """A set= value as --set reads it: a str as written (`400Gbps`, `[1, 2]`), None removes the
    key (--unset), anything else as YAML."""
    if value is None or isinstance(value, str):
        return value
    return _flow(value)


def load(path_or_dict=None, set=None, seed=None, name="<dict>"):  # noqa: A002 (the CLI's --set)
    """Load and validate a scenario: a YAML file (str or os.PathLike), a dict (written as YAML by
    to_yaml(); errors name it `name`), or None for the built-in default. `set` maps dotted paths to
    values, as `--set path=value` (None: `--unset path`); `seed` replaces the scenario's seed.
    Raises ScenarioError with the CLI's text."""
    sets = [(str(k), _set_value(v)) for k, v in (set or {}).items()]
    if isinstance(path_or_dict, dict):
        text = to_yaml(path_or_dict)
        return Scenario(_core.load(None, text, name, sets, seed), yaml=text)
    if path_or_dict is None:
        return Scenario(_core.load(None, None, name, sets, seed))
    return Scenario(_core.load(os.fspath(path_or_dict), None, name, sets, seed))


def _core_of(scenario):
    if not isinstance(scenario, Scenario):
        raise TypeError("expected a syncsim.Scenario from syncsim.load(), found %r" % (scenario,))
    return scenario._core


def run(scenario, progress=None, force=False):
    """`syncsim run --json` as a dict. progress(info) is called as a training step advances (a few
    times per bucket; a scenario without a workload does not call it): info has sim_done_s,
    sim_expected_s, buckets_done, buckets, timing_bucket_bytes, elapsed_s, estimated_wall_s and
    text (the CLI's progress line). force=True runs even when the memory estimate does not fit."""
    return json.loads(_core.run(_core_of(scenario), force, progress))


def _size(size):
    return str(size) if isinstance(size, int) else size


def collective(
    scenario,
    op="all_reduce",
    sizes=None,
    algo=None,
    protocol=None,
    model=None,
    calibration=None,
    ranks=0,
    min_bytes="32M",
    max_bytes="32M",
    step_factor=2,
    channels=None,
    chunk_bytes=None,
    root=0,
    step_latency="0",
    hbm=_core.default_hbm,
):
    """`syncsim collective --json` as a dict (the nccl-tests JSON: config, results, ...). `sizes`
    lists the sizes to run (ints are bytes; strings as -b/-e read them: "64M" = 64 MiB, "1GB");
    without it min_bytes * step_factor^k up to max_bytes. The other arguments are the CLI's flags
    of the same names (None: the scenario's choice)."""
    return json.loads(
        _core.collective(
            _core_of(scenario),
            op,
            algo,
            protocol,
            model,
            None if calibration is None else os.fspath(calibration),
            ranks,
            _size(min_bytes),
            _size(max_bytes),
            step_factor,
            [_size(s) for s in (sizes or [])],
            channels,
            None if chunk_bytes is None else _size(chunk_bytes),
            root,
            step_latency,
            hbm,
        )
    )


def sweep(scenario, vary=None, jobs=1, progress=None, columns=None, wall=True, force=False):
    """`syncsim sweep --json` as a list of row dicts, in point order (the last axis of `vary`
    varies fastest). `vary` maps dotted paths to lists of values (strings as --vary reads them,
    e.g. "400Gbps"); None: the scenario's `sweep:` block. Points run on `jobs` threads;
    progress(done, total) is called after each point. `columns` picks result columns (names from
    `syncsim run --list-keys`); wall=False leaves out wall_s."""
    axes = [(str(path), [_set_value(v) for v in values]) for path, values in (vary or {}).items()]
    return json.loads(
        _core.sweep(_core_of(scenario), axes, jobs, columns, wall, force, progress)
    )


def validate(cases=None, jobs=1, suite=None):
    """`syncsim validate --json` as a dict (`cases`, `groups`): the validation suite (or the cases
    and groups named in `cases`) against the published measurements."""
    if isinstance(cases, str):
        cases = [cases]
    return json.loads(
        _core.validate(list(cases or []), jobs, None if suite is None else os.fspath(suite))
    )


def to_dataframe(result):
    """A pandas DataFrame of a result: sweep rows (one row per point), validate()'s cases,
    collective()'s results (nested keys flattened as `out_of_place.time`), or one run() (a single
    row, nested keys flattened with '.'). Needs pandas (Debian: python3-pandas)."""
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("to_dataframe needs pandas (Debian: apt-get install python3-pandas)") from e
    if isinstance(result, list):
        return pd.DataFrame(result)
    if isinstance(result, dict) and "cases" in result and "groups" in result:
        return pd.DataFrame(result["cases"])
    if isinstance(result, dict) and "results" in result and "config" in result:
        return pd.json_normalize(result["results"])
    if isinstance(result, dict):
        return pd.json_normalize(result)
    raise TypeError("expected a result of run, collective, sweep or validate, found %r" % (result,))
