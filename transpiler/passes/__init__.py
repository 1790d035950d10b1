"""Compiler passes, one per module. Each is ``pass(fn: gast.FunctionDef, ctx) -> FunctionDef``."""
