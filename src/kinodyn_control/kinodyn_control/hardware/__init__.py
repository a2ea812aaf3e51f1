"""Hardware components: lifecycle base classes, URDF description, mock and skeleton devices."""
