"""Arrays a kernel holds without counting references to them.

numba counts references to every array a kernel passes around: a row view ``Q[s]``
handed to a rule, an array argument of a called function, each costs an atomic
increment and decrement of the array's counter, which in a TD loop cost more than the
step itself. Arrays without a counter (a null ``meminfo``) cost nothing: the compiler
drops the calls. ``docs/decisions/2026-12-04-td-kernels-at-the-limit.md``
gives the figures.

- ``local_stream``: a copy of a run's random stream in the kernel's stack frame;
- ``borrowed``: a view of an array that the kernel's caller keeps alive.

Neither may outlive the kernel's call: never return or store one.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

_STREAM_WORDS = 4  # xoshiro256** (tabular._numba.rng)


@intrinsic
def local_stream(typingctx, state):
    """A copy of the stream ``state`` (``uint64[4]``) in the calling kernel's stack frame:
    an array no other array can alias and without a counter, which the compiler keeps
    in registers."""
    if not (isinstance(state, types.Array) and state.dtype == types.uint64
            and state.ndim == 1):
        return None
    local = types.Array(types.uint64, 1, "C")

    def codegen(context, builder, sig, args):
        source = make_array(sig.args[0])(context, builder, args[0])
        word_type = context.get_value_type(types.uint64)
        words = cgutils.alloca_once(builder, word_type, size=_STREAM_WORDS)
        for i in range(_STREAM_WORDS):
            word = cgutils.get_item_pointer(context, builder, sig.args[0], source,
                                            [context.get_constant(types.intp, i)])
            builder.store(builder.load(word), builder.gep(words, [cgutils.int32_t(i)]))
        copy = make_array(local)(context, builder)
        populate_array(copy, data=words, shape=[context.get_constant(types.intp, _STREAM_WORDS)],
                       strides=[context.get_constant(types.intp, 8)],
                       itemsize=context.get_constant(types.intp, 8), meminfo=None)
        return copy._getvalue()

    return local(state), codegen


@intrinsic
def borrowed(typingctx, array):
    """``array`` without its counter: the same data, shape and strides, for a loop that
    makes views of an array its caller keeps alive; ``None`` stays ``None`` (an absent
    optional array, :mod:`tabular._numba.optional`)."""
    if isinstance(array, types.NoneType):
        return array(array), lambda context, builder, sig, args: args[0]
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, sig, args):
        view = make_array(sig.args[0])(context, builder, args[0])
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        view.parent = cgutils.get_null_value(view.parent.type)
        return view._getvalue()

    return array(array), codegen
