"""IAM Kinds (iam.cnrm.cloud.google.com/v1beta1): IAM policies on any resource."""
