// SPDX-License-Identifier: BSD-3-Clause
// Part of the ExecuTorch Arduino library generator.
//
// HelloExecuTorch: the smallest check that the library works on a board.
// Starts the runtime, loads the program in model.h (x + 1 on three floats)
// from flash and prints what it holds. Nothing is executed, so no arena.
//
// link-modes: begin
// Link modes: not checked yet (`python -m generator check . --update-docs`
// writes here what each core's loader does with this sketch). If the board
// prints nothing, pick Tools > Link mode > Static.
// link-modes: end

#include <ExecuTorch.h>

#include <cstdio>

#include "model.h"

using executorch::extension::BufferDataLoader;
using executorch::runtime::Program;
using executorch::runtime::Result;

// The runtime's own log lines (why a load failed, in its words).
extern "C" void et_arduino_log(const char* line) {
  Serial.print("ET| ");
  Serial.println(line);
}

static void printError(const char* call, executorch::runtime::Error status) {
  char text[80];
  snprintf(text, sizeof(text), "ERROR: %s failed (0x%lx)", call,
           static_cast<unsigned long>(status));
  Serial.println(text);
}

static void sayHello() {
  executorch::runtime::runtime_init();
  Serial.println("Runtime initialized.");

  static BufferDataLoader loader(model_pte, sizeof(model_pte));
  Result<Program> program = Program::load(&loader);
  if (!program.ok()) {
    printError("Program::load", program.error());
    return;
  }
  Serial.print("Model loaded: ");
  Serial.print(static_cast<unsigned long>(sizeof(model_pte)));
  Serial.println(" bytes");

  const size_t methods = program->num_methods();
  Serial.print("Methods: ");
  Serial.println(static_cast<unsigned long>(methods));
  for (size_t i = 0; i < methods; i++) {
    Result<const char*> name = program->get_method_name(i);
    if (!name.ok()) {
      printError("get_method_name", name.error());
      return;
    }
    Serial.print("Method ");
    Serial.print(static_cast<unsigned long>(i));
    Serial.print(": ");
    Serial.println(name.get());
  }
}

void setup() {
  Serial.begin(115200);
  delay(2000);  // time for a serial monitor to attach
  Serial.println("=== HelloExecuTorch ===");
  sayHello();
  Serial.println("=== DONE ===");
}

void loop() {
  delay(1000);
}
