"""VolumeBinding, as kube-scheduler v1.37 runs it: binds and provisions PersistentVolumeClaims."""

from berth.engine.plugins.volume_binding.plugin import VolumeBinding, new_plugin

__all__ = ["VolumeBinding", "new_plugin"]
