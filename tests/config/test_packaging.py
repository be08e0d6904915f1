"""The package's metadata builds without a deprecation warning: the licence is an SPDX expression
(PEP 639; a TOML table is deprecated from setuptools 77, which the build system then requires) and
the licence file ships in the wheel."""

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_licence_is_an_spdx_string_naming_the_licence_file():
    project = PYPROJECT["project"]
    assert isinstance(project["license"], str) and project["license"] == "Apache-2.0"
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8")[:200]
    assert project["license-files"] == ["LICENSE"]
    classifiers = project.get("classifiers", [])
    assert not [c for c in classifiers if c.startswith("License ::")]  # setuptools refuses both


def test_the_build_system_requires_a_setuptools_that_reads_it():
    (setuptools,) = [Requirement(r) for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    lowest = min(Version(spec.version) for spec in setuptools.specifier if spec.operator in (">=", "=="))
    assert lowest >= Version("77")


def test_every_package_of_the_repository_states_its_licence_the_same_way():
    """The API's client (client/) is installed by `make install` too: its metadata must not bring the
    warning back."""
    for path in sorted(ROOT.glob("*/pyproject.toml")):
        metadata = tomllib.loads(path.read_text(encoding="utf-8"))
        assert isinstance(metadata["project"]["license"], str), path
        (setuptools,) = [Requirement(r) for r in metadata["build-system"]["requires"] if r.startswith("setuptools")]
        assert min(Version(spec.version) for spec in setuptools.specifier) >= Version("77"), path
