"""Berth: a Kubernetes pod scheduler that places pods exactly like kube-scheduler, written as a kopf operator."""

__version__ = "0.1.0"
