"""ament_python package kinodyn_control."""

from setuptools import find_packages, setup

package_name = "kinodyn_control"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    description="ros2_control-style hardware components and controller manager for kinodyn",
    license="Apache-2.0",
    entry_points={
        "console_scripts": ["control_node = kinodyn_control.control_node:main"],
        "kinodyn_control.hardware": [
            "kinodyn_control/GenericSystem = kinodyn_control.hardware.generic_system:GenericSystem",
            "kinodyn_control/SimulatedSystem = kinodyn_control.hardware.simulated_system:SimulatedSystem",
            "kinodyn_control/RealDeviceSkeleton = "
            "kinodyn_control.hardware.real_device_skeleton:RealDeviceSkeleton",
            "kinodyn_control/CanMotorSystem = kinodyn_control.hardware.can_motor:CanMotorSystem",
            "kinodyn_control/SerialImuSensor = kinodyn_control.hardware.serial_imu:SerialImuSensor",
        ],
        "can.interface": [  # python-can plugin: the emulators' bus between processes
            "kinodyn_unixcan = kinodyn_control.hardware.emulators.unix_can:UnixCanBus",
        ],
        "kinodyn_control.controllers": [
            "kinodyn_control/JointStateBroadcaster = "
            "kinodyn_control.controllers.joint_state_broadcaster:JointStateBroadcaster",
            "kinodyn_control/ImuSensorBroadcaster = "
            "kinodyn_control.controllers.imu_broadcaster:ImuSensorBroadcaster",
            "kinodyn_control/ForwardCommandController = "
            "kinodyn_control.controllers.forward_command:ForwardCommandController",
            "kinodyn_control/JointPDController = kinodyn_control.controllers.joint_pd:JointPDController",
            "kinodyn_control/LeggedStateEstimator = "
            "kinodyn_control.controllers.legged_state_estimator:LeggedStateEstimator",
            "kinodyn_control/WholeBodyController = "
            "kinodyn_control.controllers.whole_body_controller:WholeBodyController",
        ],
    },
)
