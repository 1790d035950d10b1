"""Analyses: they read the AST and return data; they never rewrite it."""
