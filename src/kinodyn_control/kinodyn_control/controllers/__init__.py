"""Controllers: broadcasters, forward command, joint PD, with watchdog and limits."""
