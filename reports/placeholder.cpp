// replaced by the reports library
