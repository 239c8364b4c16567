// replaced by the reference library
