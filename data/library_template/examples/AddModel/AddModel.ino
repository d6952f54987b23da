// SPDX-License-Identifier: BSD-3-Clause
// Part of the ExecuTorch Arduino library generator.
//
// AddModel: one inference with portable kernels only. The model in model.h
// computes x + 1 on three floats, so [1, 2, 3] must come back as [2, 3, 4].
//
// link-modes: begin
// Link modes: not checked yet (`python -m generator check . --update-docs`
// writes here what each core's loader does with this sketch). If the board
// prints nothing, pick Tools > Link mode > Static.
// link-modes: end
//
// board-fit: begin (written by the build from model.h's arena; do not edit)
// Board fit: written here by the build from model.h's arena
// (model_pte_arena_bytes).
// board-fit: end

#include <ETModel.h>

#include <cstdlib>

#include "model.h"

// Everything the method needs at run time (its state and its intermediate
// tensors) comes from this arena. model.h says how much that is on a 32-bit
// board: model_pte_arena_bytes, derived from the .pte when model.h was written
// (its memory plan plus what loading the method allocates). If the arena is too
// small, begin() fails and says so; the "Arena:" line shows what the model took.
// The arena comes from malloc, not a static array: in the Dynamic link mode
// (the IDE's default) the board's loader copies a sketch's static data into its
// LLEXT heap (the UNO Q's: 128 KiB on cores before mid-2026; every board's: see
// the README's Boards section), while malloc takes from the
// firmware's own C heap. If malloc fails, begin() says the arena is too small.
static const size_t kArenaBytes = model_pte_arena_bytes;
static uint8_t* const arena = static_cast<uint8_t*>(malloc(kArenaBytes));

static ETModel model(model_pte, sizeof(model_pte), arena, arena ? kArenaBytes : 0);

static const float kInput[] = {1.0f, 2.0f, 3.0f};

// The runtime's own log lines (why a load failed, in its words).
extern "C" void et_arduino_log(const char* line) {
  Serial.print("ET| ");
  Serial.println(line);
}

static void printError() {
  Serial.print("ERROR: ");
  Serial.println(model.error());
}

static void addOne() {
  if (!model.begin()) {
    printError();
    return;
  }
  Serial.print("Model: ");
  Serial.print(static_cast<unsigned long>(sizeof(model_pte)));
  Serial.println(" bytes");

  const size_t count = sizeof(kInput) / sizeof(kInput[0]);
  if (!model.setInput(0, kInput, count) || !model.run()) {
    printError();
    return;
  }
  // How long the inference took, in microseconds of the board's clock.
  Serial.print("Inference: ");
  Serial.print(model.lastRunMicros());
  Serial.println(" us");
  const float* out = model.output();
  if (out == nullptr) {
    printError();
    return;
  }
  Serial.print("[1,2,3] + 1 = [");
  for (size_t i = 0; i < model.outputCount(); i++) {
    if (i > 0) {
      Serial.print(", ");
    }
    Serial.print(out[i]);  // two decimals
  }
  Serial.println("]");

  Serial.print("Arena: used ");
  Serial.print(static_cast<unsigned long>(model.arenaUsed()));
  Serial.print(" of ");
  Serial.print(static_cast<unsigned long>(model.arenaSize()));
  Serial.println(" bytes");
}

void setup() {
  Serial.begin(115200);
  delay(2000);  // time for a serial monitor to attach
  Serial.println("=== AddModel ===");
  addOne();
  Serial.println("=== DONE ===");
}

void loop() {
  delay(1000);
}
