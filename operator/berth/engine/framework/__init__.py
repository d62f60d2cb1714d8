"""The scheduling framework: extension points, statuses, and the runtime that runs a profile's plugins."""
