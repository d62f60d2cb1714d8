"""The engine: one scheduling decision, made exactly like kube-scheduler, with no I/O.

Everything in here is pure: objects are parsed once into frozen model types, the
cluster is held in a structure-of-arrays `ClusterState`, and plugins judge all
candidate nodes of one pod at once.
"""
