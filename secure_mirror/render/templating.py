"""Jinja2 set up the careful way: StrictUndefined, trailing newlines kept, errors that name the template and
line but never dump the rendering context (which holds secrets)."""

from __future__ import annotations

import traceback
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import jinja2

from secure_mirror.errors import EXIT_INTERNAL, SecureMirrorError
from secure_mirror.paths import REPO_ROOT

_PACKAGE_DATA = Path(__file__).resolve().parent.parent / "_data"


class TemplateFailure(SecureMirrorError):
    """A template is broken (our bug, not the user's): names the template and line, never the values."""

    exit_code = EXIT_INTERNAL


def data_dir(name: str) -> Path:
    """``templates`` or ``jaas``: the installed package copy, or the checkout's top-level folder."""
    for candidate in (_PACKAGE_DATA / name, REPO_ROOT / name):
        if candidate.is_dir():
            return candidate
    raise TemplateFailure(
        f"the {name}/ folder is missing from this installation (looked in {_PACKAGE_DATA} and {REPO_ROOT})"
    )


_FILTERS: dict[str, Callable[..., Any]] = {}


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    loader = jinja2.PrefixLoader({name: jinja2.FileSystemLoader(str(data_dir(name))) for name in ("templates", "jaas")})
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters.update(_FILTERS)
    return env


def register_filter(name: str, function: Callable[..., Any]) -> None:
    """A filter for every template; registering does not look for the templates (the job imports render's
    constants from a zip on a YARN container, where there are none)."""
    _FILTERS[name] = function
    if environment.cache_info().currsize:
        environment().filters[name] = function


def render(name: str, **context: Any) -> str:
    """Render template ``name`` (e.g. ``templates/krb5.conf.j2``); our own errors (bad values) pass through."""
    try:
        return environment().get_template(name).render(**context)
    except SecureMirrorError:
        raise
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateFailure(f"template {exc.name or name} line {exc.lineno}: {exc.message}") from None
    except jinja2.TemplateError as exc:  # e.g. UndefinedError: "'x' is undefined" names a variable, not a value
        raise TemplateFailure(f"template {name} line {_template_line(exc)}: {exc.message}") from None
    except Exception as exc:  # noqa: BLE001 - a Python error's text may quote a value: report only its type
        raise TemplateFailure(f"template {name} line {_template_line(exc)}: {type(exc).__name__}") from None


def _template_line(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(".j2")]
    return str(frames[-1].lineno) if frames else "?"
