// SPDX-License-Identifier: BSD-3-Clause
// Part of the ExecuTorch Arduino library generator.
//
// Umbrella header: a sketch includes this (the header library.properties names
// and the IDE's Sketch > Include Library inserts) or ETModel.h, and gets the
// whole sketch API: the ExecuTorch runtime types it needs to load a .pte held in
// flash and run it, and ETModel.

#pragma once

// <variant> uses std::bad_variant_access, declared in <exception>. Some
// Arduino cores replace <new> with a version that does not pull <exception>
// in, so it has to come before any ExecuTorch header that includes <variant>.
#include <exception>

// Build switches the generated library is made for. A sketch or a board's
// build flags may still set them first.
#ifndef C10_USING_CUSTOM_GENERATED_MACROS
#define C10_USING_CUSTOM_GENERATED_MACROS
#endif
#ifndef ET_ENABLE_DEPRECATED_CONSTANT_BUFFER
#define ET_ENABLE_DEPRECATED_CONSTANT_BUFFER 0
#endif
#ifndef FLATBUFFERS_MAX_ALIGNMENT
#define FLATBUFFERS_MAX_ALIGNMENT 1024
#endif

// Older toolchains (GCC 7, still shipped by the mbed, Renesas and SAMD cores)
// reject the runtime's templates with long, unrelated errors. This header, which
// the generator renders from its table of those cores (generator/boards/old_cores.py),
// says what is wrong instead and names the board's arduino:zephyr board when it
// has one.
#include "executorch_board_check.h"

// Arduino.h on many cores defines these as function-like macros, which then
// rewrite declarations such as `T abs(T)` inside c10 and <complex>. Sketches
// can use std::abs, std::min, std::max and std::round instead.
#undef abs
#undef min
#undef max
#undef round

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/method_meta.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

// Where the runtime's log lines go (the library's platform layer calls it;
// by default they are dropped). A sketch that wants them defines it:
//   void et_arduino_log(const char* line) { Serial.println(line); }
// This declaration gives that definition C linkage, the name the platform
// layer calls, whether or not the sketch writes extern "C" itself.
extern "C" void et_arduino_log(const char* line);

// The sketch API, ETModel, last: it needs everything above. ETModel.h includes
// this header first; `#pragma once` in both ends the cycle whichever a sketch
// includes. A class of inline member functions and extern declarations: a
// sketch that makes no ETModel compiles none of it into its flash.
#include "ETModel.h"
