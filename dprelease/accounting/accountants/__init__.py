"""The accountants: one module per way of composing privacy loss (pure, approx, advanced,
zcdp), `base` (what an accountant provides) and `registry` (ACCOUNTANTS, `auto`).

Library code imports from the modules themselves.
"""
