"""Annotations that ride on AST nodes. Each key's value documents what it stores."""

from __future__ import annotations

import enum


class Anno(enum.Enum):
    FUNC = "The Python object that a Call's func expression resolves to at compile time."
    ORIGIN = "The user statement (a node) that a generated statement was derived from."
    COMMENT = "Marks an Expr statement that is emitted as a '# ...' comment line."
    ACCUMULATE = "Marks 'bx = e': add partial e into gradient bx (fix_grads decides '=' or '+')."
    SUM = ("Marks a '+' adding two gradients or tangents of a value not known to be a number "
           "or an array: item by item if they are a list's or tuple's (never joined).")
    PURE = "Marks a Call known to have no side effects, so dead-code elimination may drop it."
    LOOP_COPY = "Marks the copy-back of a loop-carried variable at the end of a loop body (ssa)."
    IN_PLACE = ("Marks 'x = x op e' that came from 'x op= e' (in place for arrays, in NumPy), "
                "or 'x = f(.., x, ..)' from a call changing the array x (value: its position).")
    WRITE_BACK = ("Marks 'y = <setitem>(y, s, v)' (or 'y = v') after a write into the view "
                  "v = y[s]: a no-op in NumPy that passes/views.py spells out.")
    SPLIT = "Marks where the primal ends and the adjoint begins (split mode cuts there)."
    EXIT = "Marks the one 'if <flags>: break' that ends a loop body after lower_exits."
    PHI = "Marks a copy that ssa inserted where control flow joins (no comment of its own)."
    ZERO = "Marks a placeholder: gradient (name, of_var) must be defined here, zero if it is not."
    RESET = "Marks a placeholder: gradient name's value is dead here; the next write starts anew."
    BUILTIN = "Marks a Name the compiler wrote for a builtin (len, range): bound in finalize."
    WITH = "Marks an 'if' that is a 'with' block (passes/contexts.py): its Manager."
    ENTERED = "Marks 'v = _entered()' opening a WITH block: v is bound by 'with ... as v'."
    TRY = "Marks an 'if ok:' that is a 'try' (passes/contexts.py): its Attempt."
    TRIED = "Marks 'ok = _tried()' before a TRY block: ok is set by the try and its handler."
    CAUGHT = "Marks 'e = _caught()' opening a TRY block's handler: e is bound by 'except ... as e'."
    CLASSES = "On a Call of a user function: parameter -> the class its argument is known to have."
    VERSIONS = "On the function: each SSA name -> the user variable it versions (ssa)."
    CLOSURE = "Marks the functools.partial lift makes of a closure: its keywords are read late."
    WRITE_COPY = "Marks 'y_1 = y.copy()' that an element write 'y_1[i] = v' follows (lower.write)."
    RESTORE = ("Marks a placeholder at the mirror of an element write (its SSA statement): "
               "where passes/inplace.py may put the overwritten values back (else dropped).")
    BEFORE = "Statements passes/inplace.py puts before a statement (spliced in by its expand)."
    REPLACE = "The statement(s) passes/inplace.py puts in place of a statement (spliced by expand)."
    ITEM = ("On a Call of rt.appended adding a differentiated item: 'number' or, for a NumPy "
            "array, its number of dimensions (the Numba backend types the list by it).")
    INDEXER = ("On a Subscript of a global object that is neither an array nor a container "
               "(np.s_, np.mgrid, a user's object with __getitem__): its dotted name, for the "
               "message that refuses a differentiated index into it (check_kinds).")
    KNOWN = ("On a Call of a user function: (parameter, function, number of bound positional "
             "arguments, bound keywords) for each parameter given a known function (functions).")


_KEY = "_anno"


def setanno(node, key: Anno, value=True) -> None:
    node.__dict__.setdefault(_KEY, {})[key] = value


def getanno(node, key: Anno, default=None):
    return node.__dict__.get(_KEY, {}).get(key, default)


def hasanno(node, key: Anno) -> bool:
    return key in node.__dict__.get(_KEY, {})
