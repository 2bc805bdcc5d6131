"""The packages of ``sessions_app`` stand on floors (docs/architecture.md §1, §3): each imports only
packages on floors below its own, imports inside functions included, so no two packages import each
other, and the lower floors import no Django. Each folder and each top-level module of
``sessions_app`` counts as a package; a new one must be given its floor here, and in the docs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "sessions_app"

FLOORS = {
    "sessionfiles": 0,
    **dict.fromkeys(["search", "display", "assistants", "channel_layer", "imports", "models", "converters"], 1),
    **dict.fromkeys(["cli", "forms", "services"], 2),
    "access": 3,
    **dict.fromkeys(["transfer", "partials"], 4),
    **dict.fromkeys(["views", "live"], 5),
    **dict.fromkeys(
        ["urls", "accounts_urls", "sharing_urls", "middleware", "templatetags", "management", "apps", "admin"], 6
    ),
}
WITHOUT_DJANGO = ("sessionfiles", "search", "cli", "channel_layer", "imports")
DJANGO = ("django", "channels", "daphne", "django_htmx", "django_ratelimit", "axes")


def _modules() -> list[Path]:
    return sorted(
        p for p in APP.rglob("*.py") if "migrations" not in p.relative_to(APP).parts and p != APP / "__init__.py"
    )


def _package(path: Path) -> str:
    return path.relative_to(APP).parts[0].removesuffix(".py")


def _imported(path: Path) -> list[str]:
    """Every module name ``path`` imports, at any depth of its code, relative imports made absolute."""
    names: list[str] = []
    here = ["sessions_app", *path.relative_to(APP).parent.parts]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
            name = base if node.level else (node.module or "")
            names.append(name)
            if name == "sessions_app":  # ``from sessions_app import views``: the package is the name
                names += [f"sessions_app.{alias.name}" for alias in node.names]
    return names


def _edges() -> dict[tuple[str, str], list[str]]:
    """(importer, imported) package pairs of sessions_app, each with the modules that make it."""
    edges: dict[tuple[str, str], list[str]] = {}
    for path in _modules():
        source = _package(path)
        for name in _imported(path):
            parts = name.split(".")
            if parts[0] == "sessions_app" and len(parts) > 1 and parts[1] != source:
                edges.setdefault((source, parts[1]), []).append(str(path.relative_to(APP)))
    return edges


def test_every_package_has_a_floor() -> None:
    packages = {_package(p) for p in _modules()}
    assert packages <= set(FLOORS), f"packages without a floor: {sorted(packages - set(FLOORS))}"


def test_packages_import_only_the_floors_below_theirs() -> None:
    upward = {
        f"{a} (floor {FLOORS[a]}) imports {b} (floor {FLOORS.get(b)}): {sorted(set(where))}"
        for (a, b), where in _edges().items()
        if a in FLOORS and b in FLOORS and FLOORS[b] >= FLOORS[a]
    }
    assert not upward, "\n".join(sorted(upward))


@pytest.mark.parametrize("package", WITHOUT_DJANGO)
def test_the_lower_floors_import_no_django(package: str) -> None:
    found = {
        f"{path.relative_to(APP)}: {name}"
        for path in (APP / package).rglob("*.py")
        for name in _imported(path)
        if name.split(".")[0] in DJANGO
    }
    assert not found, sorted(found)
