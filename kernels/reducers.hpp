#pragma once
// The reducers, one file per family (kernels/reducers/): an op and an
// accumulator composed into what one element adds to a thread's state and how
// the last partial becomes the op's outputs (reducers/reducer_interface.hpp).
// The accumulators, as the shapes and their tests compose them with the reducers.
#include "kernels/accumulators/compensated_sum.hpp"
#include "kernels/accumulators/exact_binned_squares.hpp"
#include "kernels/accumulators/exact_moments.hpp"
#include "kernels/accumulators/exact_sum.hpp"
#include "kernels/accumulators/exact_value_window.hpp"
#include "kernels/accumulators/extremum.hpp"
#include "kernels/accumulators/pairwise_sum.hpp"
#include "kernels/accumulators/rounded_sum.hpp"
#include "kernels/accumulators/welford.hpp"
#include "kernels/reducers/extremum_reducer.hpp"
#include "kernels/reducers/logsumexp_reducer.hpp"
#include "kernels/reducers/moments_reducers.hpp"
#include "kernels/reducers/reducer_interface.hpp"
#include "kernels/reducers/row_norm.hpp"
#include "kernels/reducers/sum_reducer.hpp"
