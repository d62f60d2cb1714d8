"""Scoring maths shared by several plugins, as pure functions over score arrays."""
