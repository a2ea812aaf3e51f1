"""The state estimator's ROS side shared by the `state_estimator` node and the LeggedStateEstimator
controller: input merging, stamps, message conversion and the pipeline around the core filter."""
