"""Dynamic Resource Allocation (resource.k8s.io): devices, their CEL selectors and allocation."""
