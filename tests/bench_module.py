"""The scripts under bench/ are not a package: the tests that drive them (the live ns-2
cross-checks) load one as a module by its path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def bench_module(relpath: str, name: str) -> ModuleType:
    """``bench/<relpath>`` loaded as module ``name``, registered in ``sys.modules`` first
    (dataclasses look their module up there while the class body is processed)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / relpath)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
