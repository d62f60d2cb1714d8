"""Dynamic Resource Allocation (resource.k8s.io/v1): the objects and the device allocator.

The model (`classes`, `claims`, `requests`, `allocations`, `slices`, `values`) parses
DeviceClasses, ResourceClaims, ResourceClaimTemplates and ResourceSlices once; the
allocator (`allocator`, over `pools`, `search`, `rollback`, `counters`, `capacity`,
`constraints`, `results`, `allocated_state`) decides, as kube-scheduler v1.37 does, which
devices a pod's claims get on a node, failing as `errors` says. Device and class selectors
are CEL (`cel` over `cel_device`, `cel_library`, `cel_quantity`, `cel_semver`, `cel_source`), compiled once per expression and
handed to the allocator as its `selection.SelectorCompiler`.
"""
