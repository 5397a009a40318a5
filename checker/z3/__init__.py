"""The Z3 layer: the translator (translate.py), the solver wrapper (solver.py), the checks built
on them (checks.py: init, induction step, bounded model checking), trace certification
(certify.py) and the ``prove`` / ``bmc`` commands (commands.py).

Everything is derived from the spec objects; no module here states the protocol itself.
"""
