// replaced by the accuracy library
