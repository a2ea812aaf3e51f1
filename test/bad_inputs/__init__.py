"""The bad-input matrix: named bad inputs and faults, each classified from what happened.

``matrix`` holds the categories, the case and outcome types, the classifiers and the report; ``core_cases``
the in-process cases (core API, URDF, simulator); ``node_cases`` the topics and services of running nodes;
``process_cases`` node parameters, the launcher's graph files and command line, and physics faults, each in
its own process. docs/bad-input-matrix.md says how to run it and shows the latest matrix.
"""
