"""csi-translation-lib's in-tree → CSI translation, the parts kube-scheduler's plugins use:
volume handles for NodeVolumeLimits' counts, PV node affinity for VolumeBinding."""
