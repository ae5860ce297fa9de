"""Checked by mypy and pyright (strict), never run: `Fallback(models=...)` takes a list, and
a checker refuses the tuple that the constructor refuses at run time.

A line that must be an error ends in `# type: ignore[<mypy code>]`; both checkers report
the comment when its line is no error, so an error that goes missing fails the check.
"""

# pyright: reportUnnecessaryTypeIgnoreComment=true

from __future__ import annotations

from hookwrap.middleware import Fallback

Fallback(models=["backup"])
Fallback(models=["backup", "other"], on=ConnectionError)
Fallback(models=("backup",))  # type: ignore[arg-type]
Fallback(models=("backup", "other"))  # type: ignore[arg-type]
