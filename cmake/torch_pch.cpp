// Compiled only to produce the shared precompiled header for torch/torch.h.
