"""Taylor coefficients of the kernels' short series (no trigonometric call where the argument is small).

``SIN_TAYLOR[k − 1]`` = (−1)ᵏ/(2k + 1)!, k = 1..6: sin t = t (1 + Σ SIN_TAYLOR[k − 1] t²ᵏ), i.e. also sin t / t;
``COS_TAYLOR[k − 1]`` = (−1)ᵏ/(2k)!, k = 1..7: cos t = 1 + Σ COS_TAYLOR[k − 1] t²ᵏ.  Used by the contact search
(``collision._sin_cos``) and the exponential map of the Euler step (``kinematics.state._half_angle``).
"""

from __future__ import annotations

import math

SIN_TAYLOR = tuple((-1.0) ** k / math.factorial(2 * k + 1) for k in range(1, 7))  # t³ … t¹³
COS_TAYLOR = tuple((-1.0) ** k / math.factorial(2 * k) for k in range(1, 8))  # t² … t¹⁴
