"""The error layout every legged filter's covariance follows (registry module doc): ``[p, v, theta, b_a, b_g,
d_1..d_K]``, the navigation error first, then 3 entries per foot in contact."""

NAV = 15
"""Size of the navigation error ``[p, v, theta, b_a, b_g]``; foot k occupies ``NAV + 3k .. NAV + 3k + 3``."""
P_, V_, TH_, BA_, BG_ = 0, 3, 6, 9, 12
"""First index of each navigation block."""
