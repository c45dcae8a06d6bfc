"""IPEM calibration of WMR motion models (Seegmiller 2014, Ch. 3): systematic and stochastic, online and
offline, from rosbag2/MCAP logs, CSV files or live topics.

- :mod:`~wmr_dynamics.calibration.log`: driving logs (encoders, IMU, GPS/INS) on one clock.
- :mod:`~wmr_dynamics.calibration.predict`: interval predictions, eqs. 3.3-3.4, 3.26, 3.56-3.58.
- :mod:`~wmr_dynamics.calibration.ipem`: covariance propagation (3.22-3.24), the stochastic measurement
  (3.28-3.38), the identification EKF (3.48-3.54) with gating (3.68), offline calibration (3.44-3.47).
- :mod:`~wmr_dynamics.calibration.calibrate`: one call from a log to the parameter YAML.
- :mod:`~wmr_dynamics.calibration.synthetic`: random drives recorded with simulated sensors.

Example::

    from wmr_dynamics import load_model
    from wmr_dynamics.calibration import calibrate, log_from_bag

    model = load_model("landtamer")
    result = calibrate(model, log_from_bag("drive.mcap", model), "enhanced", interval_s=2.0, out="cal.yaml")
    print(result.summary()["horizons"]["10 m"])
"""

from wmr_dynamics.calibration.calibrate import CalibrationResult, calibrate, params_mapping, write_params
from wmr_dynamics.calibration.ipem import OnlineIpem, OnlineSettings, calibrate_offline, evaluate, propagate
from wmr_dynamics.calibration.log import CalibrationError, DrivingLog, log_from_bag, log_from_csv, log_from_sensors
from wmr_dynamics.calibration.predict import Interval, Predictor, intervals

__all__ = ["CalibrationError", "CalibrationResult", "DrivingLog", "Interval", "OnlineIpem", "OnlineSettings",
           "Predictor", "calibrate", "calibrate_offline", "evaluate", "intervals", "log_from_bag", "log_from_csv",
           "log_from_sensors", "params_mapping", "propagate", "write_params"]
