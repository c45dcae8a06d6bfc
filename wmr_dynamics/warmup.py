"""Fill numba's on-disk cache with the compiled engine, so that a user's first run starts at once.

``make install`` runs ``python -m wmr_dynamics.warmup`` after installing the package; run it yourself after
an upgrade in another environment (a ROS workspace, a container image).  It compiles, or loads when they
are already cached, the kinematic engine, the dynamic engine and the parallel batch kernel, with a short
run of a bundled vehicle on a small rough grid (the kernels are specialized on argument types, not on the
vehicle, so every vehicle, terrain and contact model then runs from the cache), and prints what it did.
"""

from __future__ import annotations

import argparse
import sys
import time


def warm_up(quiet: bool = False, vehicle: str = "rocky7") -> dict[str, float]:
    """Compile/load every engine part; returns the wall time (s) spent on each.

    ``vehicle``: a bundled vehicle's name or the path of a vehicle .yaml / .urdf (``setup.py install`` passes
    the source tree's, since a colcon build's interpreter need not find the installed share folder yet)."""
    import wmr_dynamics as wmr
    from wmr_dynamics.compiled import cache
    from wmr_dynamics.simulate import Simulator
    from wmr_dynamics.terrain import gaussian_rough_terrain

    model = wmr.load_model(vehicle)
    # a small rough grid: the terrain kinds share one argument type (compiled/terrain.py), and the Python-path
    # kernels a run calls around the engine (contact initialization: FK, collision, Jacobians) compile too
    ground = gaussian_rough_terrain(rms=0.02, corr_len=0.5, bounds=(-2.0, 3.0, -2.0, 2.0), seed=0)
    times: dict[str, float] = {}
    for part, mode in (("kinematic", "kinematic"), ("dynamic", "dynamic"), ("dynamic-batch", "dynamic")):
        start = time.perf_counter()
        was_warm = cache.is_warm(part)
        sim = Simulator(model, ground, mode=mode, dt=0.04, engine="compiled")
        if part == "dynamic-batch":
            sim.compiled.warm_up(batch=True, quiet=True)
        else:
            sim.compiled.warm_up(quiet=True)
            sim.run(0.2, (0.5, 0.0), progress=False)
        times[part] = time.perf_counter() - start
        if not quiet:
            what = "loaded from the cache" if was_warm else "compiled"
            print(f"wmr_dynamics: {part} engine {what} in {times[part]:.1f} s", flush=True)
    return times


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m wmr_dynamics.warmup", description=__doc__.splitlines()[0])
    p.add_argument("--quiet", action="store_true", help="print nothing")
    p.add_argument("--vehicle", default="rocky7", help="vehicle to run (bundled name or .yaml/.urdf path); the "
                   "compiled kernels do not depend on it (default rocky7)")
    args = p.parse_args(argv)
    times = warm_up(args.quiet, args.vehicle)
    if not args.quiet:
        from wmr_dynamics._jit import cache_dir

        print(f"wmr_dynamics: engine cache ready in {cache_dir()} ({sum(times.values()):.0f} s)")
    from wmr_dynamics.compiled.cache import STALE_DAYS, prune

    removed, freed = prune()
    if removed and not args.quiet:
        print(f"wmr_dynamics: removed {removed} engine cache(s) of other versions unused for {STALE_DAYS:.0f} days "
              f"({freed / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
