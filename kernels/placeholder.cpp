// replaced by the kernels library
