"""The state estimator on the ROS side: stamp-ordered merging, message conversion, the pipeline."""
