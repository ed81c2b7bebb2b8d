"""Package data: the pinned Discovery documents, the asset-name table and the kind configs."""
