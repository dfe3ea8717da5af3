"""The pure-Python reference implementation of the record codec.

:mod:`kafkawire._pure.codec` exposes exactly the module interface of docs/CODEC-SPEC.md. It is the
oracle the compiled core (``kafkawire._codec``) is tested against, so it favours being obviously
correct over being fast. ``KAFKAWIRE_PURE=1`` makes :mod:`kafkawire` use it.
"""
