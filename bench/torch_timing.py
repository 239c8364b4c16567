"""The GPU time of a call, by CUDA events on torch's current stream: the timing
that bench/exact_ops_bench.py and bench/torch_ops_evaluate.py share."""
import statistics

import torch


def gpu_ms(fn, repeats, batch=10):
    """Milliseconds per call of fn() on the current stream: the median over `repeats` batches of
    `batch` calls between two CUDA events, after warm-up. Within a batch the host enqueues the next
    call while the GPU runs the last, so the host's cost per call is hidden where it is shorter than
    the kernels (as in a training step)."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / batch)
    return statistics.median(times)
