"""Terrain files are checked at the boundary (reliability issue, item 1): non-numeric values, NaN, wrong
shapes and absurd magnitudes are TerrainFileError naming the file and what is wrong; SDF errors name the
file and the element."""

from __future__ import annotations

import numpy as np
import pytest

from wmr_dynamics.errors import TerrainError, TerrainFileError, WmrError
from wmr_dynamics.terrain import HeightGrid, load_terrain


def _sdf(geometry: str, pose: str = "0 0 0 0 0 0") -> str:
    return (f"<sdf version='1.7'><world name='w'><model name='m'><pose>{pose}</pose><link name='l'>"
            f"<collision name='c'><geometry>{geometry}</geometry></collision></link></model></world></sdf>")


@pytest.mark.parametrize("text, message", [
    ("0,1,2,0,1,2,0,nan,0,0", "1 non-finite height(s)"),
    ("0,1,2,0,1,2,0,1e30,0,0", "1 height(s) beyond ±100000 m, first 1e+30 m at node (i=1, j=0)"),
    ("0,1e30,2,0,1,2,0,0,0,0", "grid spacing (dx=1e+30, dy=1) m must lie in [1e-06, 10000] m"),
    ("0,1e-300,2,0,1,2,0,0,0,0", "grid spacing (dx=1e-300, dy=1) m must lie in"),
    ("9e6,9.5e6,2,0,1,2,0,0,0,0", "grid spacing"),
    ("0,1,2,0,1,2,a,b,c,d", "heights: value #1 'a' is not a number"),
    ("0,1,2,0,1,2,0,0,0", "wrong count of heights: header says nx*ny = 2*2 = 4, file has 3"),
    ("", "bad header"),
])
def test_bad_wmrde_grids_name_the_file(tmp_path, text, message):
    p = tmp_path / "grid.txt"
    p.write_text(text)
    with pytest.raises(TerrainFileError) as e:
        load_terrain(p)
    assert str(e.value).startswith(str(p)) and message in str(e.value)


def test_a_grid_beyond_the_coordinate_limit_is_refused(tmp_path):
    p = tmp_path / "far.txt"
    p.write_text("2e7,2e7+1,2,0,1,2,0,0,0,0".replace("2e7+1", "20000001"))
    with pytest.raises(TerrainFileError, match=r"the grid spans x = 2e\+07 .. 2e\+07 m, beyond ±1e\+07 m"):
        load_terrain(p)


@pytest.mark.parametrize("array, message", [
    (np.zeros((3, 3, 3)), "must hold a 2-D array of real numbers, got float64 shape (3, 3, 3)"),
    (np.full((3, 3), 1e30), "9 height(s) beyond ±100000 m"),
    (np.array([[1 + 2j, 1], [1, 1]]), "got complex128"),
    (np.array([["a", "b"], ["c", "d"]]), "got <U1"),
    (np.zeros((1, 5)), "at least 2 x 2 nodes"),
])
def test_bad_npy_heightmaps_name_the_file(tmp_path, array, message):
    p = tmp_path / "h.npy"
    np.save(p, array)
    with pytest.raises(TerrainFileError) as e:
        load_terrain(p)
    assert str(p) in str(e.value) and message in str(e.value)


@pytest.mark.parametrize("header, message", [
    ("image: h.npy\nresolution: abc\norigin: [0, 0]\n", "resolution must be a number, got 'abc'"),
    ("image: [1, 2]\nresolution: 0.1\norigin: [0, 0]\n", "'image' must be a file name (.png or .npy), got [1, 2]"),
    ("image: h.npy\nresolution: 0.1\norigin: [0, 0]\nheight_scale: 1e300\n", "height(s) beyond ±100000 m"),
    ("image: h.png\nresolution: 0.1\norigin: [0, 0]\nz_min: 1\nz_max: 0\n", "z_max (0 m) is below z_min (1 m)"),
    ("- a\n- b\n", "heightmap header must be a mapping"),
])
def test_bad_heightmap_headers_name_the_file(tmp_path, header, message):
    np.save(tmp_path / "h.npy", np.ones((3, 3)))
    (tmp_path / "h.png").write_bytes(b"\x89PNG not really")
    p = tmp_path / "map.yaml"
    p.write_text(header)
    with pytest.raises(TerrainFileError) as e:
        load_terrain(p)
    assert str(e.value).startswith(str(p)) and message in str(e.value)


@pytest.mark.parametrize("geometry, pose, message", [
    ("<box><size>-1 1 1</size></box>", "0 0 0 0 0 0", "link 'l' collision 'c' <box>: Box size must be positive"),
    ("<plane><normal>0 0 0</normal></plane>", "0 0 0 0 0 0", "collision 'c' <plane>: Plane normal"),
    ("<box><size>1 1 1</size></box>", "1e30 0 0 0 0 0", "<pose> '1e30 0 0 0 0 0': values beyond ±1e+07 m"),
    ("<box><size>1 1 1e30</size></box>", "0 0 0 0 0 0", "<size> '1 1 1e30': values beyond"),
    ("<box><size>1 1 nan</size></box>", "0 0 0 0 0 0", "<size> must hold 3 numbers, got '1 1 nan'"),
])
def test_bad_sdf_worlds_name_the_file_and_element(tmp_path, geometry, pose, message):
    p = tmp_path / "world.sdf"
    p.write_text(_sdf(geometry, pose))
    with pytest.raises(TerrainFileError) as e:
        load_terrain(p)
    assert str(e.value).startswith(str(p)) and message in str(e.value)


def test_an_sdf_world_in_utf16_is_read_as_its_encoding_declares(tmp_path):
    p = tmp_path / "world.sdf"
    p.write_bytes(("<?xml version='1.0' encoding='UTF-16'?>" + _sdf("<box><size>1 1 0.5</size></box>"))
                  .encode("utf-16"))
    assert load_terrain(p).height(0.0, 0.0) == pytest.approx(0.25)
    p.write_bytes(b"\x00\xff garbage")
    with pytest.raises(TerrainFileError, match=f"{p}: invalid XML"):
        load_terrain(p)


def test_heightgrid_magnitudes_checked_in_code_too_and_the_errors_keep_their_base():
    with pytest.raises(TerrainError, match="HeightGrid: 1 height"):
        HeightGrid(0, 0, 0.1, 0.1, [[0, 0], [0, 1e9]])
    assert issubclass(TerrainFileError, TerrainError) and issubclass(TerrainFileError, WmrError)
