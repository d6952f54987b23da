// SPDX-License-Identifier: BSD-3-Clause
// Part of the ExecuTorch Arduino library generator.
//
// KeywordSpotting: an int8 DS-CNN keyword spotter run through the Cortex-M
// (CMSIS-NN) kernels. The input is the MFCC of a real one-second recording
// (49 frames x 10 coefficients), precomputed so no microphone is needed.
// The model scores twelve classes: silence, unknown and ten keywords.
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
#include <cstring>

#include "model.h"

// Pick the recording here: mfcc_<word>.h for word in yes, no, up, down, left,
// right, on, off, stop, go. Each defines test_input[490] and test_label.
#include "mfcc_yes.h"

// In the order of the model's output (its shape is [1, 12]).
static const char* const kLabels[] = {"silence", "unknown", "yes",  "no",
                                      "up",      "down",    "left", "right",
                                      "on",      "off",     "stop", "go"};
static const size_t kLabelCount = sizeof(kLabels) / sizeof(kLabels[0]);

// The method state plus a 16,000-byte planned buffer for the activations:
// model_pte_arena_bytes in model.h, derived from the .pte when model.h was
// written (30,150 bytes on a 32-bit board at ExecuTorch cff6f4dd; a smaller
// arena fails load_method with MemoryAllocationFailed). The Zephyr core keeps
// its own stack and heap in the same RAM (256 KB on the UNO Q), so the arena
// takes exactly what the model needs.
// The arena comes from malloc, not a static array: in the Dynamic link mode
// (the IDE's default) the board's loader copies a sketch's static data into its
// LLEXT heap (the UNO Q's: 128 KiB on cores before mid-2026; every board's: see
// the README's Boards section), while malloc takes from the
// firmware's own C heap. If malloc fails, begin() says the arena is too small.
static const size_t kArenaBytes = model_pte_arena_bytes;
static uint8_t* const arena = static_cast<uint8_t*>(malloc(kArenaBytes));

static ETModel model(model_pte, sizeof(model_pte), arena, arena ? kArenaBytes : 0);

// The runtime's own log lines (why a load failed, in its words).
extern "C" void et_arduino_log(const char* line) {
  Serial.print("ET| ");
  Serial.println(line);
}

static void printError() {
  Serial.print("ERROR: ");
  Serial.println(model.error());
}

static void spotKeyword() {
  Serial.print("Input: ");
  Serial.println(test_label);

  if (!model.begin()) {
    printError();
    return;
  }
  const size_t count = sizeof(test_input) / sizeof(test_input[0]);
  if (!model.setInput(0, test_input, count) || !model.run()) {
    printError();
    return;
  }
  // How long the inference took, in microseconds of the board's clock.
  Serial.print("Inference: ");
  Serial.print(model.lastRunMicros());
  Serial.println(" us");
  const float* scores = model.output();
  if (scores == nullptr) {
    printError();
    return;
  }
  if (model.outputCount() != kLabelCount) {
    Serial.print("ERROR: the model scores ");
    Serial.print(static_cast<unsigned long>(model.outputCount()));
    Serial.print(" classes, the sketch has ");
    Serial.print(static_cast<unsigned long>(kLabelCount));
    Serial.println(" labels");
    return;
  }
  for (size_t i = 0; i < kLabelCount; i++) {
    Serial.print("  [");
    Serial.print(kLabels[i]);
    Serial.print("]=");
    Serial.println(scores[i]);  // two decimals
  }

  const char* detected = kLabels[model.argmax()];
  Serial.print("Detected: ");
  Serial.println(detected);
  if (strcmp(detected, test_label) != 0) {
    Serial.print("ERROR: the recording is \"");
    Serial.print(test_label);
    Serial.println("\"");
  }

  Serial.print("Arena: used ");
  Serial.print(static_cast<unsigned long>(model.arenaUsed()));
  Serial.print(" of ");
  Serial.print(static_cast<unsigned long>(model.arenaSize()));
  Serial.println(" bytes");
}

void setup() {
  Serial.begin(115200);
  delay(2000);  // time for a serial monitor to attach
  Serial.println("=== KeywordSpotting ===");
  spotKeyword();
  Serial.println("=== DONE ===");
}

void loop() {
  delay(1000);
}
