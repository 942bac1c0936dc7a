"""The package's one exception tree: the library's exceptions (smelt::error and
its kinds), raised by smelt._core, and ReportError, the plots' own, under the
same root smelt.Error.

Each carries the C++ message unchanged: a configuration error names the field,
the value and the rule, one violation per line, as the CLI prints them.
"""

from __future__ import annotations


class Error(Exception):
    """Root of smelt's exceptions (smelt::error); catch it to handle any of them."""


class ConfigError(Error, ValueError):
    """A config or an option that breaks a rule (smelt::config_error).

    ``violations`` holds each broken rule as a tuple ``(field, value, rule)``;
    ``str(e)`` joins their texts one per line.
    """

    violations: list[tuple[str, str, str]]

    def __init__(self, message: str = "", violations: list[tuple[str, str, str]] | None = None) -> None:
        super().__init__(message)
        self.violations = list(violations or [])


class InfeasibleError(Error):
    """A request with no answer: a fit that converges from no start (smelt::infeasible_error)."""


class IOError(Error, OSError):  # noqa: A001 - smelt.IOError, as the library's io_error
    """A file that cannot be read, parsed or written (smelt::io_error); also an OSError."""


class CudaError(Error):
    """A CUDA failure or a device that cannot run the request (smelt::cuda_error)."""


class ReportError(Error, ValueError):
    """A report that cannot be plotted (smelt.plot): its lines name the file, the JSON path, the value and the
    rule. Raised by the Python side only; ``python -m smelt plot`` exits 2 on it."""


SmeltIOError = IOError
