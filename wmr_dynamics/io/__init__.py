"""Input/output: plots, result files (and, later, rosbag2/MCAP logs)."""
