"""Property-based fuzzing of every input boundary (reliability issue, item 5; docs/reliability.md).

One invariant for all targets: malformed input gives either a :class:`~wmr_dynamics.errors.WmrError` whose
message names the input (the CLIs: exit status 2 with a one-line message; argparse: exit 2), or a result that
is finite and passes the run's sanity checks — never another exception, a hang or silent nonsense.

Targets: the vehicle YAML (as a dict and as a file), the URDF (mutated attributes, cut or garbage files),
terrain files (wmrde grids, .npy heightmaps, heightmap YAML headers, SDF worlds), the CLIs' argument parsing
and ``wmr-sim`` end to end, and the public API's arrays (Simulator.run, rollout_batch, Stepper.advance).

The number of examples per target is ``WMR_FUZZ_EXAMPLES`` (default 8, so the normal suite stays fast);
``make fuzz`` runs thousands and, with ``WMR_FUZZ_REPORT=<file>``, writes the outcome counts per target and
class there.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile
import warnings
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import wmr_dynamics as wmr
from wmr_dynamics import cli
from wmr_dynamics.errors import SimulationError, WmrError
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.stepper import Stepper
from wmr_dynamics.terrain import Plane, Terrain, load_terrain

ROOT = Path(__file__).resolve().parent.parent
ZOE_URDF = ROOT / "urdf" / "zoe.urdf"
ZOE_TEXT = ZOE_URDF.read_text()
ZOE_CFG = yaml.safe_load((ROOT / "config" / "zoe.yaml").read_text())

EXAMPLES = int(os.environ.get("WMR_FUZZ_EXAMPLES", "8"))
REPORT = os.environ.get("WMR_FUZZ_REPORT")
OUTCOMES: dict[str, Counter] = defaultdict(Counter)


def fuzz(weight: float = 1.0) -> settings:
    """Settings of one target: ``weight`` × WMR_FUZZ_EXAMPLES examples, no deadline (first calls compile)."""
    return settings(max_examples=max(1, int(EXAMPLES * weight)), deadline=None, derandomize=not REPORT,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    if REPORT:
        Path(REPORT).write_text(json.dumps({k: dict(v) for k, v in sorted(OUTCOMES.items())}, indent=1) + "\n")


@contextlib.contextmanager
def outcome(target: str, *names: str):
    """Count the outcome of one example of ``target``; a WmrError must have a message naming the input (one of
    ``names``, when given).  Any other exception escapes and fails the test."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    except WmrError as e:
        msg = str(e)
        assert msg.strip(), f"{type(e).__name__} without a message"
        if isinstance(e, SimulationError):  # a run that cannot go on names the step's time
            assert re.search(r"t = [-+\d.e]+ s", msg), f"{type(e).__name__} does not name the time: {msg}"
        elif names:
            assert any(n in msg for n in names), f"{type(e).__name__} does not name the input {names}: {msg}"
        OUTCOMES[target][f"{type(e).__name__}"] += 1
        return
    OUTCOMES[target]["accepted"] += 1


# ---- junk values -----------------------------------------------------------------------------------------------
NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**12, 10**12),
                    st.sampled_from([0, -1, 1e30, -1e30, 1e-300, 0.5, 2.0]))
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=12))
JUNK = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                    max_leaves=8)
NUMBER_TEXT = st.one_of(NUMBERS.map(repr), st.sampled_from(["nan", "inf", "-inf", "", "abc", "1e999", "0x10",
                                                             "1,2", " ", "1e30", "-0", "NaN"]),
                        st.text(max_size=8))
PLAUSIBLE = st.floats(-3.0, 3.0)
#: mostly plausible numbers, sometimes junk: deep enough to get past the first check
MOSTLY_OK = st.one_of(PLAUSIBLE, PLAUSIBLE, PLAUSIBLE, NUMBERS)
MOSTLY_OK_TEXT = st.one_of(PLAUSIBLE.map(repr), PLAUSIBLE.map(repr), PLAUSIBLE.map(repr), NUMBER_TEXT)


def _paths(d: object, prefix: tuple = ()) -> list[tuple]:
    """Every key path of a nested dict/list (including the inner nodes)."""
    out = [prefix] if prefix else []
    if isinstance(d, dict):
        for k, v in d.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(d, list):
        for k, v in enumerate(d):
            out += _paths(v, (*prefix, k))
    return out


CFG_PATHS = _paths(ZOE_CFG)


def _set(d: dict, path: tuple, value: object) -> dict:
    import copy

    d = copy.deepcopy(d)
    node = d
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return d


# ---- vehicle YAML ----------------------------------------------------------------------------------------------
def _leaf(path: tuple) -> object:
    node = ZOE_CFG
    for k in path:
        node = node[k]
    return node


@fuzz(2)
@given(path=st.sampled_from(CFG_PATHS), value=JUNK, scale=st.one_of(st.floats(-2, 2), NUMBERS), junk=st.booleans(),
       extra=st.one_of(st.none(), st.none(), st.tuples(st.text(max_size=6), JUNK)))
def test_fuzz_vehicle_yaml_dict(path, value, scale, junk, extra):
    old = _leaf(path)
    if not junk and isinstance(old, (int, float)) and not isinstance(old, bool):
        value = old * scale  # a number of the right kind, maybe of the wrong sign or size
    cfg = _set(ZOE_CFG, path, value)
    if extra is not None:
        cfg[extra[0]] = extra[1]
    with outcome("vehicle YAML (dict)", "config"):
        model = wmr.load_model(ZOE_URDF, cfg)
        assert model.num_wheels >= 1 and np.all(np.isfinite(model.wheel_radii)) and model.total_mass > 0


@fuzz()
@given(text=st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
                      st.integers(0, 900).map(lambda k: (ROOT / "config" / "zoe.yaml").read_text()[:k])))
def test_fuzz_vehicle_yaml_file(text):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "vehicle.yaml"
        p.write_text(f"urdf: {ZOE_URDF}\n{text}" if "urdf:" not in text else text, encoding="utf-8",
                     errors="replace")
        with outcome("vehicle YAML (file)", str(p), "vehicle.yaml"):
            wmr.load_model(p)


# ---- URDF ------------------------------------------------------------------------------------------------------
ATTRS = [m.span(1) for m in re.finditer(r'="([^"]*)"', ZOE_TEXT)]
ELEMENTS = [m.span() for m in re.finditer(r"<(link|joint|inertial|collision|origin|mass|inertia|limit|axis)\b[^>]*?"
                                          r"(/>|>.*?</\1>)", ZOE_TEXT, re.S)]


@st.composite
def urdf_text(draw) -> bytes:
    kind = draw(st.sampled_from(["attribute", "attribute", "element", "cut", "garbage"]))
    if kind == "attribute":
        a, b = draw(st.sampled_from(ATTRS))
        return (ZOE_TEXT[:a] + draw(NUMBER_TEXT).replace('"', "'").replace("<", " ") + ZOE_TEXT[b:]).encode()
    if kind == "element":
        a, b = draw(st.sampled_from(ELEMENTS))
        return (ZOE_TEXT[:a] + ZOE_TEXT[b:]).encode()
    if kind == "cut":
        return ZOE_TEXT[:draw(st.integers(0, len(ZOE_TEXT)))].encode()
    return draw(st.binary(max_size=300))


@fuzz(2)
@given(data=urdf_text())
def test_fuzz_urdf(data):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "robot.urdf"
        p.write_bytes(data)
        with outcome("URDF", str(p), "config"):
            model = wmr.load_model(p, ZOE_CFG)
            assert np.all(np.isfinite(model.wheel_radii)) and np.isfinite(model.total_mass)


# ---- terrain files ---------------------------------------------------------------------------------------------
def _check_terrain(t: Terrain) -> None:
    for x, y in ((0.0, 0.0), (0.3, -0.2), (5.0, 5.0)):
        assert np.isfinite(t.height(x, y))


@fuzz(2)
@given(header=st.lists(NUMBER_TEXT, min_size=0, max_size=7),
       heights=st.lists(st.one_of(PLAUSIBLE.map(repr), MOSTLY_OK_TEXT), max_size=30), good=st.booleans(),
       clean=st.lists(PLAUSIBLE.map(repr), min_size=2, max_size=15))
def test_fuzz_wmrde_grid(header, heights, good, clean):
    if good:  # a plausible header with plausible heights (and maybe one of the junk ones)
        heights = 2 * clean if not heights else [heights[0], *(2 * clean)[1:]]
        header = ["0", "1", "2", "-1", "1", str(len(clean))]
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "grid.txt"
        p.write_text(",".join(header + heights))
        with outcome("terrain: wmrde grid", str(p)):
            _check_terrain(load_terrain(p))


@fuzz(2)
@given(a=st.one_of(hnp.arrays(dtype=st.sampled_from([np.float64, np.float32, np.int32, np.bool_, np.complex128, "U3"]),
                              shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=5)),
                   hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=2, max_side=6),
                              elements=st.one_of(PLAUSIBLE, PLAUSIBLE, NUMBERS))),
       resolution=st.one_of(st.none(), st.floats(1e-3, 1.0), NUMBERS))
def test_fuzz_npy_heightmap(a, resolution):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "h.npy"
        np.save(p, a)
        with outcome("terrain: .npy heightmap", str(p), "resolution"):
            _check_terrain(load_terrain(p, **({} if resolution is None else {"resolution": resolution})))


HEIGHTMAP_KEYS = ["image", "resolution", "origin", "z_min", "z_max", "height_scale", "row0", "colour"]


HEIGHTMAP_VALUES = {"image": st.sampled_from(["h.npy", "h.npy", "h.png", "none.npy", "h.txt"]),
                    "resolution": st.one_of(st.floats(1e-3, 1.0), st.floats(1e-3, 1.0), NUMBERS),
                    "origin": st.one_of(st.lists(PLAUSIBLE, min_size=2, max_size=2),
                                        st.lists(MOSTLY_OK, min_size=1, max_size=3)),
                    "z_min": MOSTLY_OK, "z_max": MOSTLY_OK,
                    "height_scale": MOSTLY_OK, "row0": st.sampled_from(["top", "bottom", "left"])}


@st.composite
def heightmap_header(draw) -> dict:
    keys = draw(st.lists(st.sampled_from(HEIGHTMAP_KEYS), max_size=7, unique=True))
    if draw(st.booleans()):  # values of the right kinds
        return {k: draw(HEIGHTMAP_VALUES[k]) for k in keys if k in HEIGHTMAP_VALUES}
    return {k: draw(st.one_of(HEIGHTMAP_VALUES[k], JUNK) if k in HEIGHTMAP_VALUES else JUNK) for k in keys}


@fuzz(2)
@given(header=heightmap_header(), base=st.booleans())
def test_fuzz_heightmap_yaml(header, base):
    with tempfile.TemporaryDirectory() as d:
        np.save(Path(d) / "h.npy", np.linspace(0, 1, 12).reshape(3, 4))
        if base:
            header = {"image": "h.npy", "resolution": 0.1, "origin": [0, 0], **header}
        (Path(d) / "h.png").write_bytes(b"\x89PNG not an image")
        p = Path(d) / "map.yaml"
        p.write_text(yaml.safe_dump(header))
        with outcome("terrain: heightmap YAML", str(p)):
            _check_terrain(load_terrain(p))


@st.composite
def sdf_world(draw) -> str:
    """A one-model world: clean (plausible poses and sizes, yaw-only rotations) or with junk numbers."""
    clean = draw(st.booleans())

    def nums(n: int, lo: float = -3.0, hi: float = 3.0) -> str:
        if clean:
            return " ".join(repr(v) for v in draw(st.lists(st.floats(lo, hi), min_size=n, max_size=n)))
        junk = draw(st.lists(st.one_of(MOSTLY_OK_TEXT, NUMBER_TEXT), min_size=n - 1, max_size=n + 1))
        return " ".join(junk).replace("<", " ").replace("&", " ")

    pose = f"{nums(3)} 0 0 {nums(1)}" if clean else nums(6)
    geometry = draw(st.sampled_from([
        lambda: f"<box><size>{nums(3, 0.05, 3.0)}</size></box>",
        lambda: f"<plane><normal>{nums(2, -0.5, 0.5)} 1</normal></plane>" if clean
        else f"<plane><normal>{nums(3)}</normal></plane>",
        lambda: f"<heightmap><uri>h.npy</uri><size>{nums(3, 0.5, 5.0)}</size><pos>{nums(3)}</pos></heightmap>",
        lambda: "<mesh><uri>x.dae</uri></mesh>",
        lambda: "<box>",
    ]))()
    return (f"<sdf version='1.7'><world name='w'><model name='m'><pose>{pose}</pose><link name='l'>"
            f"<collision name='c'><geometry>{geometry}</geometry></collision></link></model></world></sdf>")


@fuzz(2)
@given(text=st.one_of(sdf_world(), st.text(max_size=100)))
def test_fuzz_sdf_world(text):
    with tempfile.TemporaryDirectory() as d:
        np.save(Path(d) / "h.npy", np.linspace(0, 1, 12).reshape(3, 4))
        p = Path(d) / "world.sdf"
        p.write_text(text)
        with outcome("terrain: SDF world", str(p)):
            _check_terrain(load_terrain(p))


# ---- CLI -------------------------------------------------------------------------------------------------------
SIM_OPTIONS = ["--vehicle", "--terrain", "--rms", "--corr-len", "--seed", "--mode", "--contact", "--actuator", "--dt",
               "--duration", "--speed", "--yaw-rate", "--integrator", "--controller", "--engine", "--x", "--y",
               "--yaw", "--slip", "--bogus"]


@fuzz(4)
@given(pairs=st.lists(st.tuples(st.sampled_from(SIM_OPTIONS), MOSTLY_OK_TEXT), max_size=5),
       junk=st.lists(st.one_of(st.sampled_from(SIM_OPTIONS), NUMBER_TEXT), max_size=3),
       which=st.sampled_from(["sim", "show"]))
def test_fuzz_cli_argument_parsing(pairs, junk, which):
    argv = [f"{o}={v}" for o, v in pairs] + junk
    assume("-h" not in argv and "--help" not in argv)
    parser = cli.sim_parser() if which == "sim" else cli.show_parser()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            parser.parse_args(argv)
        OUTCOMES["CLI argument parsing"]["accepted"] += 1
    except SystemExit as e:
        assert e.code == 2 and f"wmr-{which}: error:" in err.getvalue()
        OUTCOMES["CLI argument parsing"]["argparse exit 2"] += 1


@fuzz(0.5)
@given(vehicle=st.sampled_from(["zoe", "rocky7", "nope", "x.urdf", "config/zoe.yaml"]),
       terrain=st.sampled_from(["flat", "rough", "ramp", "steps", "none.txt", "x.sdf"]),
       mode=st.sampled_from(["kinematic", "dynamic"]),
       speed=st.one_of(st.floats(-3, 3), st.sampled_from([1e6, -1e6, 0.0])),
       yaw_rate=st.one_of(st.floats(-3, 3), st.sampled_from([1e6, 50.0])),
       dt=st.sampled_from([0.04, 0.01, 1e-9, 5.0, -1.0]), x=st.floats(-1e9, 1e9),
       rms=st.sampled_from([0.05, 0.0, -1.0, 1e30]), seed=st.sampled_from([1, -1, 2**40]))
def test_fuzz_wmr_sim_end_to_end(vehicle, terrain, mode, speed, yaw_rate, dt, x, rms, seed):
    with tempfile.TemporaryDirectory() as d:
        # --opt=value: argparse reads "-1e-05" after a space as an option (its own limitation, an exit 2)
        argv = [f"--vehicle={vehicle}", f"--terrain={terrain}", f"--mode={mode}", f"--speed={speed!r}",
                f"--yaw-rate={yaw_rate!r}", f"--dt={dt!r}", "--duration=0.2", f"--x={x!r}", f"--rms={rms!r}",
                f"--seed={seed}", "--no-plots", f"--out={d}", "--json"]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.sim_main(argv)
            except SystemExit as e:  # argparse
                code = e.code
        assert code in (0, 2), code
        if code == 2:
            lines = err.getvalue().strip().splitlines()
            assert lines[-1].startswith("wmr-sim: error: ") and "Traceback" not in err.getvalue()
            OUTCOMES["wmr-sim end to end"]["exit 2"] += 1
        else:
            summary = json.loads(out.getvalue().strip().splitlines()[-1])
            assert all(np.isfinite(summary["final_pose"])) and summary["distance_m"] < 100.0
            OUTCOMES["wmr-sim end to end"]["exit 0"] += 1


# ---- API arrays ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def zoe():
    return wmr.load_model("zoe")


ARRAYS = st.one_of(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=16),
               elements=st.floats(allow_nan=True, allow_infinity=True)),
    hnp.arrays(np.float64, st.sampled_from([(14,), (2, 14), (13,), (2, 13), (2,), (1, 3, 2), (2, 4, 2)]),
               elements=st.floats(-2, 2) | st.sampled_from([0.0, np.nan, 1e30])),
    JUNK,
)
#: arrays of the right shapes with plausible values (sometimes an extreme one)
COMMAND_ROWS = hnp.arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 6), st.just(2)),
                          elements=st.one_of(st.floats(-2, 2), st.floats(-2, 2), st.sampled_from([0.0, 50.0, 1e4])))
COMMAND = st.one_of(st.tuples(PLAUSIBLE, PLAUSIBLE), ARRAYS)


@st.composite
def near_state(draw) -> np.ndarray:
    """Zoë's upright state on the plane, perturbed (a tilted or raised body, bent joints, a non-unit quaternion)."""
    q = np.zeros(14)
    q[3], q[6] = 1.0, 0.434
    q += np.array(draw(st.lists(st.floats(-0.5, 0.5), min_size=14, max_size=14)))
    return q


STATES = st.one_of(st.none(), near_state(), near_state(), ARRAYS)


@fuzz(2)
@given(q0=STATES, command=COMMAND, mode=st.sampled_from(["kinematic", "dynamic"]))
def test_fuzz_simulator_run(zoe, q0, command, mode):
    sim = Simulator(zoe, Plane(), mode=mode, dt=0.04 if mode == "kinematic" else 0.01)
    with outcome("API: Simulator.run", "q0", "command", "qvel0"):
        r = sim.run(0.08, command, q0=q0, progress=False)
        assert np.isfinite(r.q).all()


@fuzz(2)
@given(commands=st.one_of(COMMAND_ROWS, COMMAND_ROWS, ARRAYS), q0=STATES, qvel0=st.one_of(st.none(), ARRAYS))
def test_fuzz_rollout_batch(zoe, commands, q0, qvel0):
    sim = Simulator(zoe, Plane(), mode="dynamic", dt=0.01)
    with outcome("API: rollout_batch", "commands", "q0", "qvel0"):
        r = sim.rollout_batch(commands, q0=q0, qvel0=qvel0)
        ok = r.status[:, 0] == 0
        assert np.isfinite(r.q[ok]).all()


@fuzz(2)
@given(command=st.one_of(st.none(), COMMAND), rates=st.one_of(st.none(), st.none(), ARRAYS),
       n=st.one_of(st.integers(-2, 5), st.integers(0, 5), JUNK))
def test_fuzz_stepper_advance(zoe, command, rates, n):
    stepper = Stepper(zoe, Plane(), mode="dynamic", dt=0.01)
    data = stepper.make_data()
    with outcome("API: Stepper.advance", "command", "rates", "n"):
        stepper.advance(data, n, command=command, rates=rates)
        assert np.isfinite(data.q).all()
