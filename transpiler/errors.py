"""User-facing errors: every refusal names the file, line and construct, and says what to do."""

from __future__ import annotations

import linecache


class TranspileError(SyntaxError):
    """A construct or call that cannot be differentiated.

    ``str(err)`` reads ``file:line:col: message``, then the offending source line with a caret
    under the construct, then a hint. It subclasses SyntaxError so tracebacks show the location.
    """

    def __init__(self, message: str, filename: str = "<unknown>", lineno: int = 0,
                 col: int = 0, hint: str = ""):
        text = linecache.getline(filename, lineno).rstrip("\n") if lineno else ""
        full = f"{message}\nhint: {hint}" if hint else message
        super().__init__(full, (filename, lineno, col + 1, text))
        self.message, self.hint, self.col = message, hint, col

    def __str__(self) -> str:
        where = f"{self.filename}:{self.lineno}:{self.col + 1}: " if self.lineno else ""
        lines = [f"{where}{self.message}"]
        if self.text:
            stripped = self.text.lstrip()
            lines.append("    " + stripped)
            lines.append("    " + " " * max(self.col - (len(self.text) - len(stripped)), 0) + "^")
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


class NoRuleError(TranspileError):
    """A call to a function that has no adjoint rule and is not known to be non-differentiable."""


def error_at(node, ctx, message: str, hint: str = "", cls=TranspileError) -> TranspileError:
    """Build ``cls`` located at ``node`` in the user's file (``ctx`` supplies file and offsets)."""
    lineno = getattr(node, "lineno", 0) or 0
    col = (getattr(node, "col_offset", 0) or 0) + ctx.indent
    return cls(message, ctx.filename, lineno, col, hint)
