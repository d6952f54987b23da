// Written by the ExecuTorch Arduino library generator.
//
// PyTorch's CMake generates this header from cmake_macros.h.in; ExecuTorch's own builds
// define C10_USING_CUSTOM_GENERATED_MACROS instead, but Arduino compiles library sources with
// no per-library defines, so the header must exist. Every option is off: the library is
// linked statically and uses neither glog, gflags, NUMA nor ROCm.
#pragma once
